// Authentication of the operator API (/v1/admin/…): the bearer must be QUARRY_ADMIN_TOKEN,
// compared in constant time. Without that setting the operator API does not exist: every admin
// route answers exactly as an unknown route does. An API key is never an admin, whatever it is.
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../errors/api-error.js';
import { constantTimeEqual } from '../../security/api-key.js';
import type { AppEnv } from '../app-env.js';
import { requestAddress } from '../request-address.js';

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="quarry-admin"' };

const refused = (message: string) => new ApiError('UNAUTHENTICATED', message, { headers: WWW_AUTHENTICATE });

/** Requires `Authorization: Bearer <QUARRY_ADMIN_TOKEN>`; 404 as for an unknown route when it is unset. */
export function adminAuth(): MiddlewareHandler<AppEnv> {
  return async function adminAuthMiddleware(c, next) {
    const token = c.var.services.config.adminToken;
    if (token === undefined || token === '') {
      // The same answer as the app's notFound handler gives for a path nothing serves.
      throw new ApiError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}.`);
    }
    // Guesses are counted per client address: a flood from one address is refused (429) while
    // the operator, from anywhere else, is not locked out.
    const { credentialFailures } = c.var.services;
    const bucket = `admin-failures:${requestAddress(c)}`;
    const wait = await credentialFailures.lockedFor(bucket);
    if (wait > 0) {
      throw new ApiError(
        'RATE_LIMIT_EXCEEDED',
        `Too many wrong operator tokens from your address; retry in ${Math.ceil(wait)} s.`,
        {
          retryAfter: wait,
        },
      );
    }
    const header = c.req.header('authorization');
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw refused('Send the operator token as "Authorization: Bearer <token>".');
    const credential = match[1] as string;
    // Compared even for an API key, so the answer takes the same time whatever was sent.
    const equal = constantTimeEqual(credential, token);
    if (!equal || credential.startsWith('qry_')) {
      await credentialFailures.recordFailure(bucket);
      throw refused('The operator token is wrong.');
    }
    await next();
  };
}

/**
 * For operations data (/metrics): with QUARRY_ADMIN_TOKEN set, only the operator token reads it
 * (it names routes, connections and cache sizes); without one, a single-machine gateway serves it
 * to anyone who can reach the port, as before.
 */
export function operatorWhenConfigured(): MiddlewareHandler<AppEnv> {
  const operator = adminAuth();
  return async function operatorWhenConfiguredMiddleware(c, next) {
    const token = c.var.services.config.adminToken;
    if (token === undefined || token === '') return next();
    return operator(c, next);
  };
}
