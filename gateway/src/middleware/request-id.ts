// Gives every request a fresh server-generated id and echoes it on every response, errors
// included. A caller-sent X-Request-Id is not trusted: the id keys usage events, so it must be
// unique and ours.
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';

/**
 * A fresh request id: `req_` and 32 hex digits, time-ordered like a UUIDv7: 12 digits of the
 * Unix time in milliseconds, then 20 random digits (74 random bits after the UUID's version and
 * variant). The id is the usage ledger's primary key, and a random key scatters every insert
 * over the whole index (a page split, and after each checkpoint a full-page image in the WAL,
 * per insert); time-ordered ids append at its right edge.
 */
export function newRequestId(): string {
  return `req_${Date.now().toString(16).padStart(12, '0')}${randomUUID().replaceAll('-', '').slice(12)}`;
}

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newRequestId();
    c.set('requestId', id);
    c.header('x-request-id', id);
    await next();
  };
}
