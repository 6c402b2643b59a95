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

/** `current` rate-limit headers with the monthly quota appended (IETF RateLimit-Policy / RateLimit). */
export function withQuotaHeaders(
  current: Readonly<Record<string, string>> | undefined,
  limit: number,
  remaining: number,
  resetSeconds: number,
): Record<string, string> {
  const base = current ?? {};
  const policy = formatQuotaPolicyItem('monthly', limit, resetSeconds);
  const state = formatServiceLimitItem('monthly', remaining, resetSeconds);
  const join = (a: string | undefined, b: string) => (a ? `${a}, ${b}` : b);
  return {
    ...base,
    'RateLimit-Policy': join(base['RateLimit-Policy'], policy),
    RateLimit: join(base.RateLimit, state),
  };
}

/** Appends the monthly quota to this request's IETF rate-limit headers. */
function addQuotaHeaders(c: Context<AppEnv>, limit: number, remaining: number, resetSeconds: number): void {
  c.set('rateLimitHeaders', withQuotaHeaders(c.var.rateLimitHeaders, limit, remaining, resetSeconds));
}

/** Whether the caller asked to bypass the cache (`Cache-Control: no-cache` or `no-store`, `Pragma: no-cache`). */
export function bypassesCache(cacheControl: string | undefined, pragma: string | undefined): boolean {
  const cc = cacheControl?.toLowerCase() ?? '';
  return cc.includes('no-cache') || cc.includes('no-store') || pragma?.toLowerCase() === 'no-cache';
}

/** What a served call's charge tells the answer. */
export interface ChargeFacts {
  readonly credits: number;
  readonly limit: number | null;
  readonly remaining: number | null;
  readonly resetSeconds: number;
}

/** A served call's answer as plain data (the body is undefined for a 304). */
export interface ServedAnswer {
  readonly status: 200 | 304;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array<ArrayBuffer> | undefined;
}

/**
 * The 200 (or 304) of a served call, its usage event already durable: cache headers, ETag, and
 * the stored body with this request's `meta` appended. Shared by the route and the fast path.
 */
export function servedAnswer(
  entry: CatalogEntry,
  result: CacheResult,
  charged: ChargeFacts,
  request: { readonly requestId: string; readonly ifNoneMatch: string | undefined; readonly started: number },
): ServedAnswer {
  const headers: Record<string, string> = {
    'x-cache': result.outcome,
    etag: result.answer.etag,
    'cache-control': 'private, no-cache',
  };
  if (matchesIfNoneMatch(request.ifNoneMatch, result.answer.etag)) {
    return { status: 304, headers, body: undefined };
  }
  const bytes = answerBytes(result.answer, {
    requestId: request.requestId,
    cached: result.outcome !== 'MISS',
    durationMs: performance.now() - request.started,
    credits: charged.credits,
    version: entry.version,
  });
  headers['content-type'] = 'application/json';
  return {
    status: 200,
    headers,
    body: new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength),
  };
}

/** Adds the monthly quota headers of a QUOTA_EXCEEDED refusal, then rethrows it. */
function refuseQuota(c: Context<AppEnv>, error: unknown): never {
  if (error instanceof ApiError && error.code === 'QUOTA_EXCEEDED') {
    const plan = c.var.services.plans.resolve(c.var.principal.plan);
    addQuotaHeaders(c, plan.included_calls ?? 0, 0, Math.ceil(error.retryAfter ?? 0));
  }
  throw error;
}

/** The route's Response for a served call; the quota joins the rate-limit headers. */
function respond(
  c: Context<AppEnv>,
  entry: CatalogEntry,
  result: CacheResult,
  charged: ChargeFacts,
  started: number,
): Response {
  if (charged.limit !== null && charged.remaining !== null)
    addQuotaHeaders(c, charged.limit, charged.remaining, charged.resetSeconds);
  const answer = servedAnswer(entry, result, charged, {
    requestId: c.var.requestId,
    ifNoneMatch: c.req.header('if-none-match'),
    started,
  });
  return answer.body === undefined
    ? c.body(null, answer.status, answer.headers)
    : c.body(answer.body, 200, answer.headers);
}

/**
 * Meters, runs (or serves from the cache) and answers one call. A cache hit is charged with one
 * write that reserves and finalises its usage event; a miss reserves → runs the warehouse query →
 * commits. Either way the answer leaves only once its usage event is durable, and a cached call
 * is metered and charged like any other.
 */
async function answer(c: Context<AppEnv>, entry: CatalogEntry, params: ParamValues): Promise<Response> {
  const { queries, metering, resultCache } = c.var.services;
  const started = performance.now();
  const policy = {
    ttlSeconds: entry.definition.cache?.ttl ?? 0,
    staleSeconds: entry.definition.cache?.stale ?? 0,
  };
  const cacheable = policy.ttlSeconds > 0 || policy.staleSeconds > 0;
  const key = cacheable ? cacheKey({ analyticId: entry.analyticId, version: entry.version, params }) : '';
  let call: MeteredCall | undefined;
  const load = async () =>
    storedAnswer(
      await queries.execute(entry, params, {
        requestId: c.var.requestId,
        signal: c.req.raw.signal,
        credits: call?.credits ?? entry.definition.price,
      }),
      Date.now(),
    );
  const bypass = bypassesCache(c.req.header('cache-control'), c.req.header('pragma'));
  const stored = cacheable && !bypass ? resultCache.peek(key, policy, load) : undefined;
  if (stored !== undefined) {
    let charged: ChargeFacts;
    try {
      charged = await metering.chargeServed(
        c.var.principal,
        entry,
        c.var.requestId,
        performance.now() - started,
      );
    } catch (error) {
      refuseQuota(c, error);
    }
    return respond(c, entry, stored, charged, started);
  }
  try {
    call = await metering.begin(c.var.principal, entry, c.var.requestId);
  } catch (error) {
    refuseQuota(c, error);
  }
  let result: CacheResult;
  try {
    result = cacheable
      ? await resultCache.get(key, policy, load, bypass ? { refresh: true } : undefined)
      : { answer: await load(), outcome: 'MISS' };
  } catch (error) {
    await call.release();
    throw error;
  }
  // The answer leaves only once its usage event is durable.
  await call.commit(performance.now() - started);
  return respond(c, entry, result, call, started);
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
