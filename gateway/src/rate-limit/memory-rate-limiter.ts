// In-process GCRA limiter: one number (the TAT) per key in a bounded LRU. Used alone for a single
// gateway instance and as the Redis limiter's per-instance fallback. Synchronous and cheap: a
// check is one clock read, one LRU get/set and one small result literal (see the benchmark in
// memory-rate-limiter.bench.ts). A fresh literal rather than a reused object, because callers
// (the Redis limiter's fallback among them) may hold a decision across an await.
//
// Memory bound: at most `maxKeys` TATs (default 100,000 keys, a few MB). Evicting a key forgets
// its TAT, which is the same as the key being idle: it gets a full bucket again. A TAT is never
// more than one window plus the burst tolerance ahead of now, so an eviction can only make a key
// *less* limited, and only for at most one window; it can never block a key that should pass.
// Eviction is least-recently-*checked*, so the keys evicted first are the idle ones whose TAT has
// most likely already passed (for them forgetting changes nothing).
import { LRUCache } from 'lru-cache';
import { capacityMicros, decisionFromMicros, emissionIntervalMicros } from './gcra.js';
import type { Clock, RateLimitDecision, RateLimiter, RateLimitPolicy } from './rate-limiter.js';

export interface MemoryRateLimiterOptions {
  /** Most keys tracked at once; default 100,000. */
  readonly maxKeys?: number;
  /** Milliseconds on a monotonic scale; default `performance.now`. */
  readonly clock?: Clock;
}

/** A limiter whose `check` is always synchronous. */
export interface MemoryRateLimiter extends RateLimiter {
  check(key: string, policy: RateLimitPolicy, cost?: number): RateLimitDecision;
  /** Keys currently tracked (for metrics and tests). */
  readonly size: number;
}

export const DEFAULT_MAX_KEYS = 100_000;

export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const clock = options.clock ?? (() => performance.now());
  const tats = new LRUCache<string, number>({ max: options.maxKeys ?? DEFAULT_MAX_KEYS });

  return {
    check(key, policy, cost = 1) {
      const now = Math.round(clock() * 1000);
      const interval = emissionIntervalMicros(policy);
      const capacity = capacityMicros(policy, interval);
      const tat = tats.get(key);
      const base = tat === undefined || tat < now ? now : tat;
      const used = base + interval * cost - now;
      if (used <= capacity) {
        tats.set(key, base + interval * cost);
        return decisionFromMicros(true, policy.limit, Math.floor((capacity - used) / interval), used, 0);
      }
      const retryAfter = used - capacity;
      // With cost 1 this is always 0; a bigger cost may be denied while a few requests remain.
      const remaining = Math.max(0, Math.floor((capacity - (base - now)) / interval));
      return decisionFromMicros(false, policy.limit, remaining, retryAfter, retryAfter);
    },
    get size() {
      return tats.size;
    },
    async close() {
      tats.clear();
    },
  };
}
