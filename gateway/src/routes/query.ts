// The OpenAPI description of the query contract of docs/design.md §2: POST /v1/query and
// GET /v1/analytics/{name}. One query module decides both (query/query-call.ts); the adapters
// (adapters/hono-query.ts, adapters/node-query.ts) serve them.
import { createRoute, z } from '@hono/zod-openapi';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  EVERY_RESPONSE_HEADERS,
  errorResponse,
  type HeaderDoc,
  header,
  QUERY_ERRORS,
  RATE_LIMIT_HEADERS,
} from '../http/common-schemas.js';
import { IdempotencyKeySchema } from '../query/idempotency.js';
import { QueryRequestSchema } from '../query/query-call.js';
import { JobSchema } from './jobs.js';

/**
 * The body the query module validates (query/query-call.ts), documented with zod's own `.meta()`
 * (the module's schemas may be made before @hono/zod-openapi adds `.openapi()` to zod).
 */
export const QueryRequestDoc = QueryRequestSchema.extend({
  source: QueryRequestSchema.shape.source.meta({
    example: 'sales-by-region',
    description:
      "The analytic's name (its current version), or `name@N` for its version N: a pinned call keeps getting version N, at that version's price, after newer versions deploy (400 `INVALID_REQUEST` for a malformed pin, 404 for a version not kept, 410 `VERSION_SUNSET` after the sunset its owner set)",
  }),
  params: QueryRequestSchema.shape.params.meta({
    example: { year: 2024 },
    description: "Values for the analytic's params; may be left out when none is required",
  }),
  max_credits: QueryRequestSchema.shape.max_credits.meta({
    example: 5,
    description:
      'The most credits this call may cost: a call whose price in force is above it is refused with 409 PRICE_ABOVE_LIMIT, nothing run or charged',
  }),
  page_size: QueryRequestSchema.shape.page_size.meta({
    example: 10000,
    description:
      'Answer the result in pages of this many rows (1–10,000): the query runs once, its whole result is kept for `QUARRY_RESULT_TTL_SECONDS`, and `meta.next` is the cursor of the next page. Pages are JSON; insights are left out',
  }),
  async: QueryRequestSchema.shape.async.meta({
    description:
      'true: run the call as an asynchronous job, as `Prefer: respond-async` asks (`false` answers synchronously whatever `Prefer` says). Admission and price are those of the call; it is charged once, when the job succeeds',
  }),
  cursor: QueryRequestSchema.shape.cursor.meta({
    description:
      "The previous page's `meta.next`, with the same `source`: the next page of the same result, read from the kept snapshot with no warehouse query and no charge. Bound to the account; 410 CURSOR_EXPIRED once the snapshot is gone",
  }),
}).meta({
  id: 'QueryRequest',
  // The whole body's example: "Try it out" in /docs sends it as is, and it answers 200 on the demo.
  example: { source: 'sales-by-region', params: { year: 2024 } },
});

export const QueryResponseSchema = z
  .object({
    source: z.string(),
    results: z.array(z.record(z.string(), z.unknown())),
    insights: z.unknown().optional(),
    columns: z.array(z.object({ name: z.string(), type: z.string() })),
    meta: z.object({
      request_id: z.string(),
      cached: z.boolean(),
      duration_ms: z.number(),
      row_count: z.number().int(),
      truncated: z.boolean(),
      credits: z.number().int(),
      version: z
        .number()
        .int()
        .openapi({ description: 'The analytic version that ran (the pinned one for `name@N`)' }),
      next_price: z.number().int().optional().openapi({
        description:
          'Present while the owner has a price rise scheduled: the credits a call will cost from `next_price_at`',
      }),
      next_price_at: z.string().optional().openapi({
        description: 'When `next_price` takes effect (ISO 8601); until then calls cost `credits`',
      }),
      total_rows: z.number().int().optional().openapi({
        description: 'Pages only: the rows of the whole result (`row_count` is the rows of this page)',
      }),
      offset: z.number().int().optional().openapi({
        description: "Pages only: the index of this page's first row in the whole result",
      }),
      next: z.string().nullable().optional().openapi({
        description:
          'Pages only: the cursor of the next page (send it as `cursor`), or null on the last page',
      }),
      preview: z.literal(true).optional().openapi({
        description:
          'Present on a marketplace preview (a try-token call): free, at most QUARRY_PREVIEW_ROWS rows',
      }),
    }),
  })
  .openapi('QueryResponse');

/** What a served call's answer (200 or 304) says about the result cache, besides `meta.cached`. */
const ANSWER_HEADERS: Record<string, HeaderDoc> = {
  ...EVERY_RESPONSE_HEADERS,
  ...RATE_LIMIT_HEADERS,
  'X-Cache': header(
    "`HIT`: from the result cache; `STALE`: from the cache past its TTL but inside the analytic's stale window, while one background query refreshes it; `MISS`: the warehouse ran the query (also for analytics without a cache, and with `Cache-Control: no-cache`)",
    { enum: ['HIT', 'STALE', 'MISS'] },
  ),
  ETag: header(
    'A strong validator of the results (not of `meta`, which is per request): send it back as `If-None-Match` to get a `304` while they are unchanged',
  ),
  'Cache-Control': header(
    '`private, no-cache`: an answer is per account and metered, so a shared cache must not keep it',
  ),
  Deprecation: header(
    'On a call of a version its owner deprecated (RFC 9745): when, as `@<unix seconds>`. Move to the current version before `Sunset`',
  ),
  Sunset: header(
    'With `Deprecation` (RFC 8594): the HTTP-date from which calls of this version are refused with 410 `VERSION_SUNSET`',
  ),
};

/** An export's body: the whole result in the format `Accept` (or `format=`) named. */
const exportBody = (description: string) => ({
  schema: z.string().openapi({ format: 'binary', description }),
});

const ok = {
  description:
    'Results: JSON (a page of them with `page_size` or `cursor`), or the whole result streamed in the format `Accept` (or `format=` on GET) asks for. An export is charged once its last byte is sent; one cut midway is not charged. Exports carry `X-Row-Count`, `X-Truncated` and `X-Credits` and no `Content-Length`',
  headers: ANSWER_HEADERS,
  content: {
    'application/json': { schema: QueryResponseSchema },
    'text/csv': exportBody('RFC 4180 CSV with a header row; null is an empty field'),
    'application/x-ndjson': exportBody('One JSON object a row, as in `results`'),
    'application/vnd.apache.arrow.stream': exportBody(
      "An Arrow IPC stream, typed from the analytic's columns",
    ),
    'application/vnd.apache.parquet': exportBody("A Parquet file, typed from the analytic's columns"),
  },
};

/** 202: the call was admitted as an asynchronous job (query/jobs.ts). */
const ACCEPTED = {
  202: {
    description:
      'Admitted as an asynchronous job (`Prefer: respond-async` or `"async": true`): follow `Location` for its state and, once it succeeded, its result',
    headers: {
      ...EVERY_RESPONSE_HEADERS,
      ...RATE_LIMIT_HEADERS,
      Location: header('`/v1/jobs/{id}`: the job'),
      'Preference-Applied': header('`respond-async`'),
    },
    content: { 'application/json': { schema: JobSchema } },
  },
};

/** 410: a pinned version past its sunset, or a cursor whose result is no longer kept. */
const GONE_ERROR = {
  410: errorResponse(
    "VERSION_SUNSET: the pinned version (`name@N`) was retired by its owner on its sunset date; the message and `details` name the current version; nothing run or charged. CURSOR_EXPIRED: the cursor's result is no longer kept (expired, evicted, or held by another instance or before a restart); rerun the query",
    RATE_LIMIT_HEADERS,
  ),
};

const notModified = {
  description:
    "`If-None-Match` matched the answer's ETag: no body. Served and charged like a `200` (it is one call to the analytic).",
  headers: ANSWER_HEADERS,
};

/** What every answer of the query routes may carry about CORS (query/embed-call.ts). */
const CORS_HEADERS: Record<string, HeaderDoc> = {
  Vary: header('`Origin`: the CORS headers depend on the page that sent the request'),
  'Access-Control-Allow-Origin': header(
    "On a request from a web page of another origin that the credential allows (an embed token's `origins`; a key only where the account allows keys from browsers): that origin, exactly. Absent on a refusal, which the browser then hides from the page.",
  ),
  'Access-Control-Expose-Headers': header('The headers such a page may read'),
};

type Responses = Record<string, { readonly headers?: Record<string, HeaderDoc> }>;

/** Every response of a query route, with the CORS headers declared. */
function withCors<R extends Responses>(responses: R): R {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    out[status] = { ...response, headers: { ...response.headers, ...CORS_HEADERS } };
  }
  return out as R;
}

/** The request headers both query routes read. */
const QueryHeaders = z.object({
  accept: z.string().optional().openapi({
    description:
      '`text/csv`, `application/x-ndjson`, `application/vnd.apache.arrow.stream` or `application/vnd.apache.parquet` streams the whole result in that format; anything else answers JSON',
  }),
  'if-none-match': z.string().optional().openapi({
    description:
      'An ETag from an earlier answer (or a list of them, or `*`): a match answers `304 Not Modified`',
  }),
  'cache-control': z.string().optional().openapi({
    description:
      '`no-cache` (or `no-store`; also `Pragma: no-cache`) skips any cached answer: the warehouse runs the query and the fresh answer replaces the cached one',
  }),
  prefer: z.string().optional().openapi({
    description:
      '`respond-async` (RFC 7240): run the call as an asynchronous job; it answers `202` with `Location: /v1/jobs/{id}` once admitted (docs/large-results.md)',
  }),
});

/** POST /v1/query (served by adapters/hono-query.ts and adapters/node-query.ts). */
export const QUERY_ROUTE = createRoute({
  method: 'post',
  path: '/v1/query',
  tags: ['Query'],
  summary: 'Run an analytic',
  security: BEARER,
  request: {
    headers: QueryHeaders.extend({
      'idempotency-key': IdempotencyKeySchema.optional().meta({
        description:
          'Up to 255 visible ASCII characters: a retry with the same key and body gets the stored answer (`Idempotent-Replayed: true`) and is not charged again',
      }),
    }),
    body: { required: true, content: { 'application/json': { schema: QueryRequestDoc } } },
  },
  responses: withCors({
    200: ok,
    ...ACCEPTED,
    304: notModified,
    ...AUTHED_ERRORS,
    ...BODY_ERRORS,
    ...QUERY_ERRORS,
    ...GONE_ERROR,
    409: errorResponse(
      'PRICE_ABOVE_LIMIT: the call would cost more than `max_credits` (nothing run or charged); or CONFLICT: a request with this Idempotency-Key is still running',
      RATE_LIMIT_HEADERS,
    ),
  }),
});

/** GET /v1/analytics/{name} (served by adapters/hono-query.ts). */
export const ANALYTIC_ROUTE = createRoute({
  method: 'get',
  path: '/v1/analytics/{name}',
  tags: ['Query'],
  summary: 'Run an analytic with query-string params',
  description:
    "Query-string values are coerced by the analytic's param schema: `year=2024` becomes 2024; repeated keys or `a,b` make arrays for array params. `max_credits` is not a param (the name is reserved at deploy) but the caller's price limit, as in POST /v1/query's body; an analytic deployed before the reservation with a param of that name keeps it as its param. `HEAD` is refused (405 `METHOD_NOT_ALLOWED`, `Allow: GET`) before anything runs: it would be charged for an answer it cannot carry.",
  security: BEARER,
  request: {
    params: z.object({
      name: z.string().openapi({
        example: 'sales-by-region',
        description: 'The analytic, or `name@N` for its version N (as `source` in POST /v1/query)',
      }),
    }),
    query: z.object({
      max_credits: z.string().optional().openapi({
        example: '5',
        description:
          'The most credits this call may cost (a positive integer): a dearer call is refused with 409 PRICE_ABOVE_LIMIT, nothing run or charged',
      }),
      page_size: z.string().optional().openapi({
        example: '10000',
        description: 'Pages of this many rows (1–10,000), as in POST /v1/query (reserved like `max_credits`)',
      }),
      cursor: z.string().optional().openapi({
        description: "The previous page's `meta.next`: the next page, uncharged",
      }),
      format: z.enum(['json', 'csv', 'ndjson', 'arrow', 'parquet']).optional().openapi({
        description:
          "The answer's format (wins over `Accept`): `json` (default), or an export of the whole result",
      }),
    }),
    headers: QueryHeaders,
  },
  responses: withCors({
    200: ok,
    ...ACCEPTED,
    304: notModified,
    ...AUTHED_ERRORS,
    ...QUERY_ERRORS,
    ...GONE_ERROR,
    409: errorResponse(
      'PRICE_ABOVE_LIMIT: the call would cost more than `max_credits`; nothing run or charged',
      RATE_LIMIT_HEADERS,
    ),
  }),
});
