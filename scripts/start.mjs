// `npm start` (development: the TypeScript sources bundled by esbuild and run by plain node,
// rebuilt with the console when their sources changed, scripts/start-bundle.mjs; `npm run dev`
// runs them under tsx instead and restarts the gateway when a file it loaded changes) and
// `npm run start:prod` (`--compiled`: the output of `npm run build` under plain `node`, no tsx
// or TypeScript at run time, the console as built). Either way it starts the gateway, which
// prepares the DuckDB demo warehouse itself (a copy of the template `npm ci` made) while its store
// opens, and answers /readyz once it has. Signals go to the gateway; its exit code is ours.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { gatewayHeapFlags, gatewayMallocEnv, gatewayThreadpoolEnv } from './gateway-heap-flags.mjs';

const compiled = process.argv.includes('--compiled');
const watch = process.argv.includes('--watch');

/** The heap flags, read before anything is built: a wrong QUARRY_SEMI_SPACE_MB stops here, said plainly. */
let heapFlags;
try {
  heapFlags = gatewayHeapFlags(process.env);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}

if (compiled) {
  const missing = ['gateway/dist/server.js', 'examples/dist/index.js'].filter((file) => !existsSync(file));
  if (missing.length > 0) {
    console.error(`not built (${missing.join(', ')} missing): run \`npm run build\` first`);
    process.exit(1);
  }
  if (!existsSync('console/dist/index.html')) {
    console.error(
      'console: not built (console/dist), / will answer 404: run `npm run build -w @quarry/console`',
    );
  }
}

/** The console (and, for `npm start`, the gateway's bundle) rebuilt when their sources changed. */
async function prepare() {
  // Imported here, not at the top: a compiled start never loads a bundler.
  const consoleBuild = import('../console/build.mjs')
    .then(({ buildConsole }) => buildConsole())
    .then(
      (built) => {
        if (built.built) console.error(`console: rebuilt in ${Math.round(built.ms)} ms`);
      },
      // The API works without the console: say why / answers 404, and start anyway.
      (error) =>
        console.error(`console: the build failed, / will answer 404 until it is fixed: ${error.message}`),
    );
  const bundle = watch
    ? Promise.resolve(undefined)
    : import('./start-bundle.mjs')
        .then(({ buildGatewayBundle }) => buildGatewayBundle())
        .then(
          (built) => {
            if (built.built) console.error(`gateway: bundled in ${Math.round(built.ms)} ms`);
            return built.file;
          },
          (error) => {
            console.error(`gateway: the bundle failed (${error.message}); running the sources under tsx`);
            return undefined;
          },
        );
  const [, file] = await Promise.all([consoleBuild, bundle]);
  return file;
}

const bundle = compiled ? undefined : await prepare();
const [entry, loader] = compiled
  ? ['gateway/dist/server.js', []]
  : bundle !== undefined
    ? [bundle, []]
    : ['gateway/src/server.ts', ['--import', 'tsx', '--conditions=@quarry/source']];

const gateway = spawn(
  process.execPath,
  [...heapFlags, ...(watch ? ['--watch', '--watch-preserve-output'] : []), ...loader, entry],
  {
    stdio: 'inherit',
    env: { ...process.env, ...gatewayMallocEnv(process.env), ...gatewayThreadpoolEnv(process.env) },
  },
);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    gateway.kill(signal);
  });
}
gateway.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
