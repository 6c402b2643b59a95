// The gate every password hash goes through. scrypt runs on libuv's thread pool, and so does
// DuckDB (every @duckdb/node-api call is a N-API async work item): without a bound, a flood of
// logins (each ~32 MiB and a few hundred ms of one thread) took all the pool's threads and the
// analytics behind them timed out. At most `concurrency` hashes run at once, leaving the rest of
// the pool to queries; up to `queue` more wait their turn, first come first served; past that a
// login, sign-up or password change is refused at once with 429 rather than waiting behind
// hashes that would outlast the caller's patience anyway. Per process: each instance owns its
// own thread pool.
import { ApiError } from '../errors/api-error.js';

export interface HashLimiterOptions {
  /** Hashes running at once (QUARRY_PASSWORD_HASH_CONCURRENCY). */
  readonly concurrency: number;
  /** Hashes waiting behind them before the next is refused (QUARRY_PASSWORD_HASH_QUEUE). */
  readonly queue: number;
  /** Seconds a refused caller is told to wait (default 1). */
  readonly retryAfterSeconds?: number;
}

export interface HashLimiterStats {
  readonly inFlight: number;
  readonly queued: number;
  /** Hashes refused since start. */
  readonly refused: number;
}

export interface HashLimiter {
  /** Runs `hash` when a slot is free; RATE_LIMIT_EXCEEDED at once when the queue is full. */
  run<T>(hash: () => Promise<T>): Promise<T>;
  /**
   * RATE_LIMIT_EXCEEDED now if a hash would be refused now: lets a login refuse before its
   * store lookups, so a flood of refused attempts costs the gateway next to nothing.
   */
  refuseIfFull(): void;
  stats(): HashLimiterStats;
}

export function createHashLimiter(options: HashLimiterOptions): HashLimiter {
  const concurrency = Math.max(1, options.concurrency);
  const capacity = Math.max(0, options.queue);
  const retryAfter = options.retryAfterSeconds ?? 1;
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let refused = 0;

  // A finished hash hands its slot straight to the oldest waiter, so inFlight never dips and
  // a newcomer cannot overtake the queue.
  function release(): void {
    const next = waiting.shift();
    if (next === undefined) inFlight -= 1;
    else next();
  }

  function busy(): ApiError {
    refused += 1;
    return new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `The gateway is busy checking passwords; retry in ${Math.ceil(retryAfter)} s.`,
      { retryAfter },
    );
  }

  async function run<T>(hash: () => Promise<T>): Promise<T> {
    if (inFlight < concurrency) {
      inFlight += 1;
    } else if (waiting.length < capacity) {
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      throw busy();
    }
    try {
      return await hash();
    } finally {
      release();
    }
  }

  function refuseIfFull(): void {
    if (inFlight >= concurrency && waiting.length >= capacity) throw busy();
  }

  return { run, refuseIfFull, stats: () => ({ inFlight, queued: waiting.length, refused }) };
}
