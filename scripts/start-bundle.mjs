// What `npm start` runs: the gateway's TypeScript sources (and the workspace packages it uses:
// the SDK, the connectors, the examples) bundled by esbuild into ES modules under plain node,
// instead of every module transformed and resolved through tsx's loader at each start (which took
// most of a restart's time before the gateway logged "starting"). Third-party packages stay
// imports from node_modules. Each module keeps its own `import.meta.url` (its source file's), so
// paths it resolves from its place (migrations, templates, the console, the example analytics)
// are what they are under tsx. What the sources import lazily (a connector's driver, Stripe,
// tracing's SDK) stays lazy: each dynamic import is its own chunk, with the third-party imports it
// holds (one file would hoist them all to its top and load them at every start). Rebuilt only when an input changed (a hash of every input is kept
// beside the bundle, like the console's build), in ~0.5 s; `npm ci` (the root's `prepare`) makes
// it. `node scripts/start-bundle.mjs` builds it and says so. `npm run dev` keeps tsx (its
// --watch follows the source files).
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'quarry');
/** The bundle `npm start` runs: its entry; its chunks (`chunk-<content hash>.mjs`) sit beside it. */
export const GATEWAY_BUNDLE = join(OUT_DIR, 'gateway-server.mjs');
/** A chunk no build references any more is deleted once this old: a gateway still running an older build may yet import it. */
const STALE_CHUNK_MS = 7 * 24 * 3600 * 1000;
const HASH_FILE = `${GATEWAY_BUNDLE}.inputs`;
/** The inputs' stamp (inputsStamp) when their contents last hashed to HASH_FILE's hash: `<stamp> <hash>`. */
const STAMP_FILE = `${GATEWAY_BUNDLE}.stamp`;
/** The workspaces whose sources the gateway's bundle holds. */
const SOURCE_DIRS = ['gateway/src', 'sdk-connector/src', 'examples/src'];

async function sourceFiles(dir) {
  const out = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (/\.(ts|mts|json)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

async function inputDirs() {
  const connectors = (await readdir(join(ROOT, 'connectors'), { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => `connectors/${e.name}/src`);
  return [...SOURCE_DIRS, ...connectors.sort()];
}

/** Every input: the sources, this script, the lockfile (installed versions). */
async function inputFiles() {
  const files = [fileURLToPath(import.meta.url), join(ROOT, 'package-lock.json')];
  for (const dir of await inputDirs()) files.push(...(await sourceFiles(join(ROOT, dir))));
  return files;
}

/** A hash of every input's contents. */
async function inputsHash(files) {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(relative(ROOT, file)).update('\0');
    hash.update(await readFile(file).catch(() => Buffer.alloc(0))).update('\0');
  }
  return hash.digest('hex');
}

/**
 * A hash of every input's path, size and modification time: what a start compares first, since
 * stat-ing the inputs costs a fraction of reading them (~10 of ~100 ms here). Any change to a
 * file, a checkout or an install included, changes its time or size; only when this differs are
 * the contents hashed.
 */
async function inputsStamp(files) {
  const stats = await Promise.all(files.map((file) => stat(file).catch(() => undefined)));
  const hash = createHash('sha256');
  files.forEach((file, i) => {
    const info = stats[i];
    hash.update(`${relative(ROOT, file)}\0${info?.size ?? -1}\0${info?.mtimeMs ?? -1}\0`);
  });
  return hash.digest('hex');
}

/** Bare imports of third-party packages stay imports; the workspace's own (`@quarry/…`) are bundled. */
const externals = {
  name: 'quarry-externals',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@quarry/') ? undefined : { path: args.path, external: true },
    );
  },
};

/** Each source module's `import.meta.url` stays its own file's URL inside the bundle. */
const ownUrl = {
  name: 'quarry-own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.(ts|mts)$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      return {
        contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: 'ts',
      };
    });
  },
};

/**
 * Builds the bundle unless it matches its inputs. Resolves with its path, whether it was built,
 * and the time taken.
 * @param {{ force?: boolean }} [options]
 */
export async function buildGatewayBundle(options = {}) {
  const started = performance.now();
  const files = await inputFiles();
  const stamp = await inputsStamp(files);
  const built = await readFile(HASH_FILE, 'utf8').catch(() => '');
  if (
    !options.force &&
    built !== '' &&
    (await readFile(STAMP_FILE, 'utf8').catch(() => '')) === `${stamp} ${built}`
  ) {
    return { file: GATEWAY_BUNDLE, built: false, ms: performance.now() - started };
  }
  const hash = await inputsHash(files);
  if (!options.force && built === hash) {
    await writeFile(STAMP_FILE, `${stamp} ${hash}`);
    return { file: GATEWAY_BUNDLE, built: false, ms: performance.now() - started };
  }
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { 'gateway-server': join(ROOT, 'gateway/src/server.ts') },
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    write: false,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@quarry/source'],
    // A map beside it for debuggers (`node --enable-source-maps` names the sources in stack
    // traces, but keeps the map in the heap: ~10 MiB more used, so npm start does not set it).
    sourcemap: 'linked',
    plugins: [externals, ownUrl],
    logLevel: 'warning',
  });
  await mkdir(OUT_DIR, { recursive: true });
  // Each file written aside and renamed into place, maps and chunks before the entry that imports
  // them: a start never reads half a bundle. Chunks are named by their content, so an older
  // build's entry still finds its own.
  const rank = (path) => (path.endsWith('.map') ? 0 : path === GATEWAY_BUNDLE ? 2 : 1);
  const outputs = [...result.outputFiles].sort((a, b) => rank(a.path) - rank(b.path));
  for (const file of outputs) {
    const temp = `${file.path}.tmp-${process.pid}`;
    await writeFile(temp, file.contents);
    await rename(temp, file.path);
  }
  await writeFile(HASH_FILE, hash);
  await writeFile(STAMP_FILE, `${stamp} ${hash}`);
  await removeStaleChunks(new Set(outputs.map((file) => file.path)));
  return { file: GATEWAY_BUNDLE, built: true, ms: performance.now() - started };
}

/** Deletes the chunks (and their maps) of earlier builds that no build has written for a week. */
async function removeStaleChunks(current) {
  const now = Date.now();
  for (const name of await readdir(OUT_DIR)) {
    const path = join(OUT_DIR, name);
    if (!name.startsWith('chunk-') || current.has(path)) continue;
    const info = await stat(path).catch(() => undefined);
    if (info !== undefined && now - info.mtimeMs > STALE_CHUNK_MS) await rm(path, { force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const result = await buildGatewayBundle();
    const shown = relative(process.cwd(), result.file);
    console.log(
      result.built
        ? `gateway bundle: built ${shown} in ${Math.round(result.ms)} ms`
        : `gateway bundle: ${shown} is current`,
    );
  } catch (error) {
    // Not fatal: `npm start` builds it, or falls back to tsx.
    console.error(`gateway bundle: not built (${error instanceof Error ? error.message : String(error)})`);
  }
}
