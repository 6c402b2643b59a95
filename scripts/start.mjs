// `npm start` (development: TypeScript sources under tsx, the console rebuilt when its sources
// changed; `npm run dev` also restarts the gateway when a file it loaded changes) and
// `npm run start:prod` (`--compiled`: the output of `npm run build` under plain `node`, no tsx
// or TypeScript at run time, the console as built). Either way it starts the gateway, which
// prepares the DuckDB demo warehouse itself (a copy of the template `npm ci` made) while its store
// opens, and answers /readyz once it has. Signals go to the gateway; its exit code is ours.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { gatewayHeapFlags, gatewayMallocEnv, gatewayThreadpoolEnv } from './gateway-heap-flags.mjs';

const compiled = process.argv.includes('--compiled');
const watch = process.argv.includes('--watch');

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
} else {
  try {
    // Imported here, not at the top: a compiled start never loads the console's bundler.
    const { buildConsole } = await import('../console/build.mjs');
    const built = await buildConsole();
    if (built.built) console.error(`console: rebuilt in ${Math.round(built.ms)} ms`);
  } catch (error) {
    // The API works without the console: say why / answers 404, and start anyway.
    console.error(`console: the build failed, / will answer 404 until it is fixed: ${error.message}`);
  }
}

const loader = compiled ? [] : ['--import', 'tsx', '--conditions=@quarry/source'];
const run = (script, flags = [], env = {}) =>
  spawn(process.execPath, [...flags, ...loader, script], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
const file = (name) => (compiled ? name.replace('/src/', '/dist/').replace(/\.ts$/, '.js') : name);

const gateway = run(
  file('gateway/src/server.ts'),
  [...gatewayHeapFlags(process.env), ...(watch ? ['--watch', '--watch-preserve-output'] : [])],
  { ...gatewayMallocEnv(process.env), ...gatewayThreadpoolEnv(process.env) },
);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    gateway.kill(signal);
  });
}
gateway.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
