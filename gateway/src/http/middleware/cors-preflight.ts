// The CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) of a query
// route. A preflight carries no credential (the Fetch standard), so it cannot know which origins
// the caller's token allows: it lets the browser send the request, and the request itself is
// decided by the query call (query/embed-call.ts): served with `Access-Control-Allow-Origin` only
// for an origin its credential allows, refused otherwise with 403 and no CORS header, so the page
// reads nothing and nothing runs or is charged. Any other OPTIONS is left to the router.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';

/** The request headers a page may send to a query route. */
export const CORS_ALLOWED_HEADERS =
  'authorization, content-type, idempotency-key, if-none-match, cache-control';

/** Answers the preflight of a query route served with `method`. */
export function corsPreflight(method: 'GET' | 'POST'): MiddlewareHandler<AppEnv> {
  return async function corsPreflightMiddleware(c, next) {
    const origin = c.req.header('origin');
    const asked = c.req.header('access-control-request-method');
    if (c.req.method !== 'OPTIONS' || origin === undefined || asked === undefined) return next();
    const headers: Record<string, string> = {
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      'cache-control': 'no-store',
    };
    if (asked === method) {
      headers['access-control-allow-origin'] = origin;
      headers['access-control-allow-methods'] = method;
      headers['access-control-allow-headers'] = CORS_ALLOWED_HEADERS;
      headers['access-control-max-age'] = '600';
    }
    return new Response(null, { status: 204, headers });
  };
}
