// The one query pipeline for an admitted, decided call: metering, the result cache and the
// warehouse, then the 200 (or 304) with its cache headers. A cache hit is charged with one write
// that reserves and finalises its usage event; a miss reserves → runs the warehouse query
// (concurrent misses coalesced) → commits. Either way the answer leaves only once its usage
// event is durable, and a cached call is charged like any other. An idempotent call's answer is
// built before its charge and stored with it, in the charge's transaction. Refusals and failures throw
// (QUOTA_EXCEEDED, connector errors); a failed call is never charged.
import type { ParamValues } from '@quarry/sdk-connector';
import type { Principal } from '../auth/principal.js';
import { cacheKey } from '../cache/cache-key.js';
import { matchesIfNoneMatch } from '../cache/etag.js';
import type { CacheLookup, ResultCache } from '../cache/result-cache.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import type { Charge, IdempotentCompletion, Metering, PendingCharge } from '../money/metering.js';
import type { PlanCatalog } from '../money/plan-catalog.js';
import { failSpan, type TraceSpan } from '../observability/tracing.js';
import { formatQuotaPolicyItem, formatServiceLimitItem } from '../rate-limit/rate-limit-headers.js';
import { pendingRise } from '../store/price-schedule.js';
import type { LimitHeaders } from './admission.js';
import { answerBody, storedAnswer } from './answer.js';
import type { FailedCalls } from './failed-calls.js';
import type { QueryService } from './query-service.js';

export interface RunQueryDeps {
  readonly queries: Pick<QueryService, 'execute'>;
  readonly metering: Metering;
  readonly resultCache: ResultCache;
  readonly plans: PlanCatalog;
  /** The failed-call throttle (failed-calls.ts); absent: none. */
  readonly failedCalls?: FailedCalls;
}

/** One admitted, validated call. */
export interface PipelineCall {
  readonly principal: Principal;
  readonly entry: CatalogEntry;
  readonly params: ParamValues;
  /** resultCacheKey(entry, params); undefined when the analytic caches nothing. */
  readonly cacheKey: string | undefined;
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** The caller sent `Cache-Control: no-cache` (or the like). */
  readonly bypassCache: boolean;
  readonly ifNoneMatch: string | undefined;
  /** The request's abort signal, asked for only when the warehouse must be queried. */
  readonly signal: () => AbortSignal | undefined;
  /** A marketplace preview: at most this many rows, and `meta.preview: true`. */
  readonly previewRows: number | undefined;
  /** An Idempotency-Key claimed for this call: its answer is stored with its charge. */
  readonly idempotency?: { readonly accountId: string; readonly key: string } | undefined;
  /** The request's span while tracing is on: cache, warehouse and metering are spans of it. */
  readonly trace?: TraceSpan | undefined;
}

/** A served call: its 200 or 304 (body undefined) and its charge. */
export interface Served {
  readonly answer: {
    readonly status: 200 | 304;
    readonly headers: Record<string, string>;
    readonly body: string | undefined;
  };
  readonly charge: Charge;
}

/**
 * The result-cache key of a call, or undefined when its analytic caches nothing (no TTL, no
 * stale window). A preview's answer is capped, so it is kept apart from the full one.
 */
export function resultCacheKey(
  entry: CatalogEntry,
  params: ParamValues,
  preview = false,
  scope?: string,
): string | undefined {
  const cache = entry.definition.cache;
  return cache !== undefined && ((cache.ttl ?? 0) > 0 || (cache.stale ?? 0) > 0)
    ? cacheKey({
        analyticId: entry.analyticId,
        version: entry.version,
        params,
        // A preview's rows are capped; an embed token's fixed params are its own (query/embed-call.ts).
        ...(preview ? { scope: 'preview' } : scope === undefined ? {} : { scope }),
      })
    : undefined;
}

/** The 200 (or 304) of a served call: cache headers, ETag, and the stored body with this request's meta. */
function servedAnswer(call: PipelineCall, lookup: CacheLookup, credits: number): Served['answer'] {
  const headers: Record<string, string> = {
    'x-cache': lookup.outcome,
    etag: lookup.answer.etag,
    'cache-control': 'private, no-cache',
  };
  if (matchesIfNoneMatch(call.ifNoneMatch, lookup.answer.etag))
    return { status: 304, headers, body: undefined };
  const { text, bytes } = answerBody(lookup.answer, {
    requestId: call.requestId,
    cached: lookup.outcome !== 'MISS',
    durationMs: performance.now() - call.started,
    credits,
    version: call.entry.version,
    preview: call.previewRows !== undefined,
    // Date.now() only while a rise is scheduled: most entries have none.
    nextPrice:
      call.entry.pricing.nextPriceAt === undefined ? undefined : pendingRise(call.entry.pricing, Date.now()),
  });
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(bytes);
  return { status: 200, headers, body: text };
}

/**
 * Runs `work` as a span of `parent` named `name`; while tracing is off, the very promise of
 * `work()` (no extra await, no span).
 */
function staged<T>(parent: TraceSpan | undefined, name: string, work: () => Promise<T>): Promise<T> {
  if (parent === undefined) return work();
  const span = parent.child(name);
  return work().then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      failSpan(span, error);
      throw error;
    },
  );
}

/** Meters, runs (or serves from the cache) and answers one call. */
export async function runQuery(deps: RunQueryDeps, call: PipelineCall): Promise<Served> {
  const { queries, metering, resultCache } = deps;
  const { principal, entry, params, requestId, started, trace } = call;
  const policy = {
    ttlSeconds: entry.definition.cache?.ttl ?? 0,
    staleSeconds: entry.definition.cache?.stale ?? 0,
  };
  const key = call.cacheKey;
  // The signal: the caller's own for an uncached call; for a cached one, the result cache's, which
  // fires only once every caller waiting on the coalesced load has gone (cache/result-cache.ts).
  const load = async (signal: AbortSignal | undefined) =>
    storedAnswer(
      await staged(trace, 'quarry.warehouse', () => queries.execute(entry, params, signal, call.previewRows)),
      Date.now(),
      key !== undefined,
    );
  const peekSpan = key !== undefined && !call.bypassCache ? trace?.child('quarry.cache') : undefined;
  const stored = key !== undefined && !call.bypassCache ? resultCache.peek(key, policy, load) : undefined;
  if (peekSpan !== undefined) {
    peekSpan.setAttribute('quarry.cache', stored?.outcome ?? 'MISS');
    peekSpan.end();
  }
  if (stored !== undefined) {
    if (call.idempotency === undefined) {
      const charge = await staged(trace, 'quarry.metering', () =>
        metering.chargeServed(principal, entry, requestId, performance.now() - started),
      );
      return { answer: servedAnswer(call, stored, charge.credits), charge };
    }
    const answer = servedAnswer(call, stored, metering.creditsOf(principal, entry));
    const latency = performance.now() - started;
    const charge = await staged(trace, 'quarry.metering', () =>
      metering.chargeServed(principal, entry, requestId, latency, completionOf(call, answer)),
    );
    return { answer, charge };
  }
  // Only a call that may run a query asks the failed-call throttle: a cache hit never does.
  const admitted = deps.failedCalls?.admit(principal, entry);
  if (admitted !== undefined) await admitted;
  const pending: PendingCharge = await staged(trace, 'quarry.metering', () =>
    metering.begin(principal, entry, requestId),
  );
  let lookup: CacheLookup;
  const ran = performance.now();
  try {
    lookup =
      key !== undefined
        ? await staged(trace, 'quarry.cache', () =>
            resultCache.get(key, policy, load, { refresh: call.bypassCache, signal: call.signal() }),
          )
        : { answer: await load(call.signal()), outcome: 'MISS' };
  } catch (error) {
    await pending.release();
    await deps.failedCalls?.failed(principal, entry, requestId, error, performance.now() - ran);
    throw error;
  }
  if (call.idempotency === undefined) {
    const charge = await staged(trace, 'quarry.metering', () => pending.commit(performance.now() - started));
    return { answer: servedAnswer(call, lookup, charge.credits), charge };
  }
  const answer = servedAnswer(call, lookup, pending.credits);
  const charge = await staged(trace, 'quarry.metering', () =>
    pending.commit(performance.now() - started, completionOf(call, answer)),
  );
  return { answer, charge };
}

/** The answer an idempotent call stores with its charge. */
function completionOf(call: PipelineCall, answer: Served['answer']): IdempotentCompletion | undefined {
  if (call.idempotency === undefined) return undefined;
  return { ...call.idempotency, statusCode: answer.status, body: answer.body ?? '' };
}

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

/** The rate-limit headers with the monthly quota of a charge, or of a QUOTA_EXCEEDED refusal. */
export function quotaHeaders(
  deps: Pick<RunQueryDeps, 'plans'>,
  principal: Principal,
  current: LimitHeaders,
  outcome: Charge | ApiError,
): LimitHeaders {
  if (outcome instanceof ApiError) {
    if (outcome.code !== 'QUOTA_EXCEEDED') return current === undefined ? undefined : { ...current };
    const plan = deps.plans.resolve(principal.plan);
    return withQuotaHeaders(current, plan.included_credits ?? 0, 0, Math.ceil(outcome.retryAfter ?? 0));
  }
  if (outcome.limit === null || outcome.remaining === null)
    return current === undefined ? undefined : { ...current };
  return withQuotaHeaders(current, outcome.limit, outcome.remaining, outcome.resetSeconds);
}
