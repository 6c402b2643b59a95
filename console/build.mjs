// Builds the web console into console/dist: one JavaScript bundle (React, uPlot and the pages,
// minified, for browsers from 2022 on) and one stylesheet, plus index.html naming them by content
// hash so a new build is never served from a stale cache. Runs at `npm ci` (the root `prepare`
// script) and again at `npm start` when a source changed: both skip the work when dist matches
// the sources (a hash of every input is kept in dist/.build-hash). Prints the gzipped size of
// what a browser downloads. Nothing here runs inside the gateway.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
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
    outdir: 'out',
    logLevel: 'warning',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new Error('the console build made no app.js or app.css');
  await rm(CONSOLE_DIST, { recursive: true, force: true });
  await mkdir(join(CONSOLE_DIST, 'assets'), { recursive: true });
  const jsName = `app-${short(js.contents)}.js`;
  const cssName = `app-${short(css.contents)}.css`;
  await writeFile(join(CONSOLE_DIST, 'assets', jsName), js.contents);
  await writeFile(join(CONSOLE_DIST, 'assets', cssName), css.contents);
  const template = await readFile(join(ROOT, 'index.html'), 'utf8');
  await writeFile(
    join(CONSOLE_DIST, 'index.html'),
    template.replace('%APP_JS%', `/assets/${jsName}`).replace('%APP_CSS%', `/assets/${cssName}`),
  );
  await writeFile(marker, hash);
  const jsGzip = gzipSync(js.contents, { level: 9 }).length;
  const cssGzip = gzipSync(css.contents, { level: 9 }).length;
  const ms = performance.now() - started;
  return {
    built: true,
    ms,
    js: { bytes: js.contents.length, gzip: jsGzip },
    css: { bytes: css.contents.length, gzip: cssGzip },
  };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await buildConsole({ force: process.argv.includes('--force') });
  if (!result.built) {
    console.log(`console: up to date (${Math.round(result.ms)} ms)`);
  } else {
    console.log(
      `console: built in ${Math.round(result.ms)} ms — JavaScript ${kb(result.js.bytes)} (${kb(result.js.gzip)} gzipped, budget ${kb(JS_BUDGET_BYTES)}), CSS ${kb(result.css.bytes)} (${kb(result.css.gzip)} gzipped)`,
    );
    if (result.js.gzip > JS_BUDGET_BYTES) {
      console.error(`console: the JavaScript bundle is over its ${kb(JS_BUDGET_BYTES)} gzipped budget`);
      process.exitCode = 1;
    }
  }
}
