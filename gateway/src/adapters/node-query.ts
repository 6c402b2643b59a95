// The node:http side of the query module: `POST /v1/query` and `GET /v1/analytics/{name}` served
// straight on node:http, without building fetch Request/Response objects or walking the Hono
// middleware chain. It decides nothing itself: the body (or the name and query string) goes to
// the same query-call handler as the Hono routes (adapters/hono-query.ts), and the QueryReply is
// written as it is. Only what is the transport's stays here: a request it cannot read cheaply (no
// Content-Length, chunked, over the body limit; a GET whose name needs decoding or that carries a
// body) goes to the Hono app, which answers it (413 included); the query string is read by
// Hono's own parser, so both ways see the same params; and the request id, the abort signal, the
// metrics and the access line that the app's middleware give its own routes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getQueryParams } from 'hono/utils/url';
import { newRequestId } from '../http/middleware/request-id.js';
import type { TraceSpan } from '../observability/tracing.js';
import type { QueryCallRequest } from '../query/query-call.js';
import type { QueryReply } from '../query/query-reply.js';
import type { GatewayServices } from '../services/gateway-services.js';
import { isBoundedPost, lazyAbortSignal, readBody, requestAddress } from './node-body.js';

/** A node:http request listener (the Hono app's, or one wrapping it). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

const ROUTE = '/v1/query';
/** GET /v1/analytics/{name}, as the app's router names it in metrics, traces and access lines. */
const ANALYTIC_ROUTE = '/v1/analytics/:name';
const ANALYTIC_PREFIX = '/v1/analytics/';
/**
 * A name read as it is sent: one path segment with nothing to decode, not a dot segment. Any
 * other name (percent-encoded, say) goes to the app, whose router decodes it.
 */
const PLAIN_NAME = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;
/**
 * A request target @hono/node-server passes on as sent (its own test): any other (non-ASCII,
 * spaces, dot segments) it normalises through `new URL`, so such a request goes to the app.
 */
const AS_SENT = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

/** The analytic call of a `GET /v1/analytics/{name}` the fast path can read, or undefined. */
function analyticGet(req: IncomingMessage): QueryCallRequest | undefined {
  const url = req.url;
  if (req.method !== 'GET' || url === undefined || !url.startsWith(ANALYTIC_PREFIX)) return undefined;
  // A GET with a body (the app ignores it) or a fragment: left to the app.
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined)
    return undefined;
  if (url.includes('#') || !AS_SENT.test(url) || DOT_SEGMENT.test(url)) return undefined;
  const mark = url.indexOf('?', ANALYTIC_PREFIX.length);
  const name = url.slice(ANALYTIC_PREFIX.length, mark === -1 ? undefined : mark);
  if (!PLAIN_NAME.test(name)) return undefined;
  // A null-prototype record, as the app's route builds: `?__proto__=…` is an unknown param.
  const query: Record<string, string | string[]> = Object.create(null);
  if (mark !== -1) {
    // Hono's own parser (its `c.req.queries()`): `+` and percent-escapes decoded alike.
    const all = getQueryParams(url) as Record<string, string[]>;
    for (const key of Object.keys(all)) {
      const values = all[key] as string[];
      query[key] = values.length === 1 ? (values[0] as string) : values;
    }
  }
  return { method: 'GET', name, query };
}

/**
 * Called just before an answer is written, with the headers it will be written with (the
 * listener's `X-Content-Type-Options`, and `Connection: close` while draining).
 */
export type BeforeWrite = (res: ServerResponse, headers: Record<string, string | string[]>) => void;

async function serve(
  services: GatewayServices,
  req: IncomingMessage,
  res: ServerResponse,
  request: QueryCallRequest,
  beforeWrite: BeforeWrite,
) {
  const started = performance.now();
  const requestId = newRequestId();
  const headers = req.headers;
  const { tracing } = services;
  const { method } = request;
  const route = method === 'POST' ? ROUTE : ANALYTIC_ROUTE;
  const trace = tracing.enabled
    ? tracing.startRequest(`${method} ${route}`, headers.traceparent as string | undefined)
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
      origin: headers.origin,
      host: headers.host,
      accept: headers.accept,
      prefer: headers.prefer as string | undefined,
    },
    request,
    signal: lazyAbortSignal(res),
    trace,
  });
  // The caller hung up while the call ran: nothing can be written (logged and counted as 499).
  const aborted = res.destroyed;
  if (trace !== undefined) endRequestSpan(trace, route, reply, aborted);
  beforeWrite(res, reply.headers);
  res.writeHead(reply.status, reply.headers);
  if (reply.stream === undefined) res.end(reply.body);
  else await writeStreamed(reply, res);
  const logged = services.requests.logs(route);
  const length = logged ? reply.headers['content-length'] : undefined;
  services.requests.record({
    method,
    route,
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
function endRequestSpan(trace: TraceSpan, route: string, reply: QueryReply, aborted: boolean): void {
  trace.setAttribute('http.route', route);
  trace.setAttribute('http.response.status_code', reply.status);
  if (reply.errorCode !== undefined) trace.setAttribute('quarry.error_code', reply.errorCode);
  if (aborted) trace.setAttribute('quarry.client_closed', true);
  const cache = reply.headers['x-cache'];
  if (cache !== undefined) trace.setAttribute('quarry.cache', cache);
  if (reply.status >= 500) trace.fail(new Error(reply.errorCode ?? `status ${reply.status}`));
  reply.headers.traceparent = trace.traceparent();
  trace.end();
}

/** Wraps the app's listener: POST /v1/query and GET /v1/analytics/{name} are served here, everything else by `fallback`. */
export function withQueryFastPath(
  services: GatewayServices,
  fallback: NodeListener,
  beforeWrite: BeforeWrite = () => {},
): NodeListener {
  const bodyLimit = services.config.bodyLimit;
  return function queryFastPath(req, res) {
    if (isBoundedPost(req, ROUTE, bodyLimit)) {
      readBody(req, (body) => void serve(services, req, res, { method: 'POST', body }, beforeWrite));
      return;
    }
    const get = analyticGet(req);
    if (get === undefined) {
      fallback(req, res);
      return;
    }
    // Nothing to read: the answer may follow once the request has ended (node:http reads on).
    void serve(services, req, res, get, beforeWrite);
  };
}
