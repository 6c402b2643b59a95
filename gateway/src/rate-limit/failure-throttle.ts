// A throttle of failures (bad credentials, bad client secrets, bad operator tokens): only
// failures are counted, in a GCRA bucket per key; while a bucket is full every attempt under that
// key is refused with the time to wait, before any lookup. Checking costs nothing (cost 0 reads
// `remaining`); a failure spends one unit.
import type { RateLimiter, RateLimitPolicy } from './rate-limiter.js';

export interface FailureThrottle {
  /** Seconds to wait before `key` may try again, or 0 when it may try now. */
  lockedFor(key: string): Promise<number>;
  /** Counts a failure under `key`. */
  recordFailure(key: string): Promise<void>;
}

export function createFailureThrottle(limiter: RateLimiter, policy: RateLimitPolicy): FailureThrottle {
  return {
    async lockedFor(key) {
      const peek = await limiter.check(key, policy, 0);
      if (peek.allowed && peek.remaining >= 1) return 0;
      // A denied check writes nothing: this only asks how long until one more failure fits. If
      // one fits by now, that check spent it: the attempt is counted as if it failed (harmless).
      const next = await limiter.check(key, policy, 1);
      return next.allowed ? 0 : next.retryAfterSeconds;
    },
    async recordFailure(key) {
      await limiter.check(key, policy, 1);
    },
  };
}
