// POST /v1/query and GET /v1/analytics/{name}: the query contract of DESIGN.md §2.
import { createHash } from 'node:crypto';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ParamValues } from '@quarry/sdk-connector';
import type { Context } from 'hono';
import type { MeteredCall } from '../billing/metering.js';
import { answerText, storedAnswer } from '../cache/answer-body.js';
import { cacheKey } from '../cache/cache-key.js';
import { matchesIfNoneMatch } from '../cache/etag.js';
import type { CacheResult } from '../cache/result-cache.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../http/api-error.js';
import type { AppEnv, Principal } from '../http/app-env.js';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  errorResponse,
  type HeaderDoc,
  header,
  QUERY_ERRORS,
  RATE_LIMIT_HEADERS,
  REQUEST_ID_HEADER,
} from '../http/common-schemas.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { requireScope } from '../middleware/auth.js';
import { formatQuotaPolicyItem, formatServiceLimitItem } from '../rate-limit/rate-limit-headers.js';
import type { GatewayServices } from '../services/gateway-services.js';

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

/** What a served call's answer (200 or 304) says about the result cache, besides `meta.cached`. */
const ANSWER_HEADERS: Record<string, HeaderDoc> = {
  ...REQUEST_ID_HEADER,
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
};

const ok = {
  description: 'Results',
  headers: ANSWER_HEADERS,
  content: { 'application/json': { schema: QueryResponseSchema } },
};

const notModified = {
  description:
    "`If-None-Match` matched the answer's ETag: no body. Served and charged like a `200` (it is one call to the analytic).",
  headers: ANSWER_HEADERS,
};

/** The request headers both query routes read. */
const QueryHeaders = z.object({
  'if-none-match': z.string().optional().openapi({
    description:
      'An ETag from an earlier answer (or a list of them, or `*`): a match answers `304 Not Modified`',
  }),
  'cache-control': z.string().optional().openapi({
    description:
      '`no-cache` (or `no-store`; also `Pragma: no-cache`) skips any cached answer: the warehouse runs the query and the fresh answer replaces the cached one',
  }),
});

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
  /** The JSON body; its Content-Length is in `headers`. */
  readonly body: string | undefined;
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
  const { text, bytes } = answerText(result.answer, {
    requestId: request.requestId,
    cached: result.outcome !== 'MISS',
    durationMs: performance.now() - request.started,
    credits: charged.credits,
    version: entry.version,
  });
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(bytes);
  return { status: 200, headers, body: text };
}

/** One validated call, however it arrived (the Hono route or the node:http fast path). */
export interface QueryCall {
  readonly principal: Principal;
  readonly entry: CatalogEntry;
  readonly params: ParamValues;
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The caller sent `Cache-Control: no-cache` (or the like). */
  readonly bypassCache: boolean;
  /** resultCacheKey(entry, params), when the caller already computed it. */
  readonly cacheKey?: string | undefined;
  readonly ifNoneMatch: string | undefined;
  /** The request's abort signal, asked for only when the warehouse must be queried. */
  readonly signal: () => AbortSignal | undefined;
}

/** A served call: its answer and what its charge tells the rate-limit headers. */
export interface QueryOutcome {
  readonly answer: ServedAnswer;
  readonly charged: ChargeFacts;
}

/** The result-cache key of a call, or undefined when its analytic caches nothing (no TTL, no stale window). */
export function resultCacheKey(entry: CatalogEntry, params: ParamValues): string | undefined {
  const cache = entry.definition.cache;
  return cache !== undefined && ((cache.ttl ?? 0) > 0 || (cache.stale ?? 0) > 0)
    ? cacheKey({ analyticId: entry.analyticId, version: entry.version, params })
    : undefined;
}

/**
 * Meters, runs (or serves from the cache) and answers one call: the one query pipeline. A cache
 * hit is charged with one write that reserves and finalises its usage event; a miss reserves →
 * runs the warehouse query (concurrent misses coalesced) → commits. Either way the answer leaves
 * only once its usage event is durable, and a cached call is charged like any other. Refusals
 * and failures throw (QUOTA_EXCEEDED, connector errors); a failed call is never charged.
 */
export async function runQuery(services: GatewayServices, call: QueryCall): Promise<QueryOutcome> {
  const { queries, metering, resultCache } = services;
  const { principal, entry, params, requestId, started } = call;
  const policy = {
    ttlSeconds: entry.definition.cache?.ttl ?? 0,
    staleSeconds: entry.definition.cache?.stale ?? 0,
  };
  const key = call.cacheKey ?? resultCacheKey(entry, params);
  const cacheable = key !== undefined;
  let metered: MeteredCall | undefined;
  // The signal: the caller's own for an uncached call; for a cached one, the result cache's, which
  // fires only once every caller waiting on the coalesced load has gone (cache/result-cache.ts).
  const load = async (signal: AbortSignal | undefined) =>
    storedAnswer(
      await queries.execute(entry, params, {
        requestId,
        signal,
        credits: metered?.credits ?? entry.definition.price,
      }),
      Date.now(),
      cacheable,
    );
  const request = { requestId, ifNoneMatch: call.ifNoneMatch, started };
  const stored = cacheable && !call.bypassCache ? resultCache.peek(key, policy, load) : undefined;
  if (stored !== undefined) {
    const charged = await metering.chargeServed(principal, entry, requestId, performance.now() - started);
    return { answer: servedAnswer(entry, stored, charged, request), charged };
  }
  metered = await metering.begin(principal, entry, requestId);
  let result: CacheResult;
  try {
    result = cacheable
      ? await resultCache.get(key, policy, load, { refresh: call.bypassCache, signal: call.signal() })
      : { answer: await load(call.signal()), outcome: 'MISS' };
  } catch (error) {
    await metered.release();
    throw error;
  }
  const charged = await metered.commit(performance.now() - started);
  return { answer: servedAnswer(entry, result, charged, request), charged };
}

/** The rate-limit headers with the monthly quota of a charge, or of a QUOTA_EXCEEDED refusal. */
export function quotaHeaders(
  services: GatewayServices,
  principal: Principal,
  current: Readonly<Record<string, string>> | undefined,
  outcome: ChargeFacts | ApiError,
): Record<string, string> | undefined {
  if (outcome instanceof ApiError) {
    if (outcome.code !== 'QUOTA_EXCEEDED') return current === undefined ? undefined : { ...current };
    const plan = services.plans.resolve(principal.plan);
    return withQuotaHeaders(current, plan.included_calls ?? 0, 0, Math.ceil(outcome.retryAfter ?? 0));
  }
  if (outcome.limit === null || outcome.remaining === null)
    return current === undefined ? undefined : { ...current };
  return withQuotaHeaders(current, outcome.limit, outcome.remaining, outcome.resetSeconds);
}

/** The route's side of runQuery: Hono request in, Response out, quota in the rate-limit headers. */
async function answer(c: Context<AppEnv>, entry: CatalogEntry, params: ParamValues): Promise<Response> {
  const { services, principal } = c.var;
  let outcome: QueryOutcome;
  try {
    outcome = await runQuery(services, {
      principal,
      entry,
      params,
      requestId: c.var.requestId,
      started: performance.now(),
      bypassCache: bypassesCache(c.req.header('cache-control'), c.req.header('pragma')),
      ifNoneMatch: c.req.header('if-none-match'),
      signal: () => c.req.raw.signal,
    });
  } catch (error) {
    if (error instanceof ApiError) {
      const headers = quotaHeaders(services, principal, c.var.rateLimitHeaders, error);
      if (headers !== undefined) c.set('rateLimitHeaders', headers);
    }
    throw error;
  }
  const headers = quotaHeaders(services, principal, c.var.rateLimitHeaders, outcome.charged);
  if (headers !== undefined) c.set('rateLimitHeaders', headers);
  const { answer: served } = outcome;
  return served.body === undefined
    ? c.body(null, served.status, served.headers)
    : c.body(served.body, 200, served.headers);
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
      request: {
        headers: QueryHeaders.extend({
          'idempotency-key': z.string().min(1).max(255).optional().openapi({
            description:
              'Up to 255 visible ASCII characters: a retry with the same key and body gets the stored answer (`Idempotent-Replayed: true`) and is not charged again',
          }),
        }),
        body: { required: true, content: { 'application/json': { schema: QueryRequestSchema } } },
      },
      responses: {
        200: ok,
        304: notModified,
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...QUERY_ERRORS,
        409: errorResponse('A request with this Idempotency-Key is still running', RATE_LIMIT_HEADERS),
      },
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
      request: { params: z.object({ name: z.string() }), headers: QueryHeaders },
      responses: { 200: ok, 304: notModified, ...AUTHED_ERRORS, ...QUERY_ERRORS },
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
