// The query fast path: `POST /v1/query` served straight on node:http, without building fetch
// Request/Response objects or walking the Hono middleware chain. It takes a call only when it
// can decide everything before the pipeline from memory, exactly as the app would:
//
//   a cached, valid API-key verdict with the `query` scope → a JSON body of the documented shape
//   → an analytic in the catalog cache the caller may call → params that validate
//
// and then runs the same steps as the route: the rate limit (spendRateLimit), the one query
// pipeline (runQuery: metering, the result cache, the warehouse), the same answer bytes and
// headers, the same error envelope (errorPayload), the same metrics and access line. Anything
// else — an unknown or uncached key, a token, bad input, an unknown analytic, Idempotency-Key —
// goes to the Hono app untouched (the body it read is handed over as `rawBody`, which
// @hono/node-server reads instead of the spent stream), so every validation message has one
// implementation. The equivalence test drives both paths with the same requests and compares
// status, headers and body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ParamValues } from '@quarry/sdk-connector';
import type { CatalogEntry } from '../catalog/catalog.js';
import { spendRateLimit } from '../middleware/auth.js';
import { newRequestId } from '../middleware/request-id.js';
import { recordRequest } from '../observability/metrics.js';
import {
  bypassesCache,
  type QueryCall,
  type QueryOutcome,
  quotaHeaders,
  resultCacheKey,
  runQuery,
} from '../routes/query.js';
import type { GatewayServices } from '../services/gateway-services.js';
import { ApiError } from './api-error.js';
import type { Principal } from './app-env.js';
import { errorPayload, toApiError } from './error-response.js';
import { isJsonContentType } from './read-json.js';

/** The node:http listener the fast path falls back to (the Hono app's). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface QueryFastPathOptions {
  /** True once the server is draining: answers then carry `Connection: close`. */
  readonly shuttingDown?: () => boolean;
}

const ROUTE = '/v1/query';
const MAX_SOURCE = 128;
/** Bodies up to this size are remembered with their decision (see `decided`). */
const MAX_REMEMBERED_BODY = 1024;
/** Decisions remembered at once; the memo starts over when full (at most ~10 MiB of bodies). */
const MAX_REMEMBERED = 10_000;

/**
 * What a body decided, for the next identical body of the same account: the analytic entry it
 * resolved to (still current only while the catalog hands out the same entry object), the
 * validated params and the result-cache key. Skips JSON.parse, the param schema and the key
 * canonicalisation on repeated calls — most of a cache hit's own cost (bench/src/profile-gateway.ts).
 */
interface Decided {
  readonly source: string;
  readonly entry: CatalogEntry;
  readonly params: ParamValues;
  readonly cacheKey: string | undefined;
}

/** The documented request shape, checked without zod; anything else is the app's to refuse. */
function plainQuery(value: unknown): { source: string; params: Record<string, unknown> } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  let keys = 0;
  for (const key in body) {
    if (key !== 'source' && key !== 'params') return undefined;
    keys++;
  }
  const { source, params } = body;
  if (keys !== 2 || typeof source !== 'string' || source.length === 0 || source.length > MAX_SOURCE)
    return undefined;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return undefined;
  return { source, params: params as Record<string, unknown> };
}

/**
 * Wraps the app's node:http listener with the query fast path. The returned listener serves
 * cache hits of `POST /v1/query` itself and hands every other request to `fallback`.
 */
export function withQueryFastPath(
  services: GatewayServices,
  fallback: NodeListener,
  options: QueryFastPathOptions = {},
): NodeListener {
  const { auth, queries, rateLimiter, metrics, logger } = services;
  const bodyLimit = services.config.bodyLimit;
  const shuttingDown = options.shuttingDown ?? (() => false);

  function write(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body?: Uint8Array | string,
  ) {
    if (shuttingDown()) headers.connection = 'close';
    if (body === undefined) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    headers['content-length'] ??= String(
      typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
    );
    res.writeHead(status, headers);
    res.end(body);
  }

  /** Runs a decided call through the query pipeline; settles the response whatever happens. */
  async function serve(res: ServerResponse, call: Omit<QueryCall, 'requestId' | 'signal'>) {
    const requestId = newRequestId();
    const { principal } = call;
    let status = 500;
    let limitHeaders: Record<string, string> | undefined;
    let controller: AbortController | undefined;
    const signal = () => {
      if (controller === undefined) {
        const aborter = new AbortController();
        controller = aborter;
        // The caller went away before its answer was written: stop its warehouse query.
        res.once('close', () => {
          if (!res.writableFinished) aborter.abort();
        });
      }
      return controller.signal;
    };
    try {
      // The in-process limiter answers synchronously: no await (and no microtask) for it.
      const spent = spendRateLimit(rateLimiter, principal, principal.rateLimitBucket);
      limitHeaders = spent instanceof Promise ? await spent : spent;
      let outcome: QueryOutcome;
      try {
        outcome = await runQuery(services, { ...call, requestId, signal });
      } catch (error) {
        if (error instanceof ApiError) limitHeaders = quotaHeaders(services, principal, limitHeaders, error);
        throw error;
      }
      limitHeaders = quotaHeaders(services, principal, limitHeaders, outcome.charged);
      const { answer } = outcome;
      status = answer.status;
      const headers = answer.headers;
      headers['x-request-id'] = requestId;
      if (limitHeaders !== undefined)
        for (const name in limitHeaders) headers[name] = limitHeaders[name] as string;
      write(res, status, headers, answer.body);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'RATE_LIMIT_EXCEEDED')
        limitHeaders = { ...error.headers };
      const payload = errorPayload(
        toApiError(error, logger.child({ request_id: requestId })),
        requestId,
        limitHeaders,
      );
      status = payload.status;
      write(res, status, payload.headers, payload.body);
    }
    recordRequest(metrics, logger, {
      method: 'POST',
      route: ROUTE,
      status,
      seconds: (performance.now() - call.started) / 1000,
      requestId,
      accountId: principal.accountId,
    });
  }

  const decided = new Map<string, Decided>();

  /** The body's analytic, params and cache key, decided afresh; undefined: the app must answer. */
  function decide(principal: Principal, body: Buffer): Decided | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return undefined;
    }
    const request = plainQuery(parsed);
    if (request === undefined) return undefined;
    const entry = queries.peek(principal, request.source);
    if (entry === undefined) return undefined;
    let params: ParamValues;
    try {
      params = queries.params(entry, request.params);
    } catch {
      return undefined;
    }
    return { source: request.source, entry, params, cacheKey: resultCacheKey(entry, params) };
  }

  /** Serves the call when everything about it is decidable from memory; false hands it to the app. */
  function tryServe(
    req: IncomingMessage,
    res: ServerResponse,
    principal: Principal,
    body: Buffer,
    started: number,
  ): boolean {
    // The same bytes from the same account decide the same call, while the catalog still hands
    // out the entry they resolved to (a new version or visibility is a new entry object).
    const memo =
      body.length <= MAX_REMEMBERED_BODY ? `${principal.accountId}\n${body.toString('latin1')}` : undefined;
    let call = memo === undefined ? undefined : decided.get(memo);
    if (call === undefined || queries.peek(principal, call.source) !== call.entry) {
      call = decide(principal, body);
      if (call === undefined) return false;
      if (memo !== undefined) {
        if (decided.size >= MAX_REMEMBERED) decided.clear();
        decided.set(memo, call);
      }
    }
    const headers = req.headers;
    void serve(res, {
      principal,
      entry: call.entry,
      params: call.params,
      cacheKey: call.cacheKey,
      started,
      bypassCache:
        headers['cache-control'] === undefined && headers.pragma === undefined
          ? false
          : bypassesCache(headers['cache-control'], headers.pragma as string | undefined),
      ifNoneMatch: headers['if-none-match'],
    });
    return true;
  }

  return function queryFastPath(req, res) {
    const started = performance.now();
    const headers = req.headers;
    const length = headers['content-length'];
    const principal =
      req.method === 'POST' &&
      req.url === ROUTE &&
      headers['idempotency-key'] === undefined &&
      headers['transfer-encoding'] === undefined &&
      length !== undefined &&
      Number(length) <= bodyLimit &&
      isJsonContentType(headers['content-type'])
        ? auth.peek(headers.authorization)
        : undefined;
    if (principal === undefined || !principal.scopes.includes('query')) {
      fallback(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      if (!tryServe(req, res, principal, body, started)) {
        // @hono/node-server reads a pre-read body from `rawBody` instead of the spent stream.
        (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        fallback(req, res);
      }
    });
  };
}
