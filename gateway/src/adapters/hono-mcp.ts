// The MCP endpoint (/mcp, Streamable HTTP) on the Hono app: every request is authenticated like
// the API (an API key or OAuth access token as Bearer, with the `query` scope), then handed to the
// session layer (mcp/mcp-sessions.ts), whose tool calls run the query module's own call. Refusals
// before MCP starts are the API's error envelope; a 401 names the protected-resource metadata
// (RFC 9728) through which an MCP client finds our OAuth server, as the MCP authorization spec asks.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { errorResponse, toApiError } from '../http/error-response.js';
import { requestAddress } from '../http/request-address.js';
import { describedRoute } from '../http/route.js';
import { MCP_RESOURCE_METADATA_PATH } from '../mcp/mcp-sessions.js';
import { authorize, manageBucket, spendRateLimit } from '../query/admission.js';
import { MCP_DELETE_ROUTE, MCP_GET_ROUTE, MCP_POST_ROUTE } from '../routes/mcp.js';

/** The `WWW-Authenticate` challenge of a refusal (RFC 6750 §3, RFC 9728 §5.1). */
function challenge(c: Context<AppEnv>, code: 'UNAUTHENTICATED' | 'FORBIDDEN'): string {
  const metadata = `${c.var.services.config.publicUrl}${MCP_RESOURCE_METADATA_PATH}`;
  const base = `Bearer realm="quarry", resource_metadata="${metadata}"`;
  return code === 'FORBIDDEN' ? `${base}, error="insufficient_scope", scope="query"` : base;
}

async function serveMcp(c: Context<AppEnv>): Promise<Response> {
  const { services } = c.var;
  const authorization = c.req.header('authorization');
  try {
    const principal = await authorize(services, authorization, 'query', requestAddress(c));
    c.set('principal', principal);
    if (principal.credential === 'try_token') {
      throw new ApiError(
        'FORBIDDEN',
        'A try-token previews one analytic over /v1/query; connect with an API key or an OAuth access token.',
      );
    }
    // Opening a session (no Mcp-Session-Id) spends the account's management bucket: sessions
    // hold memory, so they are not free to open. Tool calls spend their own, as queries.
    if (c.req.header('mcp-session-id') === undefined) {
      const limits = await spendRateLimit(services.rateLimiter, principal, manageBucket(principal));
      if (limits !== undefined) c.set('rateLimitHeaders', limits);
    }
    return await services.mcp.handle(c.req.raw, {
      principal,
      authorization: authorization as string,
      address: requestAddress(c),
      signal: c.req.raw.signal,
    });
  } catch (error) {
    const apiError = toApiError(error, services.logger.child({ request_id: c.var.requestId }));
    const extra: Record<string, string> = {
      ...(apiError.code === 'RATE_LIMIT_EXCEEDED' ? apiError.headers : {}),
    };
    if (apiError.code === 'UNAUTHENTICATED' || apiError.code === 'FORBIDDEN')
      extra['www-authenticate'] = challenge(c, apiError.code);
    return errorResponse(apiError, c.var.requestId, extra);
  }
}

/** Registers /mcp (POST, GET for the notification stream, DELETE to end a session), described by routes/mcp.ts. */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const config of [MCP_POST_ROUTE, MCP_GET_ROUTE, MCP_DELETE_ROUTE])
    describedRoute(app, config, serveMcp);
}
