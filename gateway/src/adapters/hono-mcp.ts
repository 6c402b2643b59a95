// The MCP endpoint (/mcp, Streamable HTTP) on the Hono app: every request is admitted like the
// API (an API key or OAuth access token as Bearer, with the `query` scope: mcp/mcp-admission.ts),
// then handed to the session layer (mcp/mcp-sessions.ts), whose tool calls run the query module's
// own call. Refusals before MCP starts are the API's error envelope; a 401 names the
// protected-resource metadata (RFC 9728) through which an MCP client finds our OAuth server.
// Tool calls inside a session usually arrive on the node:http fast path (adapters/node-mcp.ts).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { requestAddress } from '../http/request-address.js';
import { describedRoute } from '../http/route.js';
import { admitMcp, mcpRefusal } from '../mcp/mcp-admission.js';
import { manageBucket, spendRateLimit } from '../query/admission.js';
import { MCP_DELETE_ROUTE, MCP_GET_ROUTE, MCP_POST_ROUTE } from '../routes/mcp.js';

async function serveMcp(c: Context<AppEnv>): Promise<Response> {
  const { services } = c.var;
  const authorization = c.req.header('authorization');
  const address = requestAddress(c);
  try {
    const principal = await admitMcp(services, authorization, address);
    c.set('principal', principal);
    // Opening a session (no Mcp-Session-Id) spends the account's management bucket: sessions
    // hold memory, so they are not free to open. Tool calls spend their own, as queries.
    if (c.req.header('mcp-session-id') === undefined) {
      const limits = await spendRateLimit(services.rateLimiter, principal, manageBucket(principal));
      if (limits !== undefined) c.set('rateLimitHeaders', limits);
    }
    return await services.mcp.handle(c.req.raw, {
      principal,
      authorization: authorization as string,
      address,
      signal: () => c.req.raw.signal,
    });
  } catch (error) {
    const refusal = mcpRefusal(
      error,
      c.var.requestId,
      services.config.publicUrl,
      services.logger.child({ request_id: c.var.requestId }),
    );
    return new Response(refusal.body, { status: refusal.status, headers: refusal.headers });
  }
}

/** Registers /mcp (POST, GET for the notification stream, DELETE to end a session), described by routes/mcp.ts. */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const config of [MCP_POST_ROUTE, MCP_GET_ROUTE, MCP_DELETE_ROUTE])
    describedRoute(app, config, serveMcp);
}
