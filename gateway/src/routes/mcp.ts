// The OpenAPI description of the MCP endpoint (/mcp): Model Context Protocol over Streamable
// HTTP, JSON-RPC 2.0 inside (docs/mcp.md). The protocol's messages are the MCP specification's,
// so the document names the transport, its credentials and the refusals before MCP starts (the
// API's error envelope); adapters/hono-mcp.ts serves it.
import { createRoute, z } from '@hono/zod-openapi';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  EVERY_RESPONSE_HEADERS,
  header,
} from '../http/common-schemas.js';
import { MCP_PATH } from '../mcp/mcp-admission.js';

const JsonRpcMessageSchema = z.record(z.string(), z.unknown()).openapi('JsonRpcMessage', {
  description:
    'A JSON-RPC 2.0 message of the Model Context Protocol (`initialize`, `tools/list`, `tools/call`, notifications); see docs/mcp.md',
});

const SESSION_HEADER = z.object({
  'mcp-session-id': z.string().optional().openapi({
    description: 'The session id the `initialize` answer carried (absent on `initialize` itself)',
  }),
  'mcp-protocol-version': z
    .string()
    .optional()
    .openapi({ description: 'The MCP protocol version negotiated by `initialize`' }),
});

const SESSION_HEADERS = {
  ...EVERY_RESPONSE_HEADERS,
  'Mcp-Session-Id': header('The session: send it back on every later request of the session'),
};

const unauthenticated = {
  ...AUTHED_ERRORS[401],
  headers: {
    ...AUTHED_ERRORS[401].headers,
    'WWW-Authenticate': header(
      '`Bearer realm="quarry", resource_metadata="<QUARRY_PUBLIC_URL>/.well-known/oauth-protected-resource/mcp"` (RFC 9728): where an MCP client finds the authorization server',
    ),
  },
};

const sessionNotFound = {
  description:
    'No such session in this gateway process (ended, expired, or opened with another credential): start a new one with `initialize`',
  content: { 'application/json': { schema: JsonRpcMessageSchema } },
};

const refusals = {
  ...AUTHED_ERRORS,
  401: unauthenticated,
  404: sessionNotFound,
};

/** POST /mcp: one JSON-RPC message (answered as JSON), or a notification (202). */
export const MCP_POST_ROUTE = createRoute({
  method: 'post',
  path: MCP_PATH,
  tags: ['MCP'],
  summary: 'Model Context Protocol: send a message (the analytics as tools)',
  description:
    'Streamable HTTP transport of MCP. `initialize` opens a session (its answer carries `Mcp-Session-Id`); `tools/list` lists every analytic the credential may call, plus `marketplace_search` and `marketplace_preview`; `tools/call` runs one exactly like `POST /v1/query` (charged, rate limited, cached). Send `Accept: application/json, text/event-stream`. Needs the `query` scope.',
  security: BEARER,
  request: {
    headers: SESSION_HEADER,
    body: { required: true, content: { 'application/json': { schema: JsonRpcMessageSchema } } },
  },
  responses: {
    200: {
      description: 'The JSON-RPC answer (a tool refusal is a result with `isError` and the error envelope)',
      headers: SESSION_HEADERS,
      content: { 'application/json': { schema: JsonRpcMessageSchema } },
    },
    202: { description: 'A notification or response, accepted', headers: EVERY_RESPONSE_HEADERS },
    ...refusals,
    ...BODY_ERRORS,
  },
});

/** GET /mcp: the session's stream of server notifications (tools/list_changed). */
export const MCP_GET_ROUTE = createRoute({
  method: 'get',
  path: MCP_PATH,
  tags: ['MCP'],
  summary: "Model Context Protocol: the session's notification stream",
  description:
    'Server-sent events for an open session: `notifications/tools/list_changed` when the catalog changes (a new analytic or version, a listing published, edited or unpublished). Send `Accept: text/event-stream`.',
  security: BEARER,
  request: { headers: SESSION_HEADER },
  responses: {
    200: {
      description: 'An event stream',
      headers: SESSION_HEADERS,
      content: { 'text/event-stream': { schema: z.string() } },
    },
    ...refusals,
  },
});

/** DELETE /mcp: ends a session. */
export const MCP_DELETE_ROUTE = createRoute({
  method: 'delete',
  path: MCP_PATH,
  tags: ['MCP'],
  summary: 'Model Context Protocol: end a session',
  security: BEARER,
  request: { headers: SESSION_HEADER },
  responses: {
    200: { description: 'Ended', headers: EVERY_RESPONSE_HEADERS },
    ...refusals,
  },
});
