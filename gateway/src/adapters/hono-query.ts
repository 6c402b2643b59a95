// The Hono side of the query module: POST /v1/query and GET /v1/analytics/{name} as routes of
// the app (documented by routes/query.ts), each handing the request to the one query-call
// handler as plain data and turning its QueryReply into the response. Requests served on
// node:http come through adapters/node-query.ts instead; both answer alike.
import { PassThrough, Readable } from 'node:stream';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { requestAddress } from '../http/request-address.js';
import { describedRoute, pathParam } from '../http/route.js';
import type { QueryCallRequest } from '../query/query-call.js';
import type { QueryReply } from '../query/query-reply.js';
import { ANALYTIC_ROUTE, QUERY_ROUTE } from '../routes/query.js';

async function serve(c: Context<AppEnv>, request: QueryCallRequest): Promise<Response> {
  const req = c.req;
  const reply = await c.var.services.queryCall({
    requestId: c.var.requestId,
    address: requestAddress(c),
    started: performance.now(),
    headers: {
      authorization: req.header('authorization'),
      'content-type': req.header('content-type'),
      'if-none-match': req.header('if-none-match'),
      'cache-control': req.header('cache-control'),
      pragma: req.header('pragma'),
      'idempotency-key': req.header('idempotency-key'),
      origin: req.header('origin'),
      host: req.header('host'),
      accept: req.header('accept'),
      prefer: req.header('prefer'),
    },
    request,
    signal: () => req.raw.signal,
    trace: c.var.trace,
  });
  if (reply.principal !== undefined) c.set('principal', reply.principal);
  if (reply.errorCode !== undefined) {
    c.set('errorCode', reply.errorCode);
    c.set('limitReason', reply.limitReason);
  }
  if (reply.stream !== undefined) return streamedResponse(reply, reply.stream);
  return new Response(reply.body ?? null, { status: reply.status, headers: reply.headers });
}

/**
 * An export as a fetch Response: the query module writes into a PassThrough read by the
 * response's body at the client's pace; a cut answer errors the body, so the client sees the
 * transfer fail rather than a short file.
 */
export function streamedResponse(reply: QueryReply, write: NonNullable<QueryReply['stream']>): Response {
  const pass = new PassThrough({ highWaterMark: 256 * 1024 });
  write(pass).then(
    () => pass.end(),
    (error: unknown) => pass.destroy(error instanceof Error ? error : new Error('the export was cut')),
  );
  return new Response(Readable.toWeb(pass) as ReadableStream<Uint8Array>, {
    status: reply.status,
    headers: reply.headers,
  });
}

export function registerQueryRoutes(app: OpenAPIHono<AppEnv>): void {
  describedRoute(app, QUERY_ROUTE, async (c) => serve(c, { method: 'POST', body: await c.req.text() }));
  describedRoute(app, ANALYTIC_ROUTE, (c) => {
    // Hono serves HEAD with the GET route and drops the body: here that would run the analytic
    // and charge for an answer never sent. A HEAD of an analytic is refused before anything runs.
    if (c.req.raw.method === 'HEAD') {
      throw new ApiError('METHOD_NOT_ALLOWED', 'HEAD does not run an analytic; use GET.', {
        headers: { allow: 'GET' },
      });
    }
    // A null-prototype record: `?__proto__=…` must be an unknown param, not a prototype.
    const query: Record<string, string | string[]> = Object.create(null);
    for (const [key, values] of Object.entries(c.req.queries())) {
      query[key] = values.length === 1 ? (values[0] as string) : values;
    }
    return serve(c, { method: 'GET', name: pathParam(c, 'name'), query });
  });
}
