// Bearer authentication and scope checks. The credential is verified by the injected
// Authenticator (key checksum first, then an in-process cache, then the store), so a mistyped
// key never costs a store lookup.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Scope } from '../http/app-env.js';
import { ApiError } from '../http/api-error.js';

/** Authenticates the request and requires `scope`; sets `c.var.principal`. */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    const principal = await c.var.services.auth.authenticate(c.req.header('authorization'));
    if (!principal.scopes.includes(scope)) {
      throw new ApiError('FORBIDDEN', `This key lacks the "${scope}" scope.`);
    }
    c.set('principal', principal);
    await next();
  };
}
