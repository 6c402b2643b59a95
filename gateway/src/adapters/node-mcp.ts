// The node:http side of the MCP endpoint: a `tools/call` inside an open session (POST /mcp with an
// Mcp-Session-Id this process holds) is served straight on node:http, without fetch objects or the
// Hono middleware chain, the way adapters/node-query.ts serves POST /v1/query. It decides nothing
// itself: admission is mcp/mcp-admission.ts, the call is mcp/mcp-sessions.ts's fastToolCall (the
// tools' own call, hence the query module's), and any other message of the session goes to the
// SDK's transport through McpSessions.handle, as the Hono route would send it. Requests it cannot
// read cheaply (no Content-Length, chunked, over the body limit, no or unknown session) go to
// `fallback` untouched. `adapters/mcp-paths.test.ts` compares both ways.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newRequestId } from '../http/middleware/request-id.js';
import { admitMcp, MCP_PATH, mcpRefusal } from '../mcp/mcp-admission.js';
import type { McpCaller } from '../mcp/mcp-tools.js';
import type { GatewayServices } from '../services/gateway-services.js';
import { isBoundedPost, lazyAbortSignal, readBody, requestAddress } from './node-body.js';
import type { BeforeWrite, NodeListener } from './node-query.js';

const header = (req: IncomingMessage, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The request as a fetch Request, for the SDK's transport (messages other than a plain tools/call). */
function webRequest(req: IncomingMessage, body: Buffer, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? MCP_PATH}`, {
    method: 'POST',
    headers,
    body,
    signal,
  });
}

async function serve(
  services: GatewayServices,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  beforeWrite: BeforeWrite,
): Promise<void> {
  const started = performance.now();
  const requestId = newRequestId();
  const signal = lazyAbortSignal(res);
  const authorization = req.headers.authorization;
  const address = requestAddress(req, services.config.trustProxyHops);
  let status: number;
  let headers: Record<string, string | string[]>;
  let text: string;
  let accountId: string | undefined;
  try {
    const admitted = admitMcp(services, authorization, address);
    const principal = admitted instanceof Promise ? await admitted : admitted;
    accountId = principal.accountId;
    // A plain tools/call is this request's only call: it takes the request's id as its own.
    const caller: McpCaller = {
      principal,
      authorization: authorization as string,
      address,
      signal,
      requestId,
    };
    const fast = services.mcp.fastToolCall(
      {
        sessionId: header(req, 'mcp-session-id') as string,
        accept: header(req, 'accept'),
        contentType: header(req, 'content-type'),
        protocolVersion: header(req, 'mcp-protocol-version'),
        body: body.toString('utf8'),
      },
      caller,
    );
    if (fast !== undefined) {
      const answer = await fast;
      ({ status, headers, body: text } = answer);
    } else {
      // Anything else may hold several calls: each gets its own id.
      const response = await services.mcp.handle(webRequest(req, body, signal()), {
        principal,
        authorization: authorization as string,
        address,
        signal,
      });
      status = response.status;
      headers = {};
      for (const [name, value] of response.headers) headers[name] = value;
      text = await response.text();
    }
  } catch (error) {
    const refusal = mcpRefusal(
      error,
      requestId,
      services.config.publicUrl,
      services.logger.child({ request_id: requestId }),
    );
    ({ status, headers, body: text } = refusal);
  }
  headers['x-request-id'] = requestId;
  beforeWrite(res, headers);
  res.writeHead(status, headers);
  res.end(text);
  services.requests.record({
    method: 'POST',
    route: MCP_PATH,
    status,
    seconds: (performance.now() - started) / 1000,
    requestId,
    accountId,
    address,
    userAgent: req.headers['user-agent'],
  });
}

/** Wraps a listener: POST /mcp of a session this process holds is served here, the rest by `fallback`. */
export function withMcpFastPath(
  services: GatewayServices,
  fallback: NodeListener,
  beforeWrite: BeforeWrite = () => {},
): NodeListener {
  const bodyLimit = services.config.bodyLimit;
  return function mcpFastPath(req, res) {
    const session = req.headers['mcp-session-id'];
    if (
      !isBoundedPost(req, MCP_PATH, bodyLimit) ||
      typeof session !== 'string' ||
      !services.mcp.has(session)
    ) {
      fallback(req, res);
      return;
    }
    readBody(req, (body) => void serve(services, req, res, body, beforeWrite));
  };
}
