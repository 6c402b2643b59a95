// The web console's session cookie and its CSRF defence. The cookie is `HttpOnly` (no script
// reads it), `SameSite=Strict` (no other site's page makes the browser send it), `Path=/`, and
// `Secure` (under the `__Host-` name) when the gateway is served over https: QUARRY_PUBLIC_URL is
// https, or a trusted proxy says the request came over https. A request authenticated by the
// cookie that changes anything (every method but GET, HEAD, OPTIONS) must also come from one of
// the gateway's own origins (`Origin`) and carry the session's CSRF token in `X-CSRF-Token`;
// otherwise it is 403 FORBIDDEN before any handler runs. An `Authorization` header always wins
// over the cookie: keys and tokens are not ambient, so they need no CSRF check.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ApiError } from '../errors/api-error.js';
import { csrfTokenMatches } from '../security/session-token.js';
import type { AppEnv } from './app-env.js';

const PLAIN_NAME = 'quarry_session';
const SECURE_NAME = '__Host-quarry_session';
/** The header a console page sends its session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The first value of a header a proxy may have appended to. */
function firstValue(value: string | undefined): string | undefined {
  return value?.split(',')[0]?.trim().toLowerCase();
}

/** Whether the browser reached the gateway over https. */
export function servedOverHttps(c: Context<AppEnv>): boolean {
  const { publicUrl, trustProxyHops } = c.var.services.config;
  if (publicUrl.startsWith('https:')) return true;
  if (trustProxyHops > 0) return firstValue(c.req.header('x-forwarded-proto')) === 'https';
  return new URL(c.req.url).protocol === 'https:';
}

/** The origins a console page of this gateway may be served from. */
function ownOrigins(c: Context<AppEnv>): Set<string> {
  const { publicUrl, trustProxyHops } = c.var.services.config;
  const url = new URL(c.req.url);
  const origins = new Set([new URL(publicUrl).origin, url.origin]);
  const host = c.req.header('host');
  if (host !== undefined) {
    origins.add(`http://${host}`);
    if (trustProxyHops > 0) origins.add(`https://${host}`);
  }
  return origins;
}

/** Refuses a state change whose `Origin` is missing or another site's. */
export function requireOwnOrigin(c: Context<AppEnv>): void {
  const origin = c.req.header('origin');
  if (origin === undefined || !ownOrigins(c).has(origin)) {
    throw new ApiError('FORBIDDEN', 'Cross-site request refused: the Origin is not this gateway.');
  }
}

/** The session token from the request's cookie, if any. */
export function sessionTokenOf(c: Context<AppEnv>): string | undefined {
  const token = getCookie(c, servedOverHttps(c) ? SECURE_NAME : PLAIN_NAME);
  return token === undefined || token === '' ? undefined : token;
}

/**
 * The `Authorization` value to authenticate: the header when sent, else the session cookie's
 * token, after the CSRF checks for a state change; undefined when the request carries neither.
 */
export function credentialOf(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('authorization');
  if (header !== undefined) return header;
  const token = sessionTokenOf(c);
  if (token === undefined) return undefined;
  if (!SAFE_METHODS.has(c.req.method)) {
    requireOwnOrigin(c);
    if (!csrfTokenMatches(token, c.req.header(CSRF_HEADER))) {
      throw new ApiError(
        'FORBIDDEN',
        'The CSRF token is missing or wrong: send the session’s csrf_token (GET /v1/session) in X-CSRF-Token.',
      );
    }
  }
  return `Bearer ${token}`;
}

/** Sets the session cookie. */
export function setSessionCookie(c: Context<AppEnv>, token: string, expiresAt: Date): void {
  const secure = servedOverHttps(c);
  // With prefix `host`, Hono names it __Host-quarry_session (SECURE_NAME).
  setCookie(c, PLAIN_NAME, token, {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    secure,
    expires: expiresAt,
    ...(secure ? { prefix: 'host' as const } : {}),
  });
}

/** Removes the session cookie from the browser. */
export function clearSessionCookie(c: Context<AppEnv>): void {
  const secure = servedOverHttps(c);
  deleteCookie(c, PLAIN_NAME, {
    path: '/',
    secure,
    httpOnly: true,
    sameSite: 'Strict',
    ...(secure ? { prefix: 'host' as const } : {}),
  });
}
