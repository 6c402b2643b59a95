// Builds the web console into console/dist: one JavaScript bundle (React, uPlot and the pages,
// minified, for browsers from 2022 on), the chunks pages load on demand (the studio's YAML
// editor, CodeMirror) and one stylesheet, plus index.html naming them by content
// hash so a new build is never served from a stale cache. Runs at `npm ci` (the root `prepare`
// script) and again at `npm start` when a source changed: both skip the work when dist matches
// the sources (a hash of every input is kept in dist/.build-hash). Prints the gzipped size of
// what a browser downloads. Nothing here runs inside the gateway.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_DIST = join(ROOT, 'dist');
const SRC = join(ROOT, 'src');
/** Budget for JavaScript shipped to the browser, gzipped (issue 19). */
export const JS_BUDGET_BYTES = 250 * 1024;

async function filesUnder(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out.sort();
}

/** A hash of every input of the bundle: sources, this script and the installed versions. */
async function inputsHash() {
  const hash = createHash('sha256');
  const lock = join(ROOT, '..', 'package-lock.json');
  const inputs = [...(await filesUnder(SRC)), fileURLToPath(import.meta.url), join(ROOT, 'package.json')];
  for (const file of inputs) hash.update(relative(ROOT, file)).update(await readFile(file));
  try {
    hash.update(await readFile(lock));
  } catch {
    // Outside the repository there is no lockfile: the sources decide alone.
  }
  return hash.digest('hex');
}

const short = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 12);

/**
 * Builds the console unless dist is current. Resolves with what it did and the sizes.
 * @param {{ force?: boolean, quiet?: boolean }} [options]
 */
export async function buildConsole(options = {}) {
  const started = performance.now();
  const hash = await inputsHash();
  const marker = join(CONSOLE_DIST, '.build-hash');
  if (!options.force) {
    const built = await readFile(marker, 'utf8').catch(() => '');
    if (built === hash) return { built: false, ms: performance.now() - started };
  }
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: join(SRC, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    conditions: ['@quarry/source'],
    legalComments: 'none',
    write: false,
    // Code loaded with import() (the studio's YAML editor) becomes chunks of its own, named by
    // content hash, so the other pages never download it.
    splitting: true,
    outdir: 'out',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const js = result.outputFiles.find((f) => /\/app-[^/]*\.js$/.test(f.path));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new Error('the console build made no app.js or app.css');
  const chunks = result.outputFiles.filter((f) => f.path.endsWith('.js') && f !== js);
  // What the page loads at once: the entry and the chunks it imports statically (esbuild's
  // shared helpers); the rest comes with import() when a page asks for it.
  const eager = new Set();
  const visit = (name) => {
    if (eager.has(name)) return;
    eager.add(name);
    for (const i of result.metafile.outputs[`out/${name}`]?.imports ?? []) {
      if (i.kind === 'import-statement') visit(basename(i.path));
    }
  };
  visit(basename(js.path));
  const isEager = (file) => eager.has(basename(file.path));
  await rm(CONSOLE_DIST, { recursive: true, force: true });
  await mkdir(join(CONSOLE_DIST, 'assets'), { recursive: true });
  const jsName = basename(js.path);
  const cssName = `app-${short(css.contents)}.css`;
  await writeFile(join(CONSOLE_DIST, 'assets', jsName), js.contents);
  await writeFile(join(CONSOLE_DIST, 'assets', cssName), css.contents);
  for (const chunk of chunks)
    await writeFile(join(CONSOLE_DIST, 'assets', basename(chunk.path)), chunk.contents);
  const lazy = chunks.filter((chunk) => !isEager(chunk));
  const eagerChunks = chunks.filter(isEager);
  const lazyBytes = lazy.reduce((sum, chunk) => sum + chunk.contents.length, 0);
  const lazyGzip = lazy.reduce((sum, chunk) => sum + gzipSync(chunk.contents, { level: 9 }).length, 0);
  const template = await readFile(join(ROOT, 'index.html'), 'utf8');
  await writeFile(
    join(CONSOLE_DIST, 'index.html'),
    template.replace('%APP_JS%', `/assets/${jsName}`).replace('%APP_CSS%', `/assets/${cssName}`),
  );
  await writeFile(marker, hash);
  const eagerFiles = [js, ...eagerChunks];
  const jsBytes = eagerFiles.reduce((sum, f) => sum + f.contents.length, 0);
  const jsGzip = eagerFiles.reduce((sum, f) => sum + gzipSync(f.contents, { level: 9 }).length, 0);
  const cssGzip = gzipSync(css.contents, { level: 9 }).length;
  const ms = performance.now() - started;
  return {
    built: true,
    ms,
    js: { bytes: jsBytes, gzip: jsGzip },
    css: { bytes: css.contents.length, gzip: cssGzip },
    lazy: { bytes: lazyBytes, gzip: lazyGzip, chunks: lazy.length },
  };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await buildConsole({ force: process.argv.includes('--force') });
  if (!result.built) {
    console.log(`console: up to date (${Math.round(result.ms)} ms)`);
  } else {
    console.log(
      `console: built in ${Math.round(result.ms)} ms — JavaScript ${kb(result.js.bytes)} (${kb(result.js.gzip)} gzipped, budget ${kb(JS_BUDGET_BYTES)}), CSS ${kb(result.css.bytes)} (${kb(result.css.gzip)} gzipped); loaded on demand: ${kb(result.lazy.bytes)} (${kb(result.lazy.gzip)} gzipped) in ${result.lazy.chunks} chunks`,
    );
    if (result.js.gzip > JS_BUDGET_BYTES) {
      console.error(`console: the JavaScript bundle is over its ${kb(JS_BUDGET_BYTES)} gzipped budget`);
      process.exitCode = 1;
    }
  }
}
