// GCRA (generic cell rate algorithm) arithmetic shared by the memory limiter and mirrored line by
// line in the Redis script. Times are integer microseconds so every comparison is exact (a Unix
// time in µs is ~1.8e15, well inside 2^53, so it is exact in a JS number and in Lua's double).
//
// Each key stores only its TAT (theoretical arrival time). The emission interval is
// T = windowSeconds / limit (rounded *up* to a whole µs, so rounding can only make a key
// stricter). A request of cost c is admitted when
//     max(TAT, now) + c·T − now ≤ T · max(1, burst)
// i.e. the bucket holds `burst` requests (at least one) and refills one per T: a key may spend
// `burst` at once, then one per T, so no window of `windowSeconds` ever admits more than
// `limit + burst` — the bound the issue states and the multi-instance test checks.
// Nothing is written for a denied request, so hammering a limited key does not push it further out.
import type { RateLimitDecision, RateLimitPolicy } from './rate-limiter.js';

export const MICROS_PER_SECOND = 1_000_000;

/** T in whole microseconds (at least 1). */
export function emissionIntervalMicros(policy: RateLimitPolicy): number {
  return Math.max(1, Math.ceil((policy.windowSeconds * MICROS_PER_SECOND) / policy.limit));
}

/** The bucket's capacity expressed in time: T × max(1, burst). */
export function capacityMicros(policy: RateLimitPolicy, interval: number): number {
  return interval * Math.max(1, policy.burst);
}

/** Builds the decision from the integer quantities both implementations compute. */
export function decisionFromMicros(
  allowed: boolean,
  limit: number,
  remaining: number,
  resetMicros: number,
  retryAfterMicros: number,
): RateLimitDecision {
  return {
    allowed,
    limit,
    remaining,
    resetSeconds: resetMicros / MICROS_PER_SECOND,
    retryAfterSeconds: retryAfterMicros / MICROS_PER_SECOND,
  };
}
