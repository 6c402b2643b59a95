// The Hono side of asynchronous queries: GET /v1/jobs, GET and DELETE /v1/jobs/{id} (documented
// by routes/jobs.ts), handed to query/jobs.ts as plain data like the query routes.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { requestAddress } from '../http/request-address.js';
import { describedRoute, pathParam } from '../http/route.js';
import type { JobCall } from '../query/jobs.js';
import { CANCEL_JOB_ROUTE, GET_JOB_ROUTE, LIST_JOBS_ROUTE } from '../routes/jobs.js';
import { streamedResponse } from './hono-query.js';

async function serve(c: Context<AppEnv>, action: JobCall['action']): Promise<Response> {
  const jobs = c.var.services.jobs;
  if (jobs === undefined) throw new ApiError('NOT_FOUND', 'This gateway runs no asynchronous queries.');
  const reply = await jobs.handle({
    requestId: c.var.requestId,
    address: requestAddress(c),
    authorization: c.req.header('authorization'),
    accept: c.req.header('accept'),
    action,
  });
  if (reply.principal !== undefined) c.set('principal', reply.principal);
  if (reply.errorCode !== undefined) c.set('errorCode', reply.errorCode);
  if (reply.stream !== undefined) return streamedResponse(reply, reply.stream);
  return new Response(reply.body ?? null, { status: reply.status, headers: reply.headers });
}

const query = (c: Context<AppEnv>, names: readonly string[]) => {
  const out: Record<string, string | undefined> = {};
  for (const name of names) out[name] = c.req.query(name);
  return out;
};

export function registerJobRoutes(app: OpenAPIHono<AppEnv>): void {
  describedRoute(app, LIST_JOBS_ROUTE, (c) =>
    serve(c, { kind: 'list', query: query(c, ['state', 'limit']) }),
  );
  describedRoute(app, GET_JOB_ROUTE, (c) =>
    serve(c, { kind: 'get', id: pathParam(c, 'id'), query: query(c, ['page_size', 'cursor', 'format']) }),
  );
  describedRoute(app, CANCEL_JOB_ROUTE, (c) => serve(c, { kind: 'cancel', id: pathParam(c, 'id') }));
}
