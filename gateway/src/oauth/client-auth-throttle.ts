// Failed client authentications at the token endpoint are rate limited per client_id and client
// address with the gateway's rate limiter (shared by every instance when Redis is configured):
// guessing from one address is held to a trickle, and a stranger who knows a client_id (it is in
// every token's `sub`) can lock out only its own address, never the client itself. Only failures
// are counted: a client that authenticates correctly is never slowed down unless someone has just
// failed as it from the same address.
// The counting is rate-limit/failure-throttle.ts's.
import { createFailureThrottle } from '../rate-limit/failure-throttle.js';
import type { RateLimiter, RateLimitPolicy } from '../rate-limit/rate-limiter.js';

/** Default: 10 failures at once, then one per 6 s (10 a minute). */
export const DEFAULT_FAILURE_POLICY: RateLimitPolicy = { limit: 10, windowSeconds: 60, burst: 10 };

export interface ClientAuthThrottle {
  /** Seconds to wait before `clientId` may try again from `address`, or 0 when it may try now. */
  lockedFor(clientId: string, address: string): Promise<number>;
  /** Counts a failed authentication of `clientId` from `address`. */
  recordFailure(clientId: string, address: string): Promise<void>;
}

export function createClientAuthThrottle(
  limiter: RateLimiter,
  policy: RateLimitPolicy = DEFAULT_FAILURE_POLICY,
): ClientAuthThrottle {
  const failures = createFailureThrottle(limiter, policy);
  const bucket = (clientId: string, address: string) => `oauth-auth-failures:${clientId}:${address}`;
  return {
    lockedFor: (clientId, address) => failures.lockedFor(bucket(clientId, address)),
    recordFailure: (clientId, address) => failures.recordFailure(bucket(clientId, address)),
  };
}
