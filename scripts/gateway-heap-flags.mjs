// The V8 heap flags (and the malloc and thread-pool settings) the gateway runs with under
// `npm start`, in one place: scripts/start.mjs passes them, and the bench and the large-result
// test run the gateway with the same flags (test/support/gateway-process.ts sets the thread pool
// for every end-to-end gateway).
import { availableParallelism } from 'node:os';

/**
 * Old space capped at QUARRY_HEAP_MB, or the result cache's bound plus 96 MiB. Without a cap V8
 * on a large machine lets the heap grow lazily towards ~4 GB before collecting hard, so
 * resident memory keeps climbing under load long after the cache is full; the nearer the cap,
 * the sooner old space is collected (scenario f of `npm run bench`, 150,000 distinct-param calls
 * through the 64 MiB cache, RSS growth over idle at its peak: 112–155 MiB with + 128, 98–113
 * with + 96). The 96 MiB above the cache are for everything else: the idle gateway uses ~50 MiB
 * of heap, the rest is headroom for answers in flight.
 *
 * Young generation: QUARRY_SEMI_SPACE_MB, by default 8 MiB semi-spaces instead of V8's 16. Under
 * load V8 grows new space to its maximum and keeps it, so each MiB here is resident. The choice
 * is a trade (bench/README.md, "Many connections"): with 8, a load that fills the cache with
 * distinct answers runs a fifth faster than with 32 and ~50 MiB smaller; but from about 512
 * connections at once each in-flight call outlives two scavenges and is promoted, which doubles
 * a cache hit's CPU, and 32 avoids it. (The gateway itself turns off V8's allocation-site
 * pretenuring, which did the same from ~128 connections: gateway/src/bootstrap/v8-flags.ts.)
 *
 * @param {Readonly<Record<string, string | undefined>>} env QUARRY_HEAP_MB, QUARRY_CACHE_MAX_BYTES, QUARRY_SEMI_SPACE_MB
 * @returns {string[]}
 */
export function gatewayHeapFlags(env) {
  const cacheBytes = Number(env.QUARRY_CACHE_MAX_BYTES || 64 * 1024 * 1024);
  const heapMb = env.QUARRY_HEAP_MB ? Number(env.QUARRY_HEAP_MB) : Math.ceil(cacheBytes / 2 ** 20) + 96;
  return [`--max-old-space-size=${heapMb}`, `--max-semi-space-size=${semiSpaceMb(env.QUARRY_SEMI_SPACE_MB)}`];
}

/**
 * QUARRY_SEMI_SPACE_MB as V8 takes it: a whole number of MiB from 1 to 256, 8 when unset.
 *
 * @param {string | undefined} value
 * @returns {number}
 */
export function semiSpaceMb(value) {
  if (value === undefined || value === '') return 8;
  const mb = Number(value);
  if (!Number.isInteger(mb) || mb < 1 || mb > 256)
    throw new Error(`QUARRY_SEMI_SPACE_MB must be a whole number of MiB from 1 to 256, got "${value}"`);
  return mb;
}

/**
 * glibc's malloc arenas for the gateway: at most 2 unless MALLOC_ARENA_MAX is already set. By
 * default glibc gives threads up to 8 arenas per core, and V8's background threads (compiling
 * PGlite's WebAssembly as it starts) leave pages in theirs that are never returned: with 2, the
 * embedded gateway holds 12–30 MiB less resident after start (`npm run bench:footprint -w
 * @quarry/bench`). The cache-hit path's CPU per request did not move beyond noise
 * (`bench:profile --scenario hit`, three pairs: +3% median). Ignored where malloc is not glibc's.
 *
 * @param {Readonly<Record<string, string | undefined>>} env MALLOC_ARENA_MAX
 * @returns {Record<string, string>}
 */
export function gatewayMallocEnv(env) {
  return { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || '2' };
}

/**
 * libuv's thread pool for the gateway: UV_THREADPOOL_SIZE as set, else libuv's default of 4
 * plus the password hashes allowed at once (QUARRY_PASSWORD_HASH_CONCURRENCY; by default a
 * quarter of the cores, at least 1, as gateway/src/config.ts computes it). scrypt and DuckDB's
 * queries share the pool, so the hashes get threads of their own and queries keep libuv's four.
 * It must be in the environment before node starts: libuv sizes the pool at its first use, which
 * comes before any of the gateway's code could set it.
 *
 * @param {Readonly<Record<string, string | undefined>>} env UV_THREADPOOL_SIZE, QUARRY_PASSWORD_HASH_CONCURRENCY
 * @returns {Record<string, string>}
 */
export function gatewayThreadpoolEnv(env) {
  if (env.UV_THREADPOOL_SIZE) return { UV_THREADPOOL_SIZE: env.UV_THREADPOOL_SIZE };
  const set = Number(env.QUARRY_PASSWORD_HASH_CONCURRENCY);
  const hashes = Number.isInteger(set) && set > 0 ? set : Math.max(1, Math.floor(availableParallelism() / 4));
  return { UV_THREADPOOL_SIZE: String(4 + hashes) };
}
