// One query call, from credential to answer, free of any transport: POST /v1/query and
// GET /v1/analytics/{name} are decided here and nowhere else. The Hono routes and the node:http
// fast path (adapters/) hand over plain data and write back the QueryReply.
//
//   admission (credential → principal, `query` scope, rate limit)
//   → the request (body or path + query string) → the analytic the caller may call → typed params
//   → Idempotency-Key (POST) → the pipeline (run-query.ts: metering, result cache, warehouse)
//   → the answer with its headers; any error → the envelope, with the headers it carries.
import { isConnectorError, type ParamValues } from '@quarry/sdk-connector';
import { z } from 'zod';
import { answerHolder, type Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import { asApiError, type ErrorLogger, errorPayload } from '../errors/error-payload.js';
import { failSpan, type TraceSpan } from '../observability/tracing.js';
import { FORMAT_MEDIA_TYPES, type ResultFormat, requestedFormat } from '../results/result-formats.js';
import type { AgentChoice } from '../store/agent-tool-repository.js';
import type { IdempotencyRepository } from '../store/idempotency-repository.js';
import { parseJsonBody, requireJsonContentType, validateBody } from '../validation/json-body.js';
import {
  type AdmissionDeps,
  authorize,
  type LimitHeaders,
  spendPreview,
  spendRateLimit,
} from './admission.js';
import {
  asQueryValue,
  corsFor,
  crossOrigin,
  embedAnalytic,
  type QueryCors,
  withFixedParams,
} from './embed-call.js';
import { type IdempotencyClaimed, withIdempotency } from './idempotency.js';
import type { Jobs } from './jobs.js';
import { type LargeReply, type LargeResults, MAX_PAGE_SIZE } from './large-results.js';
import { deprecationHeaders, type PinnedCalls, refuseSunset } from './pinned-version.js';
import type { PreviewListings } from './preview-listings.js';
import { checkPriceLimit, MAX_CREDITS, parseMaxCredits } from './price-limit.js';
import type { QueryReply } from './query-reply.js';
import type { QueryService } from './query-service.js';
import { quotaHeaders, type RunQueryDeps, resultCacheKey, runQuery } from './run-query.js';

/** The body of POST /v1/query (its OpenAPI form is in routes/query.ts). */
export const QueryRequestSchema = z
  .object({
    // `name`, or `name@3` for version 3 (query/pinned-version.ts).
    source: z.string().min(1).max(128),
    // Optional: an analytic without required params is called with `{"source": …}` alone.
    params: z.record(z.string(), z.unknown()).default({}),
    // The caller's price limit: refused with PRICE_ABOVE_LIMIT when the call would cost more.
    max_credits: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    // Pages (query/large-results.ts): the first call asks for a page size, the next ones send
    // the previous answer's `meta.next`.
    page_size: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
    cursor: z.string().min(1).max(1000).optional(),
    // An asynchronous call (query/jobs.ts), as `Prefer: respond-async` asks.
    async: z.boolean().optional(),
  })
  .strict();

/** Marketplace previews (calls with a try-token): their row cap and daily allowance per account. */
export interface PreviewLimits {
  /** QUARRY_PREVIEW_ROWS: the most rows a preview answers. */
  readonly rows: number;
  /** QUARRY_PREVIEWS_PER_DAY: previews an account may make in a day, across all its keys. */
  readonly perDay: number;
  /** Whether an analytic is listed with previews on now (asked on every preview call). */
  readonly listings: Pick<PreviewListings, 'previewable'>;
}

export interface QueryCallDeps extends AdmissionDeps, RunQueryDeps {
  readonly queries: QueryService;
  readonly idempotency: IdempotencyRepository;
  readonly previews: PreviewLimits;
  /** Where calls of a pinned version (`name@3`) are remembered, so the version is kept; absent: nowhere. */
  readonly pinnedCalls?: PinnedCalls;
  /** The query routes' CORS (query/embed-call.ts); without it, every cross-origin page is refused. */
  readonly embed?: QueryCors;
  /** Pages and exports (absent: `page_size`, cursors and formats are refused). */
  readonly large?: LargeResults;
  /** Asynchronous queries (absent: `Prefer: respond-async` is ignored and `async: true` refused). */
  readonly jobs?: Jobs;
  /** Test-only: hold each served call this long after its charge is durable (see config.ts). */
  readonly pauseAfterChargeMs?: number;
  readonly logger: ErrorLogger & { child(bindings: object): ErrorLogger };
}

/** The request headers a query call reads (lower-case names, as node:http gives them). */
export interface QueryCallHeaders {
  readonly authorization?: string | undefined;
  readonly 'content-type'?: string | undefined;
  readonly 'if-none-match'?: string | undefined;
  readonly 'cache-control'?: string | undefined;
  readonly pragma?: string | undefined;
  readonly 'idempotency-key'?: string | undefined;
  /** A browser's `Origin`, and the `Host` it was sent to (same-origin pages are not CORS). */
  readonly origin?: string | undefined;
  readonly host?: string | undefined;
  /** The format of the answer: JSON unless it names CSV, NDJSON, Arrow or Parquet. */
  readonly accept?: string | undefined;
  /** `respond-async` makes the call a job (RFC 7240). */
  readonly prefer?: string | undefined;
}

/** A query call as it arrived: a JSON body (POST) or an analytic name and query string (GET). */
export type QueryCallRequest =
  | { readonly method: 'POST'; readonly body: string | Uint8Array }
  | {
      readonly method: 'GET';
      readonly name: string;
      readonly query: Readonly<Record<string, string | readonly string[]>>;
    };

export interface QueryCall {
  readonly requestId: string;
  /** The client address per-address limits count against (the adapter knows the transport). */
  readonly address: string;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  readonly headers: QueryCallHeaders;
  readonly request: QueryCallRequest;
  /** The request's abort signal, asked for only when the warehouse must be queried. */
  readonly signal: () => AbortSignal | undefined;
  /**
   * The principal of `headers.authorization`, when the transport already authorized it with the
   * `query` scope for this very request (the MCP endpoint's tool calls): not authorized twice.
   */
  readonly admitted?: Principal;
  /**
   * The POST body's params are an MCP tool's arguments, flat: `max_credits` among them is the
   * caller's price limit, as in a GET's query string (see flatLimit).
   */
  readonly flatParams?: boolean;
  /**
   * An MCP tool call: the account's choice of agent tools. An analytic of another owner it did
   * not add is refused (FORBIDDEN), and its `maxCredits` is the price limit of a call that sends
   * none (docs/mcp.md).
   */
  readonly agent?: AgentChoice;
  /** The request's span while tracing is on: the call's stages are spans of it. */
  readonly trace?: TraceSpan | undefined;
}

export type QueryCallHandler = (call: QueryCall) => Promise<QueryReply>;

/** A body already decided for an account: its analytic (while the catalog hands out the same entry), params and cache key. */
interface Decided {
  readonly source: string;
  readonly entry: CatalogEntry;
  readonly params: ParamValues;
  readonly cacheKey: string | undefined;
  /** The caller's max_credits, if sent. */
  readonly maxCredits: number | undefined;
  /** Pages: the page size of a first call, or the cursor of a following one. */
  readonly pageSize?: number | undefined;
  readonly cursor?: string | undefined;
  /** GET's `format=`, if sent. */
  readonly format?: string | undefined;
  /** The body's `async`, if sent. */
  readonly async?: boolean | undefined;
}

/** Bodies up to this size are remembered with their decision. */
const MAX_REMEMBERED_BODY = 1024;
/** Decisions remembered at once; the memo starts over when full (at most ~10 MiB of bodies). */
const MAX_REMEMBERED = 10_000;

const bodyText = (body: string | Uint8Array) =>
  typeof body === 'string'
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');

/** Whether the caller asked to bypass the cache (`Cache-Control: no-cache` or `no-store`, `Pragma: no-cache`). */
export function bypassesCache(cacheControl: string | undefined, pragma: string | undefined): boolean {
  if (cacheControl === undefined && pragma === undefined) return false;
  const cc = cacheControl?.toLowerCase() ?? '';
  return cc.includes('no-cache') || cc.includes('no-store') || pragma?.toLowerCase() === 'no-cache';
}

/**
 * Where params travel flat beside the limit (a GET's query string, MCP arguments), `max_credits`
 * is the caller's limit, unless the analytic declares a param of that name (only one deployed
 * before the name was reserved can): then it stays that param. Undefined when not sent.
 */
function flatLimit(entry: CatalogEntry, values: Readonly<Record<string, unknown>>): number | undefined {
  if (!Object.hasOwn(values, MAX_CREDITS) || Object.hasOwn(entry.definition.params, MAX_CREDITS))
    return undefined;
  return parseMaxCredits(values[MAX_CREDITS]);
}

/** `values` without the limit: a null-prototype copy, as the adapters hand over (`?__proto__=…` stays a param). */
function withoutLimit<T>(
  values: Readonly<Record<string, T>>,
  also: readonly string[] = [],
): Record<string, T> {
  const rest: Record<string, T> = Object.create(null);
  for (const key of Object.keys(values))
    if (key !== MAX_CREDITS && !also.includes(key)) rest[key] = values[key] as T;
  return rest;
}

/** Names a GET's query string reserves beside `max_credits` (pages and formats), unless the analytic declares them. */
const PAGE_NAMES = ['page_size', 'cursor', 'format'] as const;

/** A GET's page size, cursor and format, each undefined when not sent or when the analytic declares a param of that name. */
function flatPaging(
  entry: CatalogEntry,
  query: Readonly<Record<string, string | readonly string[]>>,
): { pageSize?: number; cursor?: string; format?: string; names: string[] } {
  const names: string[] = [];
  const one = (name: (typeof PAGE_NAMES)[number]): string | undefined => {
    if (!Object.hasOwn(query, name) || Object.hasOwn(entry.definition.params, name)) return undefined;
    names.push(name);
    const value = query[name];
    if (typeof value !== 'string') {
      throw new ApiError('INVALID_REQUEST', `${name} may be given once.`, {
        details: [{ param: name, message: 'repeated' }],
      });
    }
    return value;
  };
  const size = one('page_size');
  const cursor = one('cursor');
  const format = one('format');
  let pageSize: number | undefined;
  if (size !== undefined) {
    pageSize = /^[0-9]{1,6}$/.test(size) ? Number(size) : Number.NaN;
    if (!(pageSize >= 1 && pageSize <= MAX_PAGE_SIZE)) {
      throw new ApiError('INVALID_REQUEST', `page_size must be a whole number from 1 to ${MAX_PAGE_SIZE}.`, {
        details: [{ param: 'page_size', message: `not a whole number from 1 to ${MAX_PAGE_SIZE}` }],
      });
    }
  }
  return {
    ...(pageSize === undefined ? {} : { pageSize }),
    ...(cursor === undefined ? {} : { cursor }),
    ...(format === undefined ? {} : { format }),
    names,
  };
}

/** Whether a `Prefer` header asks for `respond-async` (RFC 7240: comma-separated preferences). */
export function prefersAsync(prefer: string | undefined): boolean {
  if (prefer === undefined) return false;
  return prefer
    .split(',')
    .some((item) => (item.split(';')[0] ?? '').trim().toLowerCase() === 'respond-async');
}

/** A call with a marketplace try-token: a free, capped preview. */
const isPreview = (principal: Principal) => principal.origin === 'marketplace';

/**
 * A try-token previews the one analytic it was minted for, and only while it is listed with
 * previews on (its owner's own test runs excepted: it may try any analytic of its own); FORBIDDEN
 * otherwise. Checked on every call after the call is decided, whichever way it was (the memo of
 * decided bodies included): a token outlives an unpublish by up to its 5 minutes.
 */
function previewable(
  principal: Principal,
  entry: CatalogEntry,
  listings: PreviewLimits['listings'],
): void | Promise<void> {
  if (principal.previewOf !== entry.name) {
    throw new ApiError(
      'FORBIDDEN',
      `This try-token previews "${principal.previewOf ?? ''}" only; mint one for "${entry.name}" to try it.`,
    );
  }
  if (entry.ownerId === principal.accountId) return;
  const listed = listings.previewable(entry.name);
  const refuse = (ok: boolean) => {
    if (!ok) {
      throw new ApiError(
        'FORBIDDEN',
        `"${entry.name}" is not on the marketplace with free previews now; call it with an API key.`,
      );
    }
  };
  return listed instanceof Promise ? listed.then(refuse) : refuse(listed);
}

/**
 * FORBIDDEN for an MCP call of another owner's analytic the account did not add to its agent
 * tools: an agent's tools are the account's choice, never whatever a stranger's listing text
 * tells the agent to call.
 */
function notAnAgentTool(principal: Principal, entry: CatalogEntry, agent: AgentChoice): void {
  if (entry.ownerId === principal.accountId || agent.added.has(entry.name)) return;
  throw new ApiError(
    'FORBIDDEN',
    `"${entry.name}" is not one of this account's agent tools, so an agent cannot call it. A person with the account scope adds it with POST /v1/account/tools {"source": "${entry.name}"} or on its marketplace page in the console; an agent cannot add tools itself. It can try it for free with marketplace_preview.`,
  );
}

/** Builds the one query-call handler of a gateway (it keeps a memo of decided bodies). */
export function createQueryCallHandler(deps: QueryCallDeps): QueryCallHandler {
  const { queries } = deps;
  // The same bytes from the same account decide the same call, while the catalog still hands out
  // the entry they resolved to (a new version or visibility is a new entry object): repeated
  // calls skip JSON.parse, the param schema and the cache-key canonicalisation.
  const decided = new Map<string, Decided>();

  async function decidePost(
    principal: Principal,
    headers: QueryCallHeaders,
    body: string | Uint8Array,
    flat: boolean,
  ): Promise<Decided> {
    // Before the memo: the same bytes sent as another content type are refused, not remembered.
    requireJsonContentType(headers['content-type']);
    const text = bodyText(body);
    // Keyed by origin too: the same body is a full call with a key and a preview with a try-token.
    // And by flatness: MCP arguments read `max_credits` among the params, a REST body does not.
    // Not for an embed token: the same bytes mean other params under another token's fixed ones.
    const memo =
      text.length <= MAX_REMEMBERED_BODY && principal.embed === undefined
        ? `${flat ? 'mcp ' : ''}${principal.origin} ${principal.accountId}\n${text}`
        : undefined;
    const known = memo === undefined ? undefined : decided.get(memo);
    if (known !== undefined && queries.peek(principal, known.source) === known.entry) return known;
    const request = validateBody(QueryRequestSchema, parseJsonBody(headers['content-type'], text));
    // Before the lookup: a token is refused an analytic it does not name, whether it exists or not.
    const granted = embedAnalytic(principal, request.source);
    const entry =
      queries.peek(principal, request.source) ?? (await queries.resolve(principal, request.source));
    const limit = flat ? flatLimit(entry, request.params) : undefined;
    const sent = limit === undefined ? request.params : withoutLimit(request.params);
    const { params, scope } = withFixedParams(granted?.fixedParams ?? {}, sent, (values) =>
      queries.params(entry, values),
    );
    const call: Decided = {
      source: request.source,
      entry,
      params,
      cacheKey: resultCacheKey(entry, params, isPreview(principal), scope),
      maxCredits: request.max_credits ?? limit,
      pageSize: request.page_size,
      cursor: request.cursor,
      async: request.async,
    };
    if (memo !== undefined) {
      if (decided.size >= MAX_REMEMBERED) decided.clear();
      decided.set(memo, call);
    }
    return call;
  }

  async function decideGet(
    principal: Principal,
    name: string,
    query: Readonly<Record<string, string | readonly string[]>>,
  ): Promise<Decided> {
    const granted = embedAnalytic(principal, name);
    const entry = await queries.resolve(principal, name);
    const maxCredits = flatLimit(entry, query);
    const paging = flatPaging(entry, query);
    const sent =
      maxCredits === undefined && paging.names.length === 0 ? query : withoutLimit(query, paging.names);
    const fixed: Record<string, string | readonly string[]> = {};
    for (const [key, value] of Object.entries(granted?.fixedParams ?? {}))
      fixed[key] = asQueryValue(key, value);
    const { params, scope } = withFixedParams(fixed, sent, (values) =>
      queries.queryStringParams(entry, values),
    );
    return {
      source: name,
      entry,
      params,
      cacheKey: resultCacheKey(entry, params, isPreview(principal), scope),
      maxCredits,
      pageSize: paging.pageSize,
      cursor: paging.cursor,
      format: paging.format,
    };
  }

  function decide(call: QueryCall, principal: Principal): Promise<Decided> {
    const { request } = call;
    return request.method === 'POST'
      ? decidePost(principal, call.headers, request.body, call.flatParams === true)
      : decideGet(principal, request.name, request.query);
  }

  /** The pipeline for an admitted, decided call; throws ApiError (or any error) on refusal or failure. */
  async function serve(
    call: QueryCall,
    principal: Principal,
    limits: LimitHeaders,
    decision: Decided,
    idempotency?: IdempotencyClaimed,
  ) {
    const { headers } = call;
    const { answer, charge } = await runQuery(deps, {
      principal,
      entry: decision.entry,
      params: decision.params,
      cacheKey: decision.cacheKey,
      requestId: call.requestId,
      started: call.started,
      bypassCache: bypassesCache(headers['cache-control'], headers.pragma),
      ifNoneMatch: headers['if-none-match'],
      signal: call.signal,
      previewRows: isPreview(principal) ? deps.previews.rows : undefined,
      idempotency,
      trace: call.trace,
    });
    if (deps.pauseAfterChargeMs) await new Promise((resolve) => setTimeout(resolve, deps.pauseAfterChargeMs));
    const out = answer.headers;
    out['x-request-id'] = call.requestId;
    const { entry } = decision;
    if (entry.deprecation !== undefined) deprecationHeaders(entry, out);
    // Called by version (`name@3`): the version is kept while callers use it.
    if (decision.source !== entry.name) deps.pinnedCalls?.record(entry, principal.accountId);
    const limitHeaders = quotaHeaders(deps, principal, limits, charge);
    if (limitHeaders !== undefined) for (const name in limitHeaders) out[name] = limitHeaders[name] as string;
    return { status: answer.status, headers: out, body: answer.body, principal } satisfies QueryReply;
  }

  function errorReply(
    call: QueryCall,
    error: unknown,
    principal: Principal | undefined,
    limits: LimitHeaders,
    entry: CatalogEntry | undefined,
  ): QueryReply {
    let apiError = asApiError(error, deps.logger.child({ request_id: call.requestId }));
    // The analytic's owner sees what its warehouse said (secrets removed), to fix the SQL;
    // every other caller keeps the generic message (docs/design.md §8).
    if (
      isConnectorError(error) &&
      error.warehouseMessage !== undefined &&
      principal !== undefined &&
      entry !== undefined &&
      principal.accountId === entry.ownerId
    ) {
      apiError = new ApiError(
        apiError.code,
        `${apiError.message} Your warehouse said: ${error.warehouseMessage}`,
        {
          details: [{ message: error.warehouseMessage }],
        },
      );
    }
    let headers = limits;
    if (apiError.code === 'RATE_LIMIT_EXCEEDED') headers = { ...apiError.headers };
    else if (principal !== undefined) headers = quotaHeaders(deps, principal, limits, apiError);
    const payload = errorPayload(apiError, call.requestId, headers);
    payload.headers['content-length'] = String(Buffer.byteLength(payload.body));
    return {
      status: payload.status,
      headers: payload.headers,
      body: payload.body,
      principal,
      errorCode: apiError.code,
      limitReason: apiError.reason,
    };
  }

  /** The headers every answer of the query routes carries: `Vary: Origin`, and CORS once allowed. */
  function withCors(reply: QueryReply, cors: Record<string, string> | undefined): QueryReply {
    const { headers } = reply;
    headers.vary = headers.vary === undefined ? 'Origin' : `${headers.vary}, Origin`;
    if (cors !== undefined) for (const name in cors) headers[name] = cors[name] as string;
    return reply;
  }

  /** What a call asks beyond one JSON answer (a page, a cursor, a format); undefined for a plain call. */
  function largeCall(
    call: QueryCall,
    principal: Principal,
    decision: Decided,
  ): { format: ResultFormat } | undefined {
    const format = requestedFormat(call.headers.accept, decision.format);
    if (format === undefined) {
      throw new ApiError(
        'INVALID_REQUEST',
        `format must be one of json, ${Object.keys(FORMAT_MEDIA_TYPES).join(', ')}.`,
        { details: [{ param: 'format', message: 'unknown format' }] },
      );
    }
    if (decision.pageSize === undefined && decision.cursor === undefined && format === 'json')
      return undefined;
    if (deps.large === undefined) {
      throw new ApiError('INVALID_REQUEST', 'This gateway answers JSON only, without pages.');
    }
    if (isPreview(principal)) {
      throw new ApiError(
        'INVALID_REQUEST',
        `A preview answers at most ${deps.previews.rows} rows as JSON; pages and export formats need an API key.`,
      );
    }
    if (format !== 'json' && (decision.pageSize !== undefined || decision.cursor !== undefined)) {
      throw new ApiError(
        'INVALID_REQUEST',
        'Pages are JSON; an export in another format answers the whole result in one stream.',
      );
    }
    if (decision.pageSize !== undefined && decision.cursor !== undefined) {
      throw new ApiError(
        'INVALID_REQUEST',
        'A cursor keeps the page size it was made with; send one or the other.',
      );
    }
    return { format };
  }

  /** Serves a page or an export (query/large-results.ts); its reply carries the rate-limit and quota headers. */
  async function serveLarge(
    call: QueryCall,
    principal: Principal,
    limits: LimitHeaders,
    decision: Decided,
    large: { format: ResultFormat },
  ): Promise<QueryReply | undefined> {
    const results = deps.large as LargeResults;
    const pipeline = {
      principal,
      entry: decision.entry,
      params: decision.params,
      cacheKey: decision.cacheKey,
      bypassCache: bypassesCache(call.headers['cache-control'], call.headers.pragma),
      requestId: call.requestId,
      started: call.started,
      signal: call.signal,
    };
    const finish = (reply: LargeReply): QueryReply => {
      const headers = reply.headers;
      const { entry } = decision;
      if (entry.deprecation !== undefined) deprecationHeaders(entry, headers);
      if (decision.source !== entry.name) deps.pinnedCalls?.record(entry, principal.accountId);
      const limitHeaders =
        reply.charge === undefined ? limits : quotaHeaders(deps, principal, limits, reply.charge);
      if (limitHeaders !== undefined)
        for (const name in limitHeaders) headers[name] = limitHeaders[name] as string;
      return {
        status: reply.status,
        headers,
        body: reply.body,
        principal,
        ...(reply.stream === undefined ? {} : { stream: reply.stream }),
      };
    };
    if (decision.cursor !== undefined) {
      return finish(
        await results.nextPage(principal, decision.entry, decision.cursor, call.requestId, call.started),
      );
    }
    if (large.format !== 'json') return finish(await results.exportResult(pipeline, large.format));
    const pageSize = decision.pageSize as number;
    const { request } = call;
    const key = request.method === 'POST' ? call.headers['idempotency-key'] : undefined;
    if (key === undefined || request.method !== 'POST')
      return finish(await results.firstPage(pipeline, pageSize));
    const outcome = await withIdempotency(
      deps.idempotency,
      principal.accountId,
      key,
      idempotencyBody(principal, request.body),
      async (claimed) => finish(await results.firstPage({ ...pipeline, idempotency: claimed }, pageSize)),
    );
    if ('reply' in outcome) return outcome.reply;
    return undefined;
  }

  /** A call made a job: 202 with its Location (query/jobs.ts). Admission already happened, as for any call. */
  async function submitJob(
    call: QueryCall,
    principal: Principal,
    limits: LimitHeaders,
    decision: Decided,
  ): Promise<QueryReply> {
    const jobs = deps.jobs;
    if (jobs === undefined || call.agent !== undefined) {
      throw new ApiError('INVALID_REQUEST', 'This endpoint answers synchronously only.');
    }
    if (isPreview(principal)) {
      throw new ApiError('INVALID_REQUEST', 'A preview answers at once; asynchronous calls need an API key.');
    }
    if (decision.pageSize !== undefined || decision.cursor !== undefined) {
      throw new ApiError(
        'INVALID_REQUEST',
        "An asynchronous call takes no page_size or cursor: read the job's result in pages from GET /v1/jobs/{id}.",
      );
    }
    if (call.headers['idempotency-key'] !== undefined) {
      throw new ApiError(
        'INVALID_REQUEST',
        'Idempotency-Key is not supported on asynchronous calls: a retried submission would be a second job. List your jobs with GET /v1/jobs instead.',
      );
    }
    const job = await jobs.submit({
      principal,
      entry: decision.entry,
      params: decision.params,
      requestId: call.requestId,
    });
    const { entry } = decision;
    if (decision.source !== entry.name) deps.pinnedCalls?.record(entry, principal.accountId);
    const body = JSON.stringify(job);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      location: `/v1/jobs/${job.id as string}`,
      'preference-applied': 'respond-async',
      'x-request-id': call.requestId,
      'cache-control': 'private, no-store',
      ...limits,
    };
    if (entry.deprecation !== undefined) deprecationHeaders(entry, headers);
    return { status: 202, headers, body, principal };
  }

  /**
   * What an Idempotency-Key is bound to. An embed token's answer is its own (its fixed params): the
   * same key and body sent with another token of the account is another request, never a replay.
   */
  function idempotencyBody(who: Principal, body: string | Uint8Array): string | Uint8Array {
    return who.embed === undefined ? body : `${answerHolder(who)}\n${bodyText(body)}`;
  }

  return async function handleQueryCall(call) {
    const cors: { headers?: Record<string, string> } = {};
    return withCors(await handle(call, cors), cors.headers);
  };

  async function handle(call: QueryCall, cors: { headers?: Record<string, string> }): Promise<QueryReply> {
    let principal: Principal | undefined;
    let limits: LimitHeaders;
    let entry: CatalogEntry | undefined;
    // The stage span open now (tracing on only), ended as failed if the stage throws.
    let stage = call.trace?.child('quarry.admission');
    try {
      const authorized = call.admitted ?? authorize(deps, call.headers.authorization, 'query', call.address);
      principal = authorized instanceof Promise ? await authorized : authorized;
      // Before any limit is spent: a page of a refused origin costs nothing.
      const origin = crossOrigin(call.headers.origin, call.headers.host, deps.embed?.publicOrigin);
      if (origin !== undefined) {
        const allowed = corsFor(deps.embed, principal, origin);
        cors.headers = allowed instanceof Promise ? await allowed : allowed;
      }
      const spent = spendRateLimit(deps.rateLimiter, principal);
      limits = spent instanceof Promise ? await spent : spent;
      const own = principal.embed?.rateLimit;
      if (own !== undefined) {
        // The token's own limit, besides its account's (the account's headers are the ones sent).
        // The whole limit may be spent at once, then it refills evenly over the window.
        const policy = { limit: own.limit, windowSeconds: own.windowSeconds, burst: own.limit };
        await spendRateLimit(
          deps.rateLimiter,
          { ...principal, rateLimit: { unlimited: false, policy } },
          `embed:${principal.accountId}:${principal.embed?.tokenId ?? ''}`,
        );
      }
      if (isPreview(principal)) await spendPreview(deps.rateLimiter, principal, deps.previews.perDay);
      if (stage !== undefined) {
        stage.setAttribute('quarry.account_id', principal.accountId);
        stage.end();
        stage = undefined;
      }
      const decision = await decide(call, principal);
      entry = decision.entry;
      call.trace?.setAttribute('quarry.analytic', decision.source);
      if (isPreview(principal)) await previewable(principal, decision.entry, deps.previews.listings);
      if (call.agent !== undefined) notAnAgentTool(principal, entry, call.agent);
      if (entry.deprecation !== undefined) refuseSunset(entry, Date.now());
      // Before any warehouse work, charge or idempotency claim: a refusal costs nothing.
      const maxCredits = decision.maxCredits ?? call.agent?.maxCredits;
      if (maxCredits !== undefined)
        checkPriceLimit(decision.source, deps.metering.creditsOf(principal, entry), maxCredits);
      const { request } = call;
      if (decision.async === true || (decision.async === undefined && prefersAsync(call.headers.prefer))) {
        return await submitJob(call, principal, limits, decision);
      }
      const large = largeCall(call, principal, decision);
      if (large !== undefined) {
        const reply = await serveLarge(call, principal, limits, decision, large);
        if (reply !== undefined) return reply;
      }
      const key = request.method === 'POST' ? call.headers['idempotency-key'] : undefined;
      if (key === undefined || request.method !== 'POST')
        return await serve(call, principal, limits, decision);
      const who = principal;
      const fingerprinted = idempotencyBody(who, request.body);
      const outcome = await withIdempotency(deps.idempotency, who.accountId, key, fingerprinted, (claimed) =>
        serve(call, who, limits, decision, claimed),
      );
      if ('reply' in outcome) return outcome.reply;
      const { status, body } = outcome.replay;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'idempotent-replayed': 'true',
        'x-request-id': call.requestId,
        ...limits,
      };
      if (entry.deprecation !== undefined) deprecationHeaders(entry, headers);
      if (body.length > 0) headers['content-length'] = String(Buffer.byteLength(body));
      return { status, headers, body: status === 304 ? undefined : body, principal };
    } catch (error) {
      failSpan(stage, error);
      return errorReply(call, error, principal, limits, entry);
    }
  }
}
