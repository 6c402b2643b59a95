// Gives every request a fresh server-generated id and echoes it on every response, errors
// included. A caller-sent X-Request-Id is not trusted: the id keys usage events, so it must be
// unique and ours.
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';

/** A fresh request id: `req_` and 32 hex digits. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newRequestId();
    c.set('requestId', id);
    c.header('x-request-id', id);
    await next();
  };
}
