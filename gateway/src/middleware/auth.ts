// Bearer authentication, scope checks and the per-key rate limit. The credential is verified by
// the injected Authenticator (key checksum first, then an in-process cache, then the store), so
// a mistyped key never costs a store lookup; the rate limit runs right after, before any work.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../http/api-error.js';
import type { AppEnv, Principal, Scope } from '../http/app-env.js';
import { rateLimitHeaders } from '../rate-limit/rate-limit-headers.js';

/** Applies the principal's rate limit; throws RATE_LIMIT_EXCEEDED when it is spent. */
export async function enforceRateLimit(
  c: Context<AppEnv>,
  principal: Principal,
  bucket: string,
): Promise<void> {
  const limit = principal.rateLimit;
  if (limit.unlimited) return;
  const decision = await c.var.services.rateLimiter.check(bucket, limit.policy);
  const headers: Record<string, string> = { ...rateLimitHeaders(limit.policy, decision) };
  c.set('rateLimitHeaders', headers);
  if (!decision.allowed) {
    throw new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${limit.policy.limit} requests per ${limit.policy.windowSeconds} s exceeded; retry in ${decision.retryAfterSeconds.toFixed(1)} s.`,
      { retryAfter: decision.retryAfterSeconds, headers },
    );
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
