// The client address of a request, for limits counted per address (sign-ups, failed client
// authentications): the socket's peer, or behind QUARRY_TRUST_PROXY the address the trusted
// proxies saw (security/client-address.ts).
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { clientAddress } from '../security/client-address.js';
import type { AppEnv } from './app-env.js';

/** The socket's peer; undefined for `app.request()` in tests, which has no socket. */
function socketAddress(c: Context<AppEnv>): string | undefined {
  const env = c.env as { readonly incoming?: unknown } | undefined;
  return env?.incoming === undefined ? undefined : getConnInfo(c).remote.address;
}

/** The address a per-address limit counts this request against. */
export function requestAddress(c: Context<AppEnv>): string {
  return clientAddress(
    socketAddress(c),
    c.req.header('x-forwarded-for'),
    c.var.services.config.trustProxyHops,
  );
}
