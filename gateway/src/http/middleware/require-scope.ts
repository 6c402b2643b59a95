// Authentication, scope check and rate limit of every authenticated route but the query routes
// (which the query module admits itself): both go through the same admission (query/admission.ts).
// Here the credential may also be the web console's session cookie (http/session-cookie.ts, CSRF
// checked for state changes); the query routes never read cookies, so a page of another site can
// never spend an account's credits through its browser.
import type { MiddlewareHandler } from 'hono';
import type { Scope } from '../../auth/principal.js';
import { ApiError } from '../../errors/api-error.js';
import { authorize, manageBucket, spendRateLimit } from '../../query/admission.js';
import type { AppEnv } from '../app-env.js';
import { requestAddress } from '../request-address.js';
import { credentialOf } from '../session-cookie.js';

/** Authenticates the request, requires `scope` and applies the rate limit; sets `c.var.principal`. */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    const principal = await authorize(c.var.services, credentialOf(c), scope, requestAddress(c));
    // A token a web page holds calls the query routes and nothing else (docs/embedding.md).
    if (principal.credential === 'embed_token') {
      throw new ApiError(
        'FORBIDDEN',
        'An embed token calls POST /v1/query and GET /v1/analytics/{name} only.',
      );
    }
    c.set('principal', principal);
    try {
      const bucket = scope === 'query' ? principal.rateLimitBucket : manageBucket(principal);
      const limitHeaders = await spendRateLimit(c.var.services.rateLimiter, principal, bucket);
      if (limitHeaders !== undefined) c.set('rateLimitHeaders', limitHeaders);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED')
        c.set('rateLimitHeaders', error.headers);
      throw error;
    }
    await next();
    const headers = c.var.rateLimitHeaders;
    if (headers) for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}
