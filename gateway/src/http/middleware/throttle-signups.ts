// The sign-up throttle (docs/design.md §4, abuse limits): QUARRY_SIGNUPS_PER_HOUR sign-ups per client
// address (security/client-address.ts), at most that many at once, in the gateway's rate limiter,
// so the allowance is shared by every instance when they share Redis. Without it one client made
// 200 accounts in 0.74 s, each with an all-scope key.
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../errors/api-error.js';
import { rateLimitHeaders } from '../../rate-limit/rate-limit-headers.js';
import type { RateLimitPolicy } from '../../rate-limit/rate-limiter.js';
import type { AppEnv } from '../app-env.js';
import { requestAddress } from '../request-address.js';

/** The name of the rate-limit policy in the `RateLimit` headers of a sign-up. */
export const SIGNUP_POLICY_NAME = 'signup';

const policies = new Map<number, RateLimitPolicy>();

function policyFor(perHour: number): RateLimitPolicy {
  let policy = policies.get(perHour);
  if (policy === undefined) {
    policy = { limit: perHour, windowSeconds: 3600, burst: perHour };
    policies.set(perHour, policy);
  }
  return policy;
}

/** Spends one sign-up of the client's address; RATE_LIMIT_EXCEEDED (429) when none is left. */
export function throttleSignups(): MiddlewareHandler<AppEnv> {
  return async function throttleSignupsMiddleware(c, next) {
    const { config, rateLimiter } = c.var.services;
    // A closed sign-up is refused by the route without spending anyone's allowance.
    if (config.signup === 'closed') return next();
    const policy = policyFor(config.signupsPerHour);
    const address = requestAddress(c);
    const decision = await rateLimiter.check(`signup:${address}`, policy);
    const headers = rateLimitHeaders(policy, decision, SIGNUP_POLICY_NAME);
    if (!decision.allowed) {
      throw new ApiError(
        'RATE_LIMIT_EXCEEDED',
        `Too many sign-ups from this address (${policy.limit} an hour); retry in ${Math.ceil(decision.retryAfterSeconds)} s.`,
        { retryAfter: decision.retryAfterSeconds, headers: { ...headers } },
      );
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}
