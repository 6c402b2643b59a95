// The gateway's node:http request listener: the query and MCP tool-call fast paths
// (adapters/node-query.ts, adapters/node-mcp.ts) in front of the Hono app (served through
// @hono/node-server). server.ts listens with it; tests start it on an ephemeral port to exercise
// exactly what production serves.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import type { GatewayServices } from '../services/gateway-services.js';
import { withMcpFastPath } from './node-mcp.js';
import { withQueryFastPath } from './node-query.js';

export interface GatewayListenerOptions {
  /** True once the server is draining: every answer then carries `Connection: close`. */
  readonly shuttingDown?: () => boolean;
  /** Serve POST /v1/query and MCP tool calls on the fast paths (default true). */
  readonly fastPath?: boolean;
}

export function createGatewayListener(
  app: OpenAPIHono<AppEnv>,
  services: GatewayServices,
  options: GatewayListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const shuttingDown = options.shuttingDown ?? (() => false);
  // Run as each answer is written (a request already in flight when draining starts gets it
  // too): node:http then sends `Connection: close` and closes the socket after the answer.
  // The fast paths hand over the headers they are about to write: the header goes in with them,
  // so their `writeHead` is node:http's cheaper kind, with no header set on the response before.
  const beforeWrite = (res: ServerResponse, headers?: Record<string, string | string[]>) => {
    // Every answer is JSON, text or a page of ours: never let a browser sniff it into something else.
    if (headers === undefined) res.setHeader('x-content-type-options', 'nosniff');
    else headers['x-content-type-options'] = 'nosniff';
    if (shuttingDown()) res.shouldKeepAlive = false;
  };
  const hono = getRequestListener(async (request, env) => {
    const response = await app.fetch(request, env);
    // This listener serves node:http only (server.ts), never http2.
    beforeWrite(env.outgoing as ServerResponse);
    return response;
  });
  if (options.fastPath === false) return hono;
  return withMcpFastPath(services, withQueryFastPath(services, hono, beforeWrite), beforeWrite);
}
