// The node:http side of the query module: `POST /v1/query` served straight on node:http, without
// building fetch Request/Response objects or walking the Hono middleware chain. It decides
// nothing itself: the body goes to the same query-call handler as the Hono route
// (adapters/hono-query.ts), and the QueryReply is written as it is. Only what is the transport's
// stays here: a request it cannot read cheaply (no Content-Length, chunked, over the body limit)
// goes to the Hono app, which answers it (413 included); and the request id, the abort signal,
// the metrics and the access line that the app's middleware give its own routes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newRequestId } from '../http/middleware/request-id.js';
import type { TraceSpan } from '../observability/tracing.js';
import type { QueryReply } from '../query/query-reply.js';
import type { GatewayServices } from '../services/gateway-services.js';
import { isBoundedPost, lazyAbortSignal, readBody, requestAddress } from './node-body.js';

/** A node:http request listener (the Hono app's, or one wrapping it). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

const ROUTE = '/v1/query';

/** Called just before an answer is written (the listener's `Connection: close` while draining). */
export type BeforeWrite = (res: ServerResponse) => void;

async function serve(
  services: GatewayServices,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  beforeWrite: BeforeWrite,
) {
  const started = performance.now();
  const requestId = newRequestId();
  const headers = req.headers;
  const { tracing } = services;
  const trace = tracing.enabled
    ? tracing.startRequest(`POST ${ROUTE}`, headers.traceparent as string | undefined)
    : undefined;
  const address = requestAddress(req, services.config.trustProxyHops);
  const reply = await services.queryCall({
    requestId,
    address,
    started,
    headers: {
      authorization: headers.authorization,
      'content-type': headers['content-type'],
      'if-none-match': headers['if-none-match'],
      'cache-control': headers['cache-control'],
      pragma: headers.pragma as string | undefined,
      'idempotency-key': headers['idempotency-key'] as string | undefined,
      accept: headers.accept,
    },
    request: { method: 'POST', body },
    signal: lazyAbortSignal(res),
    trace,
  });
  // The caller hung up while the call ran: nothing can be written (logged and counted as 499).
  const aborted = res.destroyed;
  if (trace !== undefined) endRequestSpan(trace, reply, aborted);
  beforeWrite(res);
  res.writeHead(reply.status, reply.headers);
  if (reply.stream === undefined) res.end(reply.body);
  else await writeStreamed(reply, res);
  const logged = services.requests.logs(ROUTE);
  const length = logged ? reply.headers['content-length'] : undefined;
  services.requests.record({
    method: 'POST',
    route: ROUTE,
    status: reply.status,
    seconds: (performance.now() - started) / 1000,
    requestId,
    accountId: reply.principal?.accountId,
    errorCode: reply.errorCode,
    limitReason: reply.limitReason,
    aborted,
    ...(logged
      ? {
          address,
          userAgent: headers['user-agent'],
          bytes: length === undefined ? 0 : Number(length),
          cache: reply.headers['x-cache'],
          traceId: trace?.traceId,
        }
      : {}),
  });
}

/** Writes an export's body; a cut answer (the client gone, a failed write) destroys the response. */
async function writeStreamed(reply: QueryReply, res: ServerResponse): Promise<void> {
  try {
    await reply.stream?.(res);
    res.end();
  } catch {
    res.destroy();
  }
}

/** Ends a query's request span with its outcome, and answers with its `traceparent`. */
function endRequestSpan(trace: TraceSpan, reply: QueryReply, aborted: boolean): void {
  trace.setAttribute('http.route', ROUTE);
  trace.setAttribute('http.response.status_code', reply.status);
  if (reply.errorCode !== undefined) trace.setAttribute('quarry.error_code', reply.errorCode);
  if (aborted) trace.setAttribute('quarry.client_closed', true);
  const cache = reply.headers['x-cache'];
  if (cache !== undefined) trace.setAttribute('quarry.cache', cache);
  if (reply.status >= 500) trace.fail(new Error(reply.errorCode ?? `status ${reply.status}`));
  reply.headers.traceparent = trace.traceparent();
  trace.end();
}

/** Wraps the app's listener: POST /v1/query is served here, everything else by `fallback`. */
export function withQueryFastPath(
  services: GatewayServices,
  fallback: NodeListener,
  beforeWrite: BeforeWrite = () => {},
): NodeListener {
  const bodyLimit = services.config.bodyLimit;
  return function queryFastPath(req, res) {
    if (!isBoundedPost(req, ROUTE, bodyLimit)) {
      fallback(req, res);
      return;
    }
    readBody(req, (body) => void serve(services, req, res, body, beforeWrite));
  };
}
