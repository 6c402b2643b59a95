// POST /v1/query and GET /v1/analytics/{name}: the query contract of DESIGN.md §2.
import { createHash } from 'node:crypto';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ParamValues } from '@quarry/sdk-connector';
import type { Context } from 'hono';
import type { MeteredCall } from '../billing/metering.js';
import { answerBytes, storedAnswer } from '../cache/answer-body.js';
import { cacheKey } from '../cache/cache-key.js';
import { matchesIfNoneMatch } from '../cache/etag.js';
import type { CacheResult } from '../cache/result-cache.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../http/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, QUERY_ERRORS } from '../http/common-schemas.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { requireScope } from '../middleware/auth.js';
import { formatQuotaPolicyItem, formatServiceLimitItem } from '../rate-limit/rate-limit-headers.js';

export const QueryRequestSchema = z
  .object({
    source: z.string().min(1).max(128).openapi({ example: 'sales-by-region' }),
    params: z.record(z.string(), z.unknown()).openapi({
      example: { year: 2024 },
      description: "Values for the analytic's params; `{}` when it has none",
    }),
  })
  .strict()
  .openapi('QueryRequest');

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
      version: z.number().int(),
    }),
  })
  .openapi('QueryResponse');

const ok = { description: 'Results', content: { 'application/json': { schema: QueryResponseSchema } } };

/** Appends the monthly quota to this request's IETF rate-limit headers. */
function addQuotaHeaders(c: Context<AppEnv>, limit: number, remaining: number, resetSeconds: number): void {
  const current = c.var.rateLimitHeaders ?? {};
  const policy = formatQuotaPolicyItem('monthly', limit, resetSeconds);
  const state = formatServiceLimitItem('monthly', remaining, resetSeconds);
  const join = (a: string | undefined, b: string) => (a ? `${a}, ${b}` : b);
  c.set('rateLimitHeaders', {
    ...current,
    'RateLimit-Policy': join(current['RateLimit-Policy'], policy),
    RateLimit: join(current.RateLimit, state),
  });
}

/** Whether the caller asked to bypass the cache (`Cache-Control: no-cache` or `no-store`, `Pragma: no-cache`). */
function bypassesCache(c: Context<AppEnv>): boolean {
  const cc = c.req.header('cache-control')?.toLowerCase() ?? '';
  return (
    cc.includes('no-cache') || cc.includes('no-store') || c.req.header('pragma')?.toLowerCase() === 'no-cache'
  );
}

/**
 * Meters, runs (or serves from the cache) and answers one call: reserve → cache or warehouse →
 * commit (durable) → respond. A cached call is metered and charged like any other.
 */
async function answer(c: Context<AppEnv>, entry: CatalogEntry, params: ParamValues): Promise<Response> {
  const { queries, metering, resultCache } = c.var.services;
  const started = performance.now();
  let call: MeteredCall;
  try {
    call = await metering.begin(c.var.principal, entry, c.var.requestId);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'QUOTA_EXCEEDED') {
      const plan = c.var.services.plans.resolve(c.var.principal.plan);
      addQuotaHeaders(c, plan.included_calls ?? 0, 0, Math.ceil(error.retryAfter ?? 0));
    }
    throw error;
  }
  if (call.limit !== null && call.remaining !== null)
    addQuotaHeaders(c, call.limit, call.remaining, call.resetSeconds);
  const load = async () =>
    storedAnswer(
      await queries.execute(entry, params, {
        requestId: c.var.requestId,
        signal: c.req.raw.signal,
        credits: call.credits,
      }),
      Date.now(),
    );
  const policy = {
    ttlSeconds: entry.definition.cache?.ttl ?? 0,
    staleSeconds: entry.definition.cache?.stale ?? 0,
  };
  let result: CacheResult;
  try {
    result =
      policy.ttlSeconds > 0 || policy.staleSeconds > 0
        ? await resultCache.get(
            cacheKey({ analyticId: entry.analyticId, version: entry.version, params }),
            policy,
            load,
            bypassesCache(c) ? { refresh: true } : undefined,
          )
        : { answer: await load(), outcome: 'MISS' };
  } catch (error) {
    await call.release();
    throw error;
  }
  // The answer leaves only once its usage event is durable.
  await call.commit(performance.now() - started);
  const headers: Record<string, string> = {
    'x-cache': result.outcome,
    etag: result.answer.etag,
    'cache-control': 'private, no-cache',
  };
  if (matchesIfNoneMatch(c.req.header('if-none-match'), result.answer.etag)) {
    return c.body(null, 304, headers);
  }
  const bytes = answerBytes(result.answer, {
    requestId: c.var.requestId,
    cached: result.outcome !== 'MISS',
    durationMs: performance.now() - started,
    credits: call.credits,
    version: entry.version,
  });
  return c.body(new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength), 200, {
    ...headers,
    'content-type': 'application/json',
  });
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Idempotency-Key (POST only): a replay of a completed request returns the stored answer and is
 * not charged again; the same key with a different body, or while the first is still running,
 * is refused. Failed requests are not stored, so a retry runs (and is charged) once.
 */
async function withIdempotency(c: Context<AppEnv>, run: () => Promise<Response>): Promise<Response> {
  const key = c.req.header('idempotency-key');
  if (key === undefined) return run();
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError('INVALID_REQUEST', 'Idempotency-Key must be 1–255 visible ASCII characters.');
  }
  const { idempotency } = c.var.services.store;
  const accountId = c.var.principal.accountId;
  const fingerprint = createHash('sha256')
    .update(await c.req.text())
    .digest('hex');
  const claim = await idempotency.claim(accountId, key, fingerprint, {
    takeOverAfterMs: IDEMPOTENCY_LEASE_MS,
  });
  if (claim.state === 'done') {
    return new Response(claim.body, {
      status: claim.statusCode,
      headers: { 'content-type': 'application/json', 'idempotent-replayed': 'true' },
    });
  }
  if (claim.state === 'in_progress') {
    throw new ApiError(
      'CONFLICT',
      'A request with this Idempotency-Key is still running; retry when it has finished.',
      {
        retryAfter: 1,
      },
    );
  }
  if (claim.state === 'mismatch') {
    throw new ApiError('INVALID_REQUEST', 'This Idempotency-Key was used with a different request.');
  }
  let response: Response;
  try {
    response = await run();
  } catch (error) {
    await idempotency.abandon(accountId, key);
    throw error;
  }
  await idempotency.complete(accountId, key, {
    statusCode: response.status,
    body: await response.clone().text(),
  });
  return response;
}

/** Longer than any query may run (10 minutes), so a crashed instance's claim can be taken over. */
const IDEMPOTENCY_LEASE_MS = 15 * 60_000;

export function registerQueryRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/query',
      tags: ['Query'],
      summary: 'Run an analytic',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: QueryRequestSchema } } } },
      responses: { 200: ok, ...AUTHED_ERRORS, ...BODY_ERRORS, ...QUERY_ERRORS },
    }),
    requireScope('query'),
    async (c) => {
      const request = await readJson(c, QueryRequestSchema);
      const { queries } = c.var.services;
      return withIdempotency(c, async () => {
        const entry = await queries.resolve(c.var.principal, request.source);
        return answer(c, entry, queries.params(entry, request.params));
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/analytics/{name}',
      tags: ['Query'],
      summary: 'Run an analytic with query-string params',
      description:
        "Query-string values are coerced by the analytic's param schema: `year=2024` becomes 2024; repeated keys or `a,b` make arrays for array params.",
      security: BEARER,
      request: { params: z.object({ name: z.string() }) },
      responses: { 200: ok, ...AUTHED_ERRORS, ...QUERY_ERRORS },
    }),
    requireScope('query'),
    async (c) => {
      const { queries } = c.var.services;
      const entry = await queries.resolve(c.var.principal, pathParam(c, 'name'));
      // A null-prototype record: `?__proto__=…` must be an unknown param, not a prototype.
      const query: Record<string, string | string[]> = Object.create(null);
      for (const [key, values] of Object.entries(c.req.queries())) {
        query[key] = values.length === 1 ? (values[0] as string) : values;
      }
      return answer(c, entry, queries.queryStringParams(entry, query));
    },
  );
}
