// `npm start`: seeds the DuckDB demo warehouse and starts the gateway at the same time (the
// embedded store takes longer to open than the seeding takes, so the demo is ready sooner than
// running them one after the other). Signals go to the gateway; its exit code is ours.
import { spawn } from 'node:child_process';

const node = [process.execPath, '--import', 'tsx', '--conditions=@quarry/source'];
const run = (script, flags = []) =>
  spawn(node[0], [...flags, ...node.slice(1), script], { stdio: 'inherit' });

/**
 * The gateway's V8 heap cap: QUARRY_HEAP_MB, or the result cache's bound plus 96 MiB. Without a
 * cap V8 on a large machine lets the heap grow lazily towards ~4 GB before collecting hard, so
 * resident memory keeps climbing under load long after the cache is full; the nearer the cap,
 * the sooner old space is collected (scenario f of `npm run bench`, 150,000 distinct-param calls
 * through the 64 MiB cache, RSS growth over idle at its peak: 112–155 MiB with + 128, 98–113
 * with + 96). The 96 MiB above the cache are for everything else: the idle gateway uses ~50 MiB
 * of heap, the rest is headroom for answers in flight.
 */
function heapMegabytes() {
  if (process.env.QUARRY_HEAP_MB) return Number(process.env.QUARRY_HEAP_MB);
  const cacheBytes = Number(process.env.QUARRY_CACHE_MAX_BYTES || 64 * 1024 * 1024);
  return Math.ceil(cacheBytes / 2 ** 20) + 96;
}

/**
 * V8's young generation: 8 MiB semi-spaces instead of 16. Under load V8 grows new space to its
 * maximum and keeps it; a request's garbage is tiny, so the larger one only adds 16 MiB of
 * resident memory (measured with `npm run bench:profile -w @quarry/bench -- --scenario memory`).
 */
const SEMI_SPACE_MB = 8;

const seed = run('examples/src/seed-demo-cli.ts');
const gateway = run('gateway/src/server.ts', [
  `--max-old-space-size=${heapMegabytes()}`,
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
]);

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
