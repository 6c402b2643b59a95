// The OpenAPI description of asynchronous queries (query/jobs.ts, docs/large-results.md):
// GET /v1/jobs, GET /v1/jobs/{id} (state, then the result in pages or a format) and
// DELETE /v1/jobs/{id}. Served by adapters/hono-jobs.ts; the 202 of a submission is on the query
// routes (routes/query.ts).
import { createRoute, z } from '@hono/zod-openapi';
import { AUTHED_ERRORS, BEARER, errorResponse, RATE_LIMIT_HEADERS } from '../http/common-schemas.js';

export const JobSchema = z
  .object({
    id: z.string().openapi({ example: 'job_3kTMd9QpX0aB2cD4eF6gH8' }),
    state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    source: z.string(),
    version: z.number().int(),
    request_id: z.string().openapi({ description: 'The `X-Request-Id` of the submission' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    started_at: z.string().nullable().openapi({ format: 'date-time' }),
    finished_at: z.string().nullable().openapi({ format: 'date-time' }),
    error: z
      .object({ code: z.string(), message: z.string(), details: z.array(z.unknown()) })
      .nullable()
      .openapi({ description: "A failed job's error, as the envelope's `error` would say it" }),
    row_count: z.number().int().nullable(),
    truncated: z.boolean().nullable(),
    credits: z.number().int().openapi({ description: 'Credits charged: the price once succeeded, else 0' }),
    result_status: z.enum(['pending', 'ready', 'unavailable']).optional().openapi({
      description:
        '`pending` until it succeeded; `ready` with `result`; `unavailable` when this instance does not hold the result (another instance ran the job, or the result expired)',
    }),
    result: z
      .object({
        results: z.array(z.record(z.string(), z.unknown())),
        columns: z.array(z.object({ name: z.string(), type: z.string() })),
        meta: z.object({
          row_count: z.number().int(),
          total_rows: z.number().int(),
          offset: z.number().int(),
          next: z.string().nullable().openapi({ description: 'The cursor of the next page, or null' }),
        }),
      })
      .nullable()
      .optional()
      .openapi({ description: 'A page of the result (GET /v1/jobs/{id} of a succeeded job)' }),
  })
  .openapi('Job');

const JobsSchema = z.object({ items: z.array(JobSchema) }).openapi('Jobs');

const IdParam = z.object({ id: z.string().openapi({ example: 'job_3kTMd9QpX0aB2cD4eF6gH8' }) });
const NOT_FOUND = {
  404: errorResponse('NOT_FOUND: no such job of this account (or embed token)', RATE_LIMIT_HEADERS),
};

const exportBody = (description: string) => ({
  schema: z.string().openapi({ format: 'binary', description }),
});

export const GET_JOB_ROUTE = createRoute({
  method: 'get',
  path: '/v1/jobs/{id}',
  tags: ['Query'],
  summary: 'An asynchronous query: its state, then its result',
  description:
    "The job's state. Once it `succeeded`, its result: a page of it in `result` (`page_size`, then `cursor` = `result.meta.next`), or the whole result in the format `Accept` (or `format=`) names, read from the instance that ran it. Reading the result is not charged again.",
  security: BEARER,
  request: {
    params: IdParam,
    query: z.object({
      page_size: z.string().optional().openapi({ description: 'Rows in the page, 1–10,000 (default 1,000)' }),
      cursor: z.string().optional().openapi({ description: "The previous page's `result.meta.next`" }),
      format: z.enum(['json', 'csv', 'ndjson', 'arrow', 'parquet']).optional(),
    }),
  },
  responses: {
    200: {
      description: 'The job (JSON), or its whole result in the format asked for',
      headers: RATE_LIMIT_HEADERS,
      content: {
        'application/json': { schema: JobSchema },
        'text/csv': exportBody('RFC 4180 CSV with a header row'),
        'application/x-ndjson': exportBody('One JSON object a row'),
        'application/vnd.apache.arrow.stream': exportBody('An Arrow IPC stream'),
        'application/vnd.apache.parquet': exportBody('A Parquet file'),
      },
    },
    ...AUTHED_ERRORS,
    ...NOT_FOUND,
    409: errorResponse('CONFLICT: a format was asked of a job that has not succeeded', RATE_LIMIT_HEADERS),
    410: errorResponse(
      'CURSOR_EXPIRED: this instance does not hold the result (another instance ran the job, or it expired)',
      RATE_LIMIT_HEADERS,
    ),
  },
});

export const LIST_JOBS_ROUTE = createRoute({
  method: 'get',
  path: '/v1/jobs',
  tags: ['Query'],
  summary: "The account's recent asynchronous queries, newest first",
  security: BEARER,
  request: {
    query: z.object({
      state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']).optional(),
      limit: z.string().optional().openapi({ description: 'Jobs to list, 1–100 (default 20)' }),
    }),
  },
  responses: {
    200: {
      description: 'Jobs',
      headers: RATE_LIMIT_HEADERS,
      content: { 'application/json': { schema: JobsSchema } },
    },
    ...AUTHED_ERRORS,
  },
});

export const CANCEL_JOB_ROUTE = createRoute({
  method: 'delete',
  path: '/v1/jobs/{id}',
  tags: ['Query'],
  summary: 'Cancel an asynchronous query',
  description:
    'Marks the job `cancelled` and stops its query on the warehouse within a second, whichever instance runs it. A cancelled job is not charged. Cancelling a cancelled job answers it again.',
  security: BEARER,
  request: { params: IdParam },
  responses: {
    200: {
      description: 'The cancelled job',
      headers: RATE_LIMIT_HEADERS,
      content: { 'application/json': { schema: JobSchema } },
    },
    ...AUTHED_ERRORS,
    ...NOT_FOUND,
    409: errorResponse('CONFLICT: the job already succeeded or failed', RATE_LIMIT_HEADERS),
  },
});
