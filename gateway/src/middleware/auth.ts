// Bearer authentication, scope checks and the per-key rate limit. The credential is verified by
// the injected Authenticator (key checksum first, then an in-process cache, then the store), so
// a mistyped key never costs a store lookup; the rate limit runs right after, before any work.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../http/api-error.js';
import type { AppEnv, Principal, Scope } from '../http/app-env.js';
import { rateLimitHeaders } from '../rate-limit/rate-limit-headers.js';
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from '../rate-limit/rate-limiter.js';

/** The headers of a decision; throws RATE_LIMIT_EXCEEDED (carrying them) when it is a refusal. */
function limitHeadersOf(policy: RateLimitPolicy, decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = { ...rateLimitHeaders(policy, decision) };
  if (!decision.allowed) {
    throw new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${policy.limit} requests per ${policy.windowSeconds} s exceeded; retry in ${decision.retryAfterSeconds.toFixed(1)} s.`,
      { retryAfter: decision.retryAfterSeconds, headers },
    );
  }
  return headers;
}

type LimitHeaders = Record<string, string> | undefined;

/**
 * Spends one request of the principal's rate limit: the IETF rate-limit headers to send, or
 * undefined when the principal is unlimited; throws RATE_LIMIT_EXCEEDED (carrying the headers)
 * when it is spent. Shared by the middleware and the query fast path. When the limiter decides
 * synchronously (the in-process one), so does this: the fast path then spends no await on it.
 */
export function spendRateLimit(
  rateLimiter: RateLimiter,
  principal: Principal,
  bucket: string,
): LimitHeaders | Promise<LimitHeaders> {
  const limit = principal.rateLimit;
  if (limit.unlimited) return undefined;
  const decision = rateLimiter.check(bucket, limit.policy);
  return decision instanceof Promise
    ? decision.then((d) => limitHeadersOf(limit.policy, d))
    : limitHeadersOf(limit.policy, decision);
}

/** Applies the principal's rate limit; throws RATE_LIMIT_EXCEEDED when it is spent. */
export async function enforceRateLimit(
  c: Context<AppEnv>,
  principal: Principal,
  bucket: string,
): Promise<void> {
  try {
    const headers = await spendRateLimit(c.var.services.rateLimiter, principal, bucket);
    if (headers !== undefined) c.set('rateLimitHeaders', headers);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED')
      c.set('rateLimitHeaders', error.headers);
    throw error;
  }
}

/** Authenticates the request, requires `scope` and applies the key's rate limit; sets `c.var.principal`. */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    const principal = await c.var.services.auth.authenticate(c.req.header('authorization'));
    if (!principal.scopes.includes(scope)) {
      throw new ApiError('FORBIDDEN', `This key lacks the "${scope}" scope.`);
    }
    c.set('principal', principal);
    await enforceRateLimit(c, principal, principal.rateLimitBucket);
    await next();
    const headers = c.var.rateLimitHeaders;
    if (headers) for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}
