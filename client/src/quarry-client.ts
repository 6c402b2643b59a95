// createQuarryClient: the typed client for a Quarry gateway (queries, keys, usage, owner
// analytics, statements and payouts, the account). Runs wherever `fetch` does: it uses only web
// standards (fetch, AbortController, URL, btoa, crypto.getRandomValues), never a Node module.

import { createEmbedTokenSource, type EmbedTokenProvider } from './embed-token-source.js';
import { type Credential, createTransport, type Transport } from './http-transport.js';
import { createOAuthTokenSource, type OAuthCredentials } from './oauth-token-source.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import type {
  Account,
  AgentTool,
  AlertSettings,
  Analytic,
  AnalyticDefinition,
  AnalyticVersion,
  ApiKey,
  Billing,
  BillingPortal,
  Budget,
  Call,
  Calls,
  Checkout,
  Connection,
  ConnectionDetail,
  ConnectionRemoval,
  ConnectionTest,
  ConnectorTypes,
  CorsSettings,
  DeployResult,
  DeprecatedVersion,
  DryRunResult,
  EmbedSecret,
  EmbedToken,
  ExportedResult,
  ExportFormat,
  IssuedApiKey,
  IssuedEmbedSecret,
  IssuedOAuthClient,
  IssuedWebhookEndpoint,
  Job,
  JobList,
  JobState,
  Listing,
  ListingDetail,
  ListingInput,
  ListingSearch,
  McpSettings,
  McpSettingsResponse,
  NewApiKey,
  NewConnection,
  NewEmbedToken,
  OAuthClient,
  OwnerListing,
  PayoutAccount,
  PayoutOnboarding,
  Payouts,
  Plan,
  QueryParams,
  QueryResult,
  QueryStringParams,
  RotatedEmbedSecret,
  SignUpResult,
  Statement,
  TryToken,
  Usage,
  WebhookDelivery,
  WebhookEndpoint,
} from './types.js';

/**
 * Where the gateway is, how to authenticate (an API key, or an OAuth client) and, optionally,
 * how calls behave (`timeoutMs`, `retry`, `fetch`, `userAgent`): one object. An unknown key is
 * refused with a TypeError naming it.
 */
export type QuarryClientConfig = QuarryClientOptions &
  (
    | { readonly baseUrl: string; readonly apiKey: string }
    | { readonly baseUrl: string; readonly oauth: OAuthCredentials }
    /**
     * In a web page: a function fetching a fresh embed token from your backend (which mints it
     * with `embedTokens.create` or an embed secret). The client asks again shortly before each
     * token expires, and once more when the gateway refuses one. Only the query calls accept it.
     */
    | { readonly baseUrl: string; readonly embedToken: EmbedTokenProvider }
  );

/** How calls behave; given in the config object (a second argument is still read, deprecated). */
export interface QuarryClientOptions {
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Bound on a whole call, retries and waits included (default 120 000 ms). */
  readonly timeoutMs?: number;
  /** Retry policy; unset fields keep their defaults (3 retries, 250 ms base, 30 s max). */
  readonly retry?: Partial<RetryOptions>;
  /** The User-Agent header (browsers may ignore it). */
  readonly userAgent?: string;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call: the in-flight request and any wait before a retry. */
  readonly signal?: AbortSignal;
}

/** The media type of each export format. */
const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
  arrow: 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

/** An export's Response as the client hands it over. */
function exported(response: Response, format: ExportFormat): ExportedResult {
  if (response.body === null) throw new TypeError('the gateway answered an export without a body');
  return {
    body: response.body,
    contentType: response.headers.get('content-type') ?? EXPORT_MEDIA_TYPES[format],
    rowCount: Number(response.headers.get('x-row-count') ?? 0),
    truncated: response.headers.get('x-truncated') === 'true',
    credits: Number(response.headers.get('x-credits') ?? 0),
    requestId: response.headers.get('x-request-id') ?? undefined,
  };
}

/** Options of a paged query. */
export interface PagesOptions extends Omit<QueryOptions, 'idempotencyKey'> {
  /** Rows a page (1–10,000; default 10,000). */
  readonly pageSize?: number;
}

export interface QueryOptions extends CallOptions {
  /** Bypass the gateway's result cache (`Cache-Control: no-cache`); the call is still charged. */
  readonly noCache?: boolean;
  /**
   * Sent as `Idempotency-Key` (default: a random one per call), so a retried query is answered
   * once and charged once.
   */
  readonly idempotencyKey?: string;
  /**
   * The most credits the call may cost (`max_credits`): a dearer call is refused with
   * PriceAboveLimitError (409 `PRICE_ABOVE_LIMIT`), nothing run or charged.
   */
  readonly maxCredits?: number;
}

/** A reporting period: a calendar month in UTC, `YYYY-MM` (default: the current one). */
export interface PeriodOptions extends CallOptions {
  readonly period?: string;
}

/** Where the payment pages send the browser back (an absolute URL on the gateway's origin). */
export interface ReturnUrlOptions extends CallOptions {
  readonly returnUrl?: string;
}

export interface QuarryClient {
  /** Runs an analytic (`POST /v1/query`) with typed params. */
  query<Row = Record<string, unknown>, Insights = unknown>(
    source: string,
    params?: QueryParams,
    options?: QueryOptions,
  ): Promise<QueryResult<Row, Insights>>;
  /**
   * Runs an analytic once and yields its result page by page (`page_size`, then `meta.next`): one
   * warehouse query and one charge, the following pages read from the gateway's snapshot, free.
   * A snapshot gone midway throws CURSOR_EXPIRED (410): rerun to start over.
   */
  pages<Row = Record<string, unknown>>(
    source: string,
    params?: QueryParams,
    options?: PagesOptions,
  ): AsyncIterable<QueryResult<Row>>;
  /**
   * Streams the whole result in `format` (`POST /v1/query` with its `Accept`), charged once its
   * last byte is sent. Refusals (params, quota, the warehouse) throw before any byte, as for JSON.
   */
  export(
    source: string,
    params: QueryParams,
    format: ExportFormat,
    options?: Omit<QueryOptions, 'idempotencyKey'>,
  ): Promise<ExportedResult>;
  /**
   * Asynchronous queries (docs/large-results.md): a job runs past the synchronous time limit, is
   * charged once when it succeeds, and its result is read in pages (`get` with `pageSize`, then
   * `cursor`) from the gateway instance that ran it.
   */
  readonly jobs: {
    /**
     * Submits a query as a job (`Prefer: respond-async`): the queued job, once admitted. With
     * `queryString: true` the params are query-string values coerced by the gateway, as in
     * `analytics.get` (`GET /v1/analytics/:name`).
     */
    submit(
      source: string,
      params?: QueryParams | QueryStringParams,
      options?: Omit<QueryOptions, 'idempotencyKey'> & { readonly queryString?: boolean },
    ): Promise<Job>;
    /** The job's state, and once succeeded a page of its result. */
    get<Row = Record<string, unknown>>(
      id: string,
      options?: CallOptions & { readonly pageSize?: number; readonly cursor?: string },
    ): Promise<Job<Row>>;
    /** The account's recent jobs, newest first. */
    list(
      options?: CallOptions & { readonly state?: JobState; readonly limit?: number },
    ): Promise<readonly Job[]>;
    /** Cancels the job: its warehouse query stops, and it is not charged. */
    cancel(id: string, options?: CallOptions): Promise<Job>;
    /**
     * Polls the job every `intervalMs` (default 1 s) until it succeeded, failed or was cancelled,
     * and resolves with it; rejects with an AbortError past `timeoutMs` or when `signal` aborts.
     */
    wait<Row = Record<string, unknown>>(
      id: string,
      options?: CallOptions & {
        readonly intervalMs?: number;
        readonly timeoutMs?: number;
        readonly pageSize?: number;
      },
    ): Promise<Job<Row>>;
  };
  readonly analytics: {
    /** Runs an analytic with query-string params (`GET /v1/analytics/:name`), coerced by the gateway. */
    get<Row = Record<string, unknown>, Insights = unknown>(
      name: string,
      params?: QueryStringParams,
      options?: Omit<QueryOptions, 'idempotencyKey'>,
    ): Promise<QueryResult<Row, Insights>>;
    /** Streams the whole result in `format` with query-string params (`GET /v1/analytics/:name?format=`). */
    export(
      name: string,
      params: QueryStringParams,
      format: ExportFormat,
      options?: Omit<QueryOptions, 'idempotencyKey'>,
    ): Promise<ExportedResult>;
    /** Your analytics at their current versions (owner scope). */
    list(options?: CallOptions): Promise<readonly Analytic[]>;
    /** Creates the analytic, adds a version when its definition changed, or changes nothing. */
    deploy(definition: AnalyticDefinition, options?: CallOptions): Promise<DeployResult>;
    /** Every kept version of one of your analytics. */
    versions(name: string, options?: CallOptions): Promise<readonly AnalyticVersion[]>;
    /**
     * Deprecates a version callers pin (`name@version`, not the current one): its calls carry
     * `Deprecation` and `Sunset` headers and are refused from `sunset` on (an ISO 8601 time, at
     * most 366 days ahead). Setting it again moves the sunset.
     */
    deprecate(
      name: string,
      version: number,
      options: CallOptions & { readonly sunset: string },
    ): Promise<DeprecatedVersion>;
    /** Withdraws a version's deprecation. */
    undeprecate(name: string, version: number, options?: CallOptions): Promise<void>;
    /**
     * Runs every check of a deploy (the SQL against the warehouse included) and says what the
     * deploy would do; nothing is saved.
     */
    dryRun(definition: AnalyticDefinition, options?: CallOptions): Promise<DryRunResult>;
    /**
     * Creates an analytic (`POST /v1/owner/analytics`); a ConflictError when the name is taken.
     * The SQL is tried against the warehouse first unless `check: false`.
     */
    create(
      definition: AnalyticDefinition,
      options?: CallOptions & { readonly check?: boolean },
    ): Promise<Analytic>;
    /** Replaces the definition of one of your analytics with a whole new one: always a new version. */
    update(name: string, definition: AnalyticDefinition, options?: CallOptions): Promise<Analytic>;
    /** One of your analytics, at its current version or at `version`. */
    describe(name: string, options?: CallOptions & { readonly version?: number }): Promise<Analytic>;
    /** Deletes one of your analytics (its name becomes free). */
    delete(name: string, options?: CallOptions): Promise<void>;
    /**
     * Drops the cached answers of one of your analytics on every gateway instance (within about a
     * second), for when its data changed before the cache TTL ran out.
     */
    purgeCache(name: string, options?: CallOptions): Promise<void>;
  };
  readonly connections: {
    list(options?: CallOptions): Promise<readonly Connection[]>;
    /**
     * Saves a warehouse connection; the gateway opens a session with it first unless
     * `test: false` (a failure is an InvalidRequestError in the warehouse's own words).
     */
    create(
      connection: NewConnection,
      options?: CallOptions & { readonly test?: boolean },
    ): Promise<Connection>;
    /** One connection and its circuit breaker (open after repeated warehouse faults). */
    get(id: string, options?: CallOptions): Promise<ConnectionDetail>;
    /** Opens a session to the warehouse; resolves with the round trip in milliseconds. */
    test(id: string, options?: CallOptions): Promise<ConnectionTest>;
    /**
     * Changes a connection in place (`config` holds only the fields to change, secrets too; `null`
     * removes one); tested before it is saved unless `test: false`. Calls keep being served.
     */
    update(
      id: string,
      change: { readonly config: Readonly<Record<string, unknown>> },
      options?: CallOptions & { readonly test?: boolean },
    ): Promise<Connection>;
    /**
     * Deletes a connection. While analytics use it the gateway refuses (a ConflictError naming
     * them) unless `force`, which also takes their listings off the marketplace.
     */
    delete(id: string, options?: CallOptions & { readonly force?: boolean }): Promise<ConnectionRemoval>;
  };
  readonly listings: {
    /** Lists one of your public analytics on the marketplace (or updates its listing). */
    publish(name: string, listing?: ListingInput, options?: CallOptions): Promise<OwnerListing>;
    /** Your listing of one analytic, published or not. */
    get(name: string, options?: CallOptions): Promise<OwnerListing>;
    /** Takes the listing off the marketplace (the analytic keeps answering its callers). */
    unpublish(name: string, options?: CallOptions): Promise<void>;
  };
  readonly marketplace: {
    /**
     * Listed analytics matching `q` (title, description, name, tags) and `category`, most
     * popular first (`sort: 'newest'`: newest first), one page of `limit` from `offset`.
     */
    search(
      query?: {
        readonly q?: string;
        readonly category?: string;
        readonly sort?: 'popular' | 'newest';
        readonly limit?: number;
        readonly offset?: number;
      },
      options?: CallOptions,
    ): Promise<readonly Listing[]>;
    /**
     * Every listing matching `q` and `category`, in the order of `search`, fetched lazily one
     * page of `pageSize` (1–100, default 100) at a time as the loop asks for more.
     */
    searchAll(
      query?: {
        readonly q?: string;
        readonly category?: string;
        readonly sort?: 'popular' | 'newest';
        readonly pageSize?: number;
      },
      options?: CallOptions,
    ): AsyncIterable<Listing>;
    /** One listing with its params, example request and curl line. */
    get(name: string, options?: CallOptions): Promise<ListingDetail>;
    /**
     * A try-token for free previews of one listed analytic (or one of your own), valid
     * `ttlSeconds` (1–300, default 300): build a client with it as `apiKey` and query.
     */
    tryToken(source: string, options?: CallOptions & { readonly ttlSeconds?: number }): Promise<TryToken>;
  };
  /** The warehouse types this gateway connects to, with each one's config schema. */
  readonly connectors: {
    list(options?: CallOptions): Promise<ConnectorTypes>;
  };
  /** The plans on offer. */
  readonly plans: {
    list(options?: CallOptions): Promise<readonly Plan[]>;
  };
  /** Pay as you Go: the most the account may spend in a period, in USD. */
  readonly budget: {
    get(options?: CallOptions): Promise<Budget>;
    /** Sets the budget (whole cents; at most the operator's cap). */
    set(budgetUsd: number, options?: CallOptions): Promise<Budget>;
  };
  /**
   * Webhook endpoints of your account (account scope): signed events out (docs/webhooks.md). A new
   * endpoint's and a rotation's `secret` is shown once; check deliveries with `verifyWebhook`.
   */
  readonly webhooks: {
    create(
      endpoint: {
        readonly url: string;
        readonly description?: string;
        readonly event_types?: readonly string[];
      },
      options?: CallOptions,
    ): Promise<IssuedWebhookEndpoint>;
    list(options?: CallOptions): Promise<readonly WebhookEndpoint[]>;
    get(id: string, options?: CallOptions): Promise<WebhookEndpoint>;
    update(
      id: string,
      change: {
        readonly url?: string;
        readonly description?: string;
        readonly event_types?: readonly string[];
        readonly enabled?: boolean;
      },
      options?: CallOptions,
    ): Promise<WebhookEndpoint>;
    delete(id: string, options?: CallOptions): Promise<WebhookEndpoint>;
    /** A new secret (shown once); the old one keeps signing for `overlapHours` (default 24). */
    rotateSecret(id: string, overlapHours?: number, options?: CallOptions): Promise<IssuedWebhookEndpoint>;
    /** Sends a `webhook.test` event to the endpoint; its event id (the `webhook-id`). */
    test(id: string, options?: CallOptions): Promise<string>;
    /** The endpoint's delivery log, newest first. */
    deliveries(id: string, limit?: number, options?: CallOptions): Promise<readonly WebhookDelivery[]>;
    /** Sends a finished delivery again (the same `webhook-id`). */
    replay(id: string, deliveryId: string, options?: CallOptions): Promise<WebhookDelivery>;
  };
  /** The account's alert thresholds: usage percentages and the analytic error rate. */
  readonly alerts: {
    get(options?: CallOptions): Promise<AlertSettings>;
    set(settings: AlertSettings, options?: CallOptions): Promise<AlertSettings>;
  };
  /** OAuth clients of your account (client-credentials grant), for services that call the gateway. */
  readonly oauthClients: {
    /** A new client; its `client_secret` is shown this once. Default scopes: all of yours. */
    create(
      client: { readonly name: string; readonly scopes?: readonly string[] },
      options?: CallOptions,
    ): Promise<IssuedOAuthClient>;
    list(options?: CallOptions): Promise<readonly OAuthClient[]>;
    /** Revokes a client: its tokens stop working. */
    revoke(id: string, options?: CallOptions): Promise<void>;
  };
  /** Embed tokens for web pages (docs/embedding.md): mint them on your server, never in a page. */
  readonly embedTokens: {
    /** A token calling `analytics` only, with their fixed params, from `origins` only (`query` scope). */
    create(token: NewEmbedToken, options?: CallOptions): Promise<EmbedToken>;
  };
  /** HS256 secrets your backend mints embed tokens with offline (`keys` scope). */
  readonly embedSecrets: {
    /** A new secret; its `secret` is shown this once. */
    create(name: string, options?: CallOptions): Promise<IssuedEmbedSecret>;
    list(options?: CallOptions): Promise<readonly EmbedSecret[]>;
    /** A new secret; the old one verifies `overlapSeconds` more (default 86 400). */
    rotate(
      id: string,
      options?: CallOptions & { readonly overlapSeconds?: number },
    ): Promise<RotatedEmbedSecret>;
    /** Ends a secret: tokens it signed stop working within seconds. */
    revoke(id: string, options?: CallOptions): Promise<EmbedSecret>;
  };
  /** The account's recent calls (`account` scope). */
  readonly calls: {
    /**
     * A page of the calls of the last 30 days, newest first: served ones and those that failed
     * after running (free). `limit` 1–100 (default 50); pass `next_cursor` as `cursor` for older.
     */
    list(
      options?: CallOptions & {
        readonly analytic?: string;
        readonly status?: string;
        readonly limit?: number;
        readonly cursor?: string;
      },
    ): Promise<Calls>;
    /**
     * Every call of `list` (newest first, `analytic` and `status` filters), fetched lazily one
     * page of `pageSize` (1–100, default 100) at a time as the loop asks for more, following
     * `next_cursor` until it is null.
     */
    listAll(
      options?: CallOptions & {
        readonly analytic?: string;
        readonly status?: string;
        readonly pageSize?: number;
      },
    ): AsyncIterable<Call>;
  };
  /** Whether your keys may be used from other origins' web pages (`account` scope; off by default). */
  readonly cors: {
    get(options?: CallOptions): Promise<CorsSettings>;
    set(allowKeysFromBrowsers: boolean, options?: CallOptions): Promise<CorsSettings>;
  };
  readonly keys: {
    /** A new API key; its `secret` is shown this once. */
    create(key: NewApiKey, options?: CallOptions): Promise<IssuedApiKey>;
    list(options?: CallOptions): Promise<readonly ApiKey[]>;
    /** Revokes a key; every gateway instance refuses it within seconds. */
    revoke(id: string, options?: CallOptions): Promise<ApiKey>;
  };
  readonly usage: {
    get(options?: PeriodOptions): Promise<Usage>;
    /** The same report as CSV (`period,date,analytic,origin,calls,credits`). */
    csv(options?: PeriodOptions): Promise<string>;
  };
  readonly statements: {
    /** Your earnings as an owner in a period (owner scope). */
    get(options?: PeriodOptions): Promise<Statement>;
    /** The same statement as CSV. */
    csv(options?: PeriodOptions): Promise<string>;
  };
  readonly account: {
    get(options?: CallOptions): Promise<Account>;
    /**
     * Sets the password of the console's sign-in (10–200 characters); `currentPassword` is
     * needed only with a console session when one is set already.
     */
    setPassword(
      password: string,
      options?: CallOptions & { readonly currentPassword?: string },
    ): Promise<void>;
  };
  /**
   * The account's agent tools (account scope): the analytics its agents see and may call on
   * /mcp, its own and those added here (docs/mcp.md).
   */
  readonly tools: {
    list(options?: CallOptions): Promise<readonly AgentTool[]>;
    /** Adds an analytic the account may call (public or shared with it). */
    add(name: string, options?: CallOptions): Promise<AgentTool>;
    /** Removes one the account added. */
    remove(name: string, options?: CallOptions): Promise<void>;
  };
  /** The account's MCP settings (account scope). */
  readonly mcp: {
    get(options?: CallOptions): Promise<McpSettings>;
    /** `maxCredits`: the price limit of a tool call without its own `max_credits`; null removes it. */
    set(settings: { readonly maxCredits: number | null }, options?: CallOptions): Promise<McpSettings>;
  };
  readonly billing: {
    /** The account's plan, subscription, card and budget, and the plans with what each offers. */
    get(options?: CallOptions): Promise<Billing>;
    /**
     * A checkout for `plan` (a paid plan, or `payg`: a card on file); open its `url` in a browser.
     * The plan changes once the payment arrives: poll `get()` until `plan.id` does.
     */
    checkout(plan: string, options?: ReturnUrlOptions): Promise<Checkout>;
    /** The payment provider's page for the card, the invoices and cancelling. */
    portal(options?: ReturnUrlOptions): Promise<BillingPortal>;
  };
  /** Being paid as an owner (owner scope): 80% of what callers paid, monthly, through the provider. */
  readonly payouts: {
    /** Where payouts go: the provider's account state, what it still needs, the minimum payout. */
    account(options?: CallOptions): Promise<PayoutAccount>;
    /**
     * The provider's onboarding page (a new URL each call: links expire); open its `url` in a
     * browser. It sends the browser back to `returnUrl` with `onboarding=done` in the query. Poll
     * `account()` until `status` is `complete`. A ConflictError when the gateway pays by hand.
     */
    onboarding(options?: ReturnUrlOptions): Promise<PayoutOnboarding>;
    /** The balance held and carried, and each closed period's payout, newest first. */
    list(options?: CallOptions): Promise<Payouts>;
  };
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_USER_AGENT = 'quarry-client/0.1.0';
/** The largest page of listings and of calls: `searchAll`'s and `calls.listAll`'s default page size. */
const MAX_PAGE_SIZE = 100;

/** 128 random bits as hex (crypto.randomUUID needs a secure context in browsers). */
function randomIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `qc-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

const OPTION_KEYS = ['fetch', 'timeoutMs', 'retry', 'userAgent'] as const;
const CONFIG_KEYS = ['baseUrl', 'apiKey', 'oauth', 'embedToken', ...OPTION_KEYS] as const;
const RETRY_KEYS: readonly (keyof RetryOptions)[] = ['retries', 'baseDelayMs', 'maxDelayMs'];

/** A TypeError for the first key of `value` not in `known` (a typo silently ignored costs hours). */
function refuseUnknownKeys(value: object, known: readonly string[], what: string, who: string): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    throw new TypeError(`${who}: unknown ${what} "${unknown}"; the known ones are ${known.join(', ')}.`);
  }
}

/** Refuses a `timeoutMs` or `retry` value that is not a number, and an unknown retry key. */
function checkOptionValues(options: QuarryClientOptions, who: string): void {
  const { timeoutMs, retry } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) {
    throw new TypeError(
      `${who}: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}.`,
    );
  }
  if (retry !== undefined) {
    refuseUnknownKeys(retry, RETRY_KEYS, 'retry option', who);
    for (const key of RETRY_KEYS) {
      const v = retry[key];
      if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) {
        throw new TypeError(`${who}: retry.${key} must be a number ≥ 0, got ${String(v)}.`);
      }
    }
  }
}

/** The options of the config object over those of the (deprecated) second argument, checked. */
function optionsOf(config: QuarryClientConfig, second: QuarryClientOptions): QuarryClientOptions {
  const who = 'createQuarryClient';
  refuseUnknownKeys(config, CONFIG_KEYS, 'option', who);
  refuseUnknownKeys(second, OPTION_KEYS, 'option', who);
  const merged: QuarryClientOptions = {
    ...second,
    ...Object.fromEntries(OPTION_KEYS.filter((k) => config[k] !== undefined).map((k) => [k, config[k]])),
  };
  checkOptionValues(merged, who);
  return merged;
}

function checkConfig(config: QuarryClientConfig): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(config.baseUrl).protocol;
  } catch {
    // Not a URL at all: refused below with the same message.
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new TypeError(
      `baseUrl must be an absolute http(s) URL such as http://127.0.0.1:8787, got "${config.baseUrl}".`,
    );
  }
  if ('apiKey' in config) {
    if (typeof config.apiKey !== 'string' || config.apiKey === '')
      throw new TypeError('apiKey must be a non-empty string (qry_live_…).');
  } else if ('embedToken' in config) {
    if (typeof config.embedToken !== 'function')
      throw new TypeError('embedToken must be a function returning a fresh embed token.');
  } else if (!config.oauth?.clientId || !config.oauth.clientSecret) {
    throw new TypeError('Give either apiKey, embedToken, or oauth with clientId and clientSecret.');
  }
}

/** The path of one resource: its id or name percent-encoded. */
const segment = (value: string) => encodeURIComponent(value);

/**
 * Builds a client; nothing is sent until the first call. Give everything in `config`;
 * `secondArgument` is the older place of the options (still read, the config object wins).
 */
export function createQuarryClient(
  config: QuarryClientConfig,
  /** @deprecated Put these options in the config object. */
  secondArgument: QuarryClientOptions = {},
): QuarryClient {
  const options = optionsOf(config, secondArgument);
  checkConfig(config);
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const credential: Credential =
    'apiKey' in config
      ? { kind: 'api-key', apiKey: config.apiKey }
      : 'embedToken' in config
        ? { kind: 'embed', tokens: createEmbedTokenSource(config.embedToken) }
        : {
            kind: 'oauth',
            tokens: createOAuthTokenSource({
              tokenUrl: `${config.baseUrl.replace(/\/+$/, '')}/oauth/token`,
              credentials: config.oauth,
              fetch: fetchImpl,
              timeoutMs,
              headers: { 'user-agent': userAgent },
            }),
          };
  const transport: Transport = createTransport({
    baseUrl: config.baseUrl,
    credential,
    fetch: fetchImpl,
    timeoutMs,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    userAgent,
  });
  /** One page of a marketplace search, with how many listings match in all. */
  const searchPage = (
    query: {
      readonly q?: string | undefined;
      readonly category?: string | undefined;
      readonly sort?: 'popular' | 'newest' | undefined;
      readonly limit?: number | undefined;
      readonly offset?: number | undefined;
    },
    o: CallOptions,
  ) =>
    transport.send<ListingSearch>({
      method: 'GET',
      path: '/v1/marketplace/listings',
      query: {
        q: query.q,
        category: query.category,
        sort: query.sort,
        limit: query.limit === undefined ? undefined : String(query.limit),
        offset: query.offset === undefined ? undefined : String(query.offset),
      },
      idempotent: true,
      signal: o.signal,
    });
  /** One page of the account's recent calls (`calls.list`, and each of `calls.listAll`'s). */
  const callsPage = (
    o: CallOptions & {
      readonly analytic?: string | undefined;
      readonly status?: string | undefined;
      readonly limit?: number | undefined;
      readonly cursor?: string | undefined;
    },
  ) =>
    transport.send<Calls>({
      method: 'GET',
      path: '/v1/account/calls',
      query: {
        analytic: o.analytic,
        status: o.status,
        limit: o.limit === undefined ? undefined : String(o.limit),
        cursor: o.cursor,
      },
      idempotent: true,
      signal: o.signal,
    });
  const period = (o: PeriodOptions | undefined) => ({ period: o?.period });
  /** A per-period report (usage, statements) as JSON or, with `format=csv`, as CSV text. */
  const periodReport = <T>(path: string) => ({
    get(o: PeriodOptions = {}) {
      return transport.send<T>({ method: 'GET', path, query: period(o), idempotent: true, signal: o.signal });
    },
    csv(o: PeriodOptions = {}) {
      return transport.send<string>({
        method: 'GET',
        path,
        query: { ...period(o), format: 'csv' },
        responseType: 'text',
        idempotent: true,
        signal: o.signal,
      });
    },
  });

  return {
    query<Row, Insights>(source: string, params: QueryParams = {}, o: QueryOptions = {}) {
      return transport.send<QueryResult<Row, Insights>>({
        method: 'POST',
        path: '/v1/query',
        body: o.maxCredits === undefined ? { source, params } : { source, params, max_credits: o.maxCredits },
        headers: {
          'idempotency-key': o.idempotencyKey ?? randomIdempotencyKey(),
          ...(o.noCache ? { 'cache-control': 'no-cache' } : {}),
        },
        // A query is a read, and the Idempotency-Key makes a repeat answer-once, charge-once.
        idempotent: true,
        signal: o.signal,
      });
    },
    async *pages<Row>(source: string, params: QueryParams = {}, o: PagesOptions = {}) {
      let body: Record<string, unknown> = {
        source,
        params,
        page_size: o.pageSize ?? 10_000,
        ...(o.maxCredits === undefined ? {} : { max_credits: o.maxCredits }),
      };
      for (;;) {
        const page: QueryResult<Row> = await transport.send<QueryResult<Row>>({
          method: 'POST',
          path: '/v1/query',
          body,
          headers: {
            // Only the first page is charged; its retries must not be charged twice.
            'idempotency-key': randomIdempotencyKey(),
            ...(o.noCache && body.cursor === undefined ? { 'cache-control': 'no-cache' } : {}),
          },
          idempotent: true,
          signal: o.signal,
        });
        yield page;
        const next = page.meta.next;
        if (next === undefined || next === null) return;
        body = { source, cursor: next };
      }
    },
    async export(source: string, params: QueryParams, format: ExportFormat, o = {}) {
      const response = await transport.send<Response>({
        method: 'POST',
        path: '/v1/query',
        body: o.maxCredits === undefined ? { source, params } : { source, params, max_credits: o.maxCredits },
        headers: {
          accept: EXPORT_MEDIA_TYPES[format],
          ...(o.noCache ? { 'cache-control': 'no-cache' } : {}),
        },
        // Charged only when whole: a retry after a cut is not a second charge.
        idempotent: true,
        responseType: 'response',
        signal: o.signal,
      });
      return exported(response, format);
    },
    jobs: {
      submit(source, params = {}, o = {}) {
        const headers = { prefer: 'respond-async', ...(o.noCache ? { 'cache-control': 'no-cache' } : {}) };
        if (o.queryString === true) {
          const query = params as QueryStringParams;
          return transport.send<Job>({
            method: 'GET',
            path: `/v1/analytics/${segment(source)}`,
            query: o.maxCredits === undefined ? query : { ...query, max_credits: String(o.maxCredits) },
            headers,
            idempotent: false,
            signal: o.signal,
          });
        }
        return transport.send<Job>({
          method: 'POST',
          path: '/v1/query',
          body:
            o.maxCredits === undefined ? { source, params } : { source, params, max_credits: o.maxCredits },
          headers,
          // A repeat would be a second job: only a refused submission is retried.
          idempotent: false,
          signal: o.signal,
        });
      },
      get<Row>(id: string, o: CallOptions & { readonly pageSize?: number; readonly cursor?: string } = {}) {
        return transport.send<Job<Row>>({
          method: 'GET',
          path: `/v1/jobs/${segment(id)}`,
          query: {
            page_size: o.pageSize === undefined ? undefined : String(o.pageSize),
            cursor: o.cursor,
          },
          idempotent: true,
          signal: o.signal,
        });
      },
      async list(o = {}) {
        const body = await transport.send<JobList>({
          method: 'GET',
          path: '/v1/jobs',
          query: { state: o.state, limit: o.limit === undefined ? undefined : String(o.limit) },
          idempotent: true,
          signal: o.signal,
        });
        return body.items;
      },
      cancel(id, o = {}) {
        return transport.send<Job>({
          method: 'DELETE',
          path: `/v1/jobs/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
      async wait<Row>(
        id: string,
        o: CallOptions & {
          readonly intervalMs?: number;
          readonly timeoutMs?: number;
          readonly pageSize?: number;
        } = {},
      ) {
        const until = o.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + o.timeoutMs;
        for (;;) {
          const job = await transport.send<Job<Row>>({
            method: 'GET',
            path: `/v1/jobs/${segment(id)}`,
            query: { page_size: o.pageSize === undefined ? undefined : String(o.pageSize) },
            idempotent: true,
            signal: o.signal,
          });
          if (job.state !== 'queued' && job.state !== 'running') return job;
          if (Date.now() >= until) {
            throw new DOMException(
              `The job ${id} is still ${job.state} after ${o.timeoutMs} ms.`,
              'AbortError',
            );
          }
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              resolve,
              Math.min(o.intervalMs ?? 1000, Math.max(0, until - Date.now())),
            );
            o.signal?.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                reject(o.signal?.reason ?? new DOMException('Aborted', 'AbortError'));
              },
              { once: true },
            );
          });
        }
      },
    },
    analytics: {
      get<Row, Insights>(
        name: string,
        params: QueryStringParams = {},
        o: Omit<QueryOptions, 'idempotencyKey'> = {},
      ) {
        return transport.send<QueryResult<Row, Insights>>({
          method: 'GET',
          path: `/v1/analytics/${segment(name)}`,
          // `max_credits` beside the params: the gateway reserves the name for this.
          query: o.maxCredits === undefined ? params : { ...params, max_credits: String(o.maxCredits) },
          ...(o.noCache ? { headers: { 'cache-control': 'no-cache' } } : {}),
          idempotent: true,
          signal: o.signal,
        });
      },
      async export(name, params, format, o = {}) {
        const response = await transport.send<Response>({
          method: 'GET',
          path: `/v1/analytics/${segment(name)}`,
          query: {
            ...params,
            format,
            ...(o.maxCredits === undefined ? {} : { max_credits: String(o.maxCredits) }),
          },
          headers: {
            accept: EXPORT_MEDIA_TYPES[format],
            ...(o.noCache ? { 'cache-control': 'no-cache' } : {}),
          },
          idempotent: true,
          responseType: 'response',
          signal: o.signal,
        });
        return exported(response, format);
      },
      async list(o = {}) {
        const body = await transport.send<{ analytics: Analytic[] }>({
          method: 'GET',
          path: '/v1/owner/analytics',
          idempotent: true,
          signal: o.signal,
        });
        return body.analytics;
      },
      deploy(definition, o = {}) {
        if (typeof definition?.name !== 'string' || definition.name === '') {
          return Promise.reject(new TypeError('An analytic definition needs a name.'));
        }
        return transport.send<DeployResult>({
          method: 'PUT',
          path: `/v1/owner/analytics/${segment(definition.name)}`,
          body: definition,
          idempotent: true,
          signal: o.signal,
        });
      },
      async versions(name, o = {}) {
        const body = await transport.send<{ versions: AnalyticVersion[] }>({
          method: 'GET',
          path: `/v1/owner/analytics/${segment(name)}/versions`,
          idempotent: true,
          signal: o.signal,
        });
        return body.versions;
      },
      async deprecate(name, version, o) {
        const body = await transport.send<{ deprecated_version: DeprecatedVersion }>({
          method: 'PUT',
          path: `/v1/owner/analytics/${segment(name)}/versions/${version}/deprecation`,
          body: { sunset: o.sunset },
          idempotent: true,
          signal: o.signal,
        });
        return body.deprecated_version;
      },
      async undeprecate(name, version, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/owner/analytics/${segment(name)}/versions/${version}/deprecation`,
          idempotent: true,
          signal: o.signal,
        });
      },
      dryRun(definition, o = {}) {
        if (typeof definition?.name !== 'string' || definition.name === '') {
          return Promise.reject(new TypeError('An analytic definition needs a name.'));
        }
        return transport.send<DryRunResult>({
          method: 'POST',
          path: `/v1/owner/analytics/${segment(definition.name)}/dry-run`,
          body: definition,
          idempotent: true,
          signal: o.signal,
        });
      },
      async create(definition, o = {}) {
        const body = await transport.send<{ analytic: Analytic }>({
          method: 'POST',
          path: '/v1/owner/analytics',
          query: o.check === false ? { check: 'false' } : {},
          body: definition,
          // A repeat would meet its own first attempt's name: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
        return body.analytic;
      },
      async update(name, definition, o = {}) {
        const body = await transport.send<{ analytic: Analytic }>({
          method: 'PATCH',
          path: `/v1/owner/analytics/${segment(name)}`,
          body: definition,
          // A repeat adds a version with the same definition: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
        return body.analytic;
      },
      async describe(name, o = {}) {
        const body = await transport.send<{ analytic: Analytic }>({
          method: 'GET',
          path: `/v1/owner/analytics/${segment(name)}`,
          query: o.version === undefined ? {} : { version: String(o.version) },
          idempotent: true,
          signal: o.signal,
        });
        return body.analytic;
      },
      async delete(name, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/owner/analytics/${segment(name)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
      async purgeCache(name, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/owner/analytics/${segment(name)}/cache`,
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    connections: {
      async list(o = {}) {
        const body = await transport.send<{ connections: Connection[] }>({
          method: 'GET',
          path: '/v1/owner/connections',
          idempotent: true,
          signal: o.signal,
        });
        return body.connections;
      },
      async create(connection, o = {}) {
        const body = await transport.send<{ connection: Connection }>({
          method: 'POST',
          path: '/v1/owner/connections',
          query: o.test === false ? { test: 'false' } : {},
          body: connection,
          // A repeat could meet its own first attempt's name: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
        return body.connection;
      },
      get(id, o = {}) {
        return transport.send<ConnectionDetail>({
          method: 'GET',
          path: `/v1/owner/connections/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
      test(id, o = {}) {
        return transport.send<ConnectionTest>({
          method: 'POST',
          path: `/v1/owner/connections/${segment(id)}/test`,
          // Its answer is the point: a failure is reported, not waited out.
          idempotent: false,
          signal: o.signal,
        });
      },
      async update(id, change, o = {}) {
        const body = await transport.send<{ connection: Connection }>({
          method: 'PATCH',
          path: `/v1/owner/connections/${segment(id)}`,
          query: o.test === false ? { test: 'false' } : {},
          body: change,
          // Setting the same fields twice leaves the same config.
          idempotent: true,
          signal: o.signal,
        });
        return body.connection;
      },
      delete(id, o = {}) {
        return transport.send<ConnectionRemoval>({
          method: 'DELETE',
          path: `/v1/owner/connections/${segment(id)}`,
          query: o.force === true ? { force: 'true' } : {},
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    listings: {
      async publish(name, listing = {}, o = {}) {
        const body = await transport.send<{ listing: OwnerListing }>({
          method: 'PUT',
          path: `/v1/owner/analytics/${segment(name)}/listing`,
          body: listing,
          idempotent: true,
          signal: o.signal,
        });
        return body.listing;
      },
      async get(name, o = {}) {
        const body = await transport.send<{ listing: OwnerListing }>({
          method: 'GET',
          path: `/v1/owner/analytics/${segment(name)}/listing`,
          idempotent: true,
          signal: o.signal,
        });
        return body.listing;
      },
      async unpublish(name, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/owner/analytics/${segment(name)}/listing`,
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    marketplace: {
      async search(query = {}, o = {}) {
        return (await searchPage(query, o)).items;
      },
      async *searchAll(query = {}, o = {}) {
        const { pageSize = MAX_PAGE_SIZE, ...filter } = query;
        let offset = 0;
        for (;;) {
          const page = await searchPage(
            { ...filter, limit: pageSize, offset: offset === 0 ? undefined : offset },
            o,
          );
          yield* page.items;
          offset += page.items.length;
          // A short or empty page is the last; `total` spares the empty page after a full one.
          if (page.items.length < pageSize || offset >= page.total) return;
        }
      },
      get(name, o = {}) {
        return transport.send<ListingDetail>({
          method: 'GET',
          path: `/v1/marketplace/listings/${segment(name)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
      tryToken(source, o = {}) {
        return transport.send<TryToken>({
          method: 'POST',
          path: '/v1/marketplace/try-token',
          body: o.ttlSeconds === undefined ? { source } : { source, ttl_seconds: o.ttlSeconds },
          // A token more or less costs nothing: a lost answer is asked again.
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    connectors: {
      list(o = {}) {
        return transport.send<ConnectorTypes>({
          method: 'GET',
          path: '/v1/connectors',
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    plans: {
      async list(o = {}) {
        const body = await transport.send<{ plans: Plan[] }>({
          method: 'GET',
          path: '/v1/plans',
          idempotent: true,
          signal: o.signal,
        });
        return body.plans;
      },
    },
    budget: {
      get(o = {}) {
        return transport.send<Budget>({
          method: 'GET',
          path: '/v1/account/budget',
          idempotent: true,
          signal: o.signal,
        });
      },
      set(budgetUsd, o = {}) {
        return transport.send<Budget>({
          method: 'PUT',
          path: '/v1/account/budget',
          body: { budget_usd: budgetUsd },
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    webhooks: {
      create(endpoint, o = {}) {
        return transport.send<IssuedWebhookEndpoint>({
          method: 'POST',
          path: '/v1/webhooks',
          body: endpoint,
          // Two attempts could make two endpoints: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
      },
      async list(o = {}) {
        const body = await transport.send<{ endpoints: WebhookEndpoint[] }>({
          method: 'GET',
          path: '/v1/webhooks',
          idempotent: true,
          signal: o.signal,
        });
        return body.endpoints;
      },
      async get(id, o = {}) {
        const body = await transport.send<{ endpoint: WebhookEndpoint }>({
          method: 'GET',
          path: `/v1/webhooks/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
        return body.endpoint;
      },
      async update(id, change, o = {}) {
        const body = await transport.send<{ endpoint: WebhookEndpoint }>({
          method: 'PATCH',
          path: `/v1/webhooks/${segment(id)}`,
          body: change,
          idempotent: true,
          signal: o.signal,
        });
        return body.endpoint;
      },
      async delete(id, o = {}) {
        const body = await transport.send<{ endpoint: WebhookEndpoint }>({
          method: 'DELETE',
          path: `/v1/webhooks/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
        return body.endpoint;
      },
      rotateSecret(id, overlapHours, o = {}) {
        return transport.send<IssuedWebhookEndpoint>({
          method: 'POST',
          path: `/v1/webhooks/${segment(id)}/rotate-secret`,
          body: overlapHours === undefined ? {} : { overlap_hours: overlapHours },
          // A repeat would rotate twice and lose the secret shown first.
          idempotent: false,
          signal: o.signal,
        });
      },
      async test(id, o = {}) {
        const body = await transport.send<{ event_id: string }>({
          method: 'POST',
          path: `/v1/webhooks/${segment(id)}/test`,
          idempotent: false,
          signal: o.signal,
        });
        return body.event_id;
      },
      async deliveries(id, limit, o = {}) {
        const body = await transport.send<{ deliveries: WebhookDelivery[] }>({
          method: 'GET',
          path: `/v1/webhooks/${segment(id)}/deliveries${limit === undefined ? '' : `?limit=${limit}`}`,
          idempotent: true,
          signal: o.signal,
        });
        return body.deliveries;
      },
      async replay(id, deliveryId, o = {}) {
        const body = await transport.send<{ delivery: WebhookDelivery }>({
          method: 'POST',
          path: `/v1/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/replay`,
          idempotent: true,
          signal: o.signal,
        });
        return body.delivery;
      },
    },
    alerts: {
      async get(o = {}) {
        const body = await transport.send<{ alerts: AlertSettings }>({
          method: 'GET',
          path: '/v1/account/alerts',
          idempotent: true,
          signal: o.signal,
        });
        return body.alerts;
      },
      async set(settings, o = {}) {
        const body = await transport.send<{ alerts: AlertSettings }>({
          method: 'PUT',
          path: '/v1/account/alerts',
          body: settings,
          idempotent: true,
          signal: o.signal,
        });
        return body.alerts;
      },
    },
    oauthClients: {
      create(client, o = {}) {
        return transport.send<IssuedOAuthClient>({
          method: 'POST',
          path: '/v1/oauth/clients',
          body: client,
          // Two attempts could make two clients: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
      },
      async list(o = {}) {
        const body = await transport.send<{ clients: OAuthClient[] }>({
          method: 'GET',
          path: '/v1/oauth/clients',
          idempotent: true,
          signal: o.signal,
        });
        return body.clients;
      },
      async revoke(id, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/oauth/clients/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    embedTokens: {
      async create(token, o = {}) {
        const body = await transport.send<{ embed_token: EmbedToken }>({
          method: 'POST',
          path: '/v1/embed-tokens',
          body: token,
          // Minting twice makes two tokens, both harmless: a repeat is safe.
          idempotent: true,
          signal: o.signal,
        });
        return body.embed_token;
      },
    },
    embedSecrets: {
      async create(name, o = {}) {
        const body = await transport.send<{ embed_secret: IssuedEmbedSecret }>({
          method: 'POST',
          path: '/v1/embed-secrets',
          body: { name },
          // Two attempts could make two secrets: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
        return body.embed_secret;
      },
      async list(o = {}) {
        const body = await transport.send<{ embed_secrets: EmbedSecret[] }>({
          method: 'GET',
          path: '/v1/embed-secrets',
          idempotent: true,
          signal: o.signal,
        });
        return body.embed_secrets;
      },
      rotate(id, o = {}) {
        return transport.send<RotatedEmbedSecret>({
          method: 'POST',
          path: `/v1/embed-secrets/${segment(id)}/rotate`,
          body: o.overlapSeconds === undefined ? {} : { overlap_seconds: o.overlapSeconds },
          idempotent: false,
          signal: o.signal,
        });
      },
      async revoke(id, o = {}) {
        const body = await transport.send<{ embed_secret: EmbedSecret }>({
          method: 'DELETE',
          path: `/v1/embed-secrets/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
        return body.embed_secret;
      },
    },
    calls: {
      list(o = {}) {
        return callsPage(o);
      },
      async *listAll(o = {}) {
        const { pageSize = MAX_PAGE_SIZE, ...filter } = o;
        let cursor: string | undefined;
        for (;;) {
          const page = await callsPage({ ...filter, limit: pageSize, cursor });
          yield* page.items;
          // The gateway gives a cursor only when a call older than the page's last exists.
          if (page.next_cursor === null) return;
          cursor = page.next_cursor;
        }
      },
    },
    cors: {
      async get(o = {}) {
        const body = await transport.send<{ cors: CorsSettings }>({
          method: 'GET',
          path: '/v1/account/cors',
          idempotent: true,
          signal: o.signal,
        });
        return body.cors;
      },
      async set(allow, o = {}) {
        const body = await transport.send<{ cors: CorsSettings }>({
          method: 'PUT',
          path: '/v1/account/cors',
          body: { allow_keys_from_browsers: allow },
          idempotent: true,
          signal: o.signal,
        });
        return body.cors;
      },
    },
    keys: {
      async create(key, o = {}) {
        const body = await transport.send<{ key: IssuedApiKey }>({
          method: 'POST',
          path: '/v1/keys',
          body: key,
          // Two attempts could make two keys: only a refused (rate-limited) call is repeated.
          idempotent: false,
          signal: o.signal,
        });
        return body.key;
      },
      async list(o = {}) {
        const body = await transport.send<{ keys: ApiKey[] }>({
          method: 'GET',
          path: '/v1/keys',
          idempotent: true,
          signal: o.signal,
        });
        return body.keys;
      },
      async revoke(id, o = {}) {
        const body = await transport.send<{ key: ApiKey }>({
          method: 'DELETE',
          path: `/v1/keys/${segment(id)}`,
          idempotent: true,
          signal: o.signal,
        });
        return body.key;
      },
    },
    usage: periodReport<Usage>('/v1/account/usage'),
    statements: periodReport<Statement>('/v1/owner/statements'),
    account: {
      async get(o = {}) {
        const body = await transport.send<{ account: Account }>({
          method: 'GET',
          path: '/v1/account',
          idempotent: true,
          signal: o.signal,
        });
        return body.account;
      },
      async setPassword(password, o = {}) {
        await transport.send<undefined>({
          method: 'PUT',
          path: '/v1/account/password',
          body:
            o.currentPassword === undefined
              ? { password }
              : { password, current_password: o.currentPassword },
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    tools: {
      async list(o = {}) {
        const body = await transport.send<{ items: AgentTool[] }>({
          method: 'GET',
          path: '/v1/account/tools',
          idempotent: true,
          signal: o.signal,
        });
        return body.items;
      },
      async add(name, o = {}) {
        const body = await transport.send<{ tool: AgentTool }>({
          method: 'POST',
          path: '/v1/account/tools',
          body: { source: name },
          // Adding twice is the same as adding once.
          idempotent: true,
          signal: o.signal,
        });
        return body.tool;
      },
      async remove(name, o = {}) {
        await transport.send<undefined>({
          method: 'DELETE',
          path: `/v1/account/tools/${segment(name)}`,
          idempotent: true,
          signal: o.signal,
        });
      },
    },
    mcp: {
      async get(o = {}) {
        const body = await transport.send<McpSettingsResponse>({
          method: 'GET',
          path: '/v1/account/mcp',
          idempotent: true,
          signal: o.signal,
        });
        return body.mcp;
      },
      async set(settings, o = {}) {
        const body = await transport.send<McpSettingsResponse>({
          method: 'PUT',
          path: '/v1/account/mcp',
          body: { max_credits: settings.maxCredits },
          idempotent: true,
          signal: o.signal,
        });
        return body.mcp;
      },
    },
    billing: {
      get(o = {}) {
        return transport.send<Billing>({
          method: 'GET',
          path: '/v1/billing',
          idempotent: true,
          signal: o.signal,
        });
      },
      checkout(plan, o = {}) {
        if (typeof plan !== 'string' || plan === '') {
          return Promise.reject(new TypeError('A checkout needs a plan id (smb, enterprise, payg, …).'));
        }
        return transport.send<Checkout>({
          method: 'POST',
          path: '/v1/billing/checkout',
          body: { plan, ...(o.returnUrl === undefined ? {} : { return_url: o.returnUrl }) },
          // Each attempt opens a checkout of its own: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
      },
      portal(o = {}) {
        return transport.send<BillingPortal>({
          method: 'POST',
          path: '/v1/billing/portal',
          body: o.returnUrl === undefined ? {} : { return_url: o.returnUrl },
          idempotent: false,
          signal: o.signal,
        });
      },
    },
    payouts: {
      account(o = {}) {
        return transport.send<PayoutAccount>({
          method: 'GET',
          path: '/v1/owner/payouts/account',
          idempotent: true,
          signal: o.signal,
        });
      },
      onboarding(o = {}) {
        return transport.send<PayoutOnboarding>({
          method: 'POST',
          path: '/v1/owner/payouts/onboarding',
          body: o.returnUrl === undefined ? {} : { return_url: o.returnUrl },
          // Each attempt makes a link of its own: only a refused call is repeated.
          idempotent: false,
          signal: o.signal,
        });
      },
      list(o = {}) {
        return transport.send<Payouts>({
          method: 'GET',
          path: '/v1/owner/payouts',
          idempotent: true,
          signal: o.signal,
        });
      },
    },
  };
}

/**
 * Signs up an account (`POST /v1/accounts`, no credential): resolves with the account and its
 * first key, whose `secret` is shown this once. Not repeated after a failure that may have
 * created the account. An unknown option is refused with a TypeError, as createQuarryClient does.
 */
export function signUp(
  baseUrl: string,
  account: { readonly email: string; readonly name: string },
  options: QuarryClientOptions & CallOptions = {},
): Promise<SignUpResult> {
  refuseUnknownKeys(options, [...OPTION_KEYS, 'signal'], 'option', 'signUp');
  checkOptionValues(options, 'signUp');
  const transport = createTransport({
    baseUrl,
    credential: { kind: 'none' },
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
  });
  return transport.send<SignUpResult>({
    method: 'POST',
    path: '/v1/accounts',
    body: account,
    idempotent: false,
    signal: options.signal,
  });
}
