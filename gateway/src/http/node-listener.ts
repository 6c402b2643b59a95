// The gateway's node:http request listener: the query fast path in front of the Hono app (served
// through @hono/node-server). server.ts listens with it; tests start it on an ephemeral port to
// exercise exactly what production serves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { GatewayServices } from '../services/gateway-services.js';
import type { AppEnv } from './app-env.js';
import { withQueryFastPath } from './query-fast-path.js';

export interface GatewayListenerOptions {
  /** True once the server is draining: every answer then carries `Connection: close`. */
  readonly shuttingDown?: () => boolean;
  /** Serve cache hits of POST /v1/query on the fast path (default true). */
  readonly fastPath?: boolean;
}

export function createGatewayListener(
  app: OpenAPIHono<AppEnv>,
  services: GatewayServices,
  options: GatewayListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const shuttingDown = options.shuttingDown ?? (() => false);
  const hono = getRequestListener(async (request, env) => {
    const response = await app.fetch(request, env);
    if (shuttingDown()) response.headers.set('connection', 'close');
    return response;
  });
  return options.fastPath === false ? hono : withQueryFastPath(services, hono, { shuttingDown });
}
