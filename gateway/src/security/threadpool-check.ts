// Whether libuv's thread pool leaves queries their threads beside the password hashes. The pool's
// size is UV_THREADPOOL_SIZE as it was when node started (libuv's default 4 without it), and the
// gateway cannot change it then: `npm start` sets it (scripts/gateway-heap-flags.mjs), an operator
// running `node` directly must. Queries (DuckDB's calls) keep 4 threads once the hashes have theirs.

/** Threads of libuv's pool the gateway wants kept for everything but password hashes. */
const OTHER_THREADS = 4;

/** A warning to log at start when the pool is too small for `hashConcurrency`, else undefined. */
export function threadpoolWarning(
  env: Readonly<Record<string, string | undefined>>,
  hashConcurrency: number,
): string | undefined {
  const size = Number(env.UV_THREADPOOL_SIZE) || 4;
  const wanted = OTHER_THREADS + hashConcurrency;
  if (size >= wanted) return undefined;
  return `UV_THREADPOOL_SIZE is ${size}: password hashes (QUARRY_PASSWORD_HASH_CONCURRENCY=${hashConcurrency}) can take threads DuckDB's queries need during a flood of logins; start node with UV_THREADPOOL_SIZE=${wanted} (npm start does)`;
}
