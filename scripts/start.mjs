// `npm start`: seeds the DuckDB demo warehouse and starts the gateway at the same time (the
// embedded store takes longer to open than the seeding takes, so the demo is ready sooner than
// running them one after the other). Signals go to the gateway; its exit code is ours. The web
// console is rebuilt first when its sources changed since the last build (`npm ci` builds it;
// an unchanged build is a hash check of a few milliseconds).
import { spawn } from 'node:child_process';
import { buildConsole } from '../console/build.mjs';
import { gatewayHeapFlags } from './gateway-heap-flags.mjs';

try {
  const built = await buildConsole();
  if (built.built) console.error(`console: rebuilt in ${Math.round(built.ms)} ms`);
} catch (error) {
  // The API works without the console: say why / answers 404, and start anyway.
  console.error(`console: the build failed, / will answer 404 until it is fixed: ${error.message}`);
}

const node = [process.execPath, '--import', 'tsx', '--conditions=@quarry/source'];
const run = (script, flags = []) =>
  spawn(node[0], [...flags, ...node.slice(1), script], { stdio: 'inherit' });

const seed = run('examples/src/seed-demo-cli.ts');
const gateway = run('gateway/src/server.ts', gatewayHeapFlags(process.env));

seed.on('exit', (code) => {
  if (code !== 0) {
    console.error(`seeding the demo warehouse failed (exit ${code}); stopping`);
    gateway.kill('SIGTERM');
    process.exitCode = 1;
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    seed.kill(signal);
    gateway.kill(signal);
  });
}
gateway.on('exit', (code, signal) => {
  seed.kill('SIGTERM');
  process.exit(process.exitCode || (code ?? (signal ? 1 : 0)));
});
