// The shapes the gateway answers with (docs/design.md §2 and the OpenAPI document at
// /v1/openapi.json), as read-only TypeScript types. Field names stay as on the wire.

/** A column of a query result, typed as the gateway reports it (`string`, `number`, `date`…). */
export interface Column {
  readonly name: string;
  readonly type: string;
}

/** What the gateway says about one served call. */
export interface QueryMeta {
  readonly request_id: string;
  /** Served from the gateway's result cache. */
  readonly cached: boolean;
  readonly duration_ms: number;
  readonly row_count: number;
  /** Rows past the analytic's `max_rows` were cut. */
  readonly truncated: boolean;
  /** Credits the call spent. */
  readonly credits: number;
  /** The analytic version that answered. */
  readonly version: number;
  /** While the owner has a price rise scheduled: what a call will cost from `next_price_at`. */
  readonly next_price?: number;
  /** When `next_price` takes effect (ISO 8601). */
  readonly next_price_at?: string;
  /** A marketplace preview (a try-token call): free, at most the gateway's preview rows. */
  readonly preview?: true;
  /** Pages only: rows in the whole result (`row_count` is this page's). */
  readonly total_rows?: number;
  /** Pages only: the index of this page's first row. */
  readonly offset?: number;
  /** Pages only: the cursor of the next page, or null on the last one. */
  readonly next?: string | null;
}

/** The formats an export streams a whole result in (docs/large-results.md). */
export type ExportFormat = 'csv' | 'ndjson' | 'arrow' | 'parquet';

/** A streamed export: its body and what the gateway said of it. */
export interface ExportedResult {
  /** The bytes, as they arrive; a transfer the gateway cut errors the stream (and was not charged). */
  readonly body: ReadableStream<Uint8Array>;
  readonly contentType: string;
  readonly rowCount: number;
  readonly truncated: boolean;
  /** What the export costs once its last byte is sent. */
  readonly credits: number;
  readonly requestId: string | undefined;
}

/**
 * A query's answer. `Row` types `results` (default: any JSON object); `Insights` types the
 * owner-defined shape (single row, keyed, series, totals), present when the analytic has one.
 */
export interface QueryResult<Row = Record<string, unknown>, Insights = unknown> {
  readonly source: string;
  readonly results: readonly Row[];
  readonly insights?: Insights;
  readonly columns: readonly Column[];
  readonly meta: QueryMeta;
}

/** A param value as `POST /v1/query` takes it (JSON: typed as the analytic's schema says). */
export type QueryParams = Readonly<Record<string, unknown>>;

/** A query-string value for `GET /v1/analytics/:name`; the gateway coerces it by the param schema. */
export type QueryStringValue = string | number | boolean;

/** Params for `GET /v1/analytics/:name`: lists become repeated keys; null/undefined are left out. */
export type QueryStringParams = Readonly<
  Record<string, QueryStringValue | readonly QueryStringValue[] | null | undefined>
>;

/** What an API key or token may do. */
export type Scope = 'query' | 'keys' | 'owner' | 'account';

export interface Account {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly plan: string;
  readonly created_at: string;
}

/** An API key as listed (never its secret). */
export interface ApiKey {
  readonly id: string;
  readonly name: string;
  /** The visible start of the key. */
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly last_used_at: string | null;
}

/** A key just created: `secret` is shown this once, never again. */
export interface IssuedApiKey extends ApiKey {
  readonly secret: string;
}

export interface NewApiKey {
  readonly name: string;
  /** Default: every scope. */
  readonly scopes?: readonly Scope[];
  /** ISO-8601 date-time with offset. */
  readonly expires_at?: string;
}

/**
 * An analytic definition as an owner writes it (the YAML files of `examples/analytics/`):
 * `name`, `connection`, `sql`, `params`, … The gateway validates it whole.
 */
export interface AnalyticDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly category?: string;
  readonly tags?: readonly string[];
  /** The name of one of your connections. */
  readonly connection?: string;
  /** The SQL, with `:param` placeholders. */
  readonly sql?: string;
  /** Each param's schema (`type`, `required`, `default`, bounds…). */
  readonly params?: Readonly<Record<string, unknown>>;
  /** The output shape: `{shape: 'single' | 'keyed' | 'series' | 'totals', …}`. */
  readonly insights?: Readonly<Record<string, unknown>>;
  /** Seconds a result is cached (`ttl`) and served stale while it refreshes (`stale`). */
  readonly cache?: { readonly ttl?: number; readonly stale?: number };
  readonly limits?: {
    readonly timeout_ms?: number;
    /** An asynchronous call's time limit (up to 30 minutes); unset: `timeout_ms`. */
    readonly async_timeout_ms?: number;
    readonly max_rows?: number;
    readonly max_bytes_billed?: number;
  };
  /** Credits a call pays. */
  readonly price?: number;
  readonly visibility?: 'public' | 'private' | 'shared';
  readonly shared_with?: readonly string[];
  readonly example_params?: Readonly<Record<string, unknown>>;
  readonly [field: string]: unknown;
}

export interface Analytic {
  readonly id: string;
  readonly name: string;
  /** The version shown. */
  readonly version: number;
  readonly current_version: number;
  readonly visibility: 'public' | 'private' | 'shared';
  readonly shared_with: readonly string[];
  readonly definition: Readonly<Record<string, unknown>>;
  /** Credits a call pays now; a rise waits the gateway's notice (QUARRY_PRICE_NOTICE_HOURS). */
  readonly price: number;
  /** A rise not in force yet, and when it takes effect; null when none. */
  readonly scheduled_price: number | null;
  readonly price_effective_at: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** On `owner.analytics.list()` and `.get()`: whether the analytic is failing. */
  readonly health?: AnalyticHealth;
}

/**
 * Whether an owner's analytic is failing: more than the owner's `error_rate_percent` of its
 * warehouse queries failed over 5 minutes (the `analytic.failing` webhook), `ok` once it recovered.
 */
export interface AnalyticHealth {
  readonly state: 'ok' | 'failing';
  /** When it turned failing or recovered; null when it never failed. */
  readonly since: string | null;
  /** Its error rate over the 5 minutes when it changed state; null when it never failed. */
  readonly error_rate_percent: number | null;
}

/** `created`: a new analytic; `updated`: a new version; `unchanged`: the same definition was there. */
export type DeployOutcome = 'created' | 'updated' | 'unchanged';

export interface DeployResult {
  readonly outcome: DeployOutcome;
  readonly analytic: Analytic;
}

export interface CallTotals {
  readonly calls: number;
  readonly credits: number;
}

/** Calls and credits of one analytic or day in a usage report, and what they cost in USD. */
export interface UsageTotalsLine extends CallTotals {
  /** What those credits cost the account, in USD. */
  readonly value_usd: number;
}

/** `GET /v1/account/usage`: one billing period (a calendar month, UTC). */
export interface Usage {
  readonly period: string;
  readonly plan: Plan;
  readonly totals: CallTotals & {
    readonly calls_by_origin: CallsByOrigin;
    /** The same as `credits`. */
    readonly credits_used: number;
    /**
     * Credits a call can still spend this period (calls in flight counted): what the plan
     * leaves, or what the Pay as you Go budget still buys; null: no cap.
     */
    readonly credits_left: number | null;
    /** Free marketplace previews (not in `calls`). */
    readonly marketplace_calls: number;
    /** `credits_left`, kept under its old name. */
    readonly remaining_calls: number | null;
    /** The subscription's price, or Pay as you Go: the credits spent × their price. */
    readonly amount_due_usd: number;
    readonly amount_due_micro_usd: number;
    /** `amount_due_usd` in cents, rounded up. */
    readonly amount_due_cents: number;
  };
  /** Pay as you Go: the budget this period; null on other plans. */
  readonly budget: BudgetState | null;
  readonly by_analytic: readonly (UsageTotalsLine & { readonly name: string })[];
  readonly by_day: readonly (UsageTotalsLine & { readonly date: string })[];
  /**
   * Versions you called by version (`name@version`) in the last 30 days that their owner
   * deprecated, soonest sunset first: move to `current_version` before `sunset`. Absent from a
   * gateway older than version pinning.
   */
  readonly deprecated_versions?: readonly DeprecatedVersion[];
}

/** Served calls by where they came from. */
export interface CallsByOrigin {
  /** Callers on a paid plan or Pay as you Go. */
  readonly paid: number;
  /** Callers on the Free plan (earn credits, $0). */
  readonly free: number;
  /** Marketplace previews (free, earn nothing). */
  readonly marketplace: number;
  /** Your own calls (earn nothing). */
  readonly owner: number;
}

export interface StatementAmounts extends CallTotals {
  readonly calls_by_origin: CallsByOrigin;
  /** 0.8 of each credit spent. */
  readonly owner_share: number;
  readonly platform_share: number;
  readonly millicredits: number;
  readonly owner_share_millicredits: number;
  readonly platform_share_millicredits: number;
  /** What the callers paid for those credits (Free plan: 0). */
  readonly value_usd: number;
  /** 80% of each call's value, rounded down to the micro-USD. */
  readonly owner_share_usd: number;
  readonly platform_share_usd: number;
  readonly value_micro_usd: number;
  readonly owner_share_micro_usd: number;
  readonly platform_share_micro_usd: number;
}

/**
 * Where a payout stands: `held` (kept and carried: see `reason`), `pending` (a transfer is on its
 * way), `paid`, `failed`, `reversed` (taken back), `operator` (computed; the operator of this
 * gateway pays it by hand).
 */
export type PayoutStatus = 'held' | 'pending' | 'paid' | 'failed' | 'reversed' | 'operator';

/**
 * Why a payout is held or failed: below the provider's minimum, payouts not set up yet, refunds
 * made the balance negative, or the provider's own words.
 */
export type PayoutReason = 'below_minimum' | 'not_onboarded' | 'negative_balance' | (string & {});

/** A refund or dispute of a call paid in an earlier period, taken from your earnings. */
export interface StatementAdjustment {
  readonly analytic: string;
  /** The period of the refunded usage (YYYY-MM). */
  readonly usage_period: string;
  readonly reason: 'refund' | 'dispute' | (string & {});
  /** Negative. */
  readonly owner_micro_usd: number;
  readonly owner_usd: number;
  /** Negative. */
  readonly platform_micro_usd: number;
}

/** A closed period's payout as the statement shows it. */
export interface StatementPayout {
  /** Carried from your previous payout (negative after refunds). */
  readonly carried_in_micro_usd: number;
  readonly earned_micro_usd: number;
  /** Subtracted by refunds and disputes (≥ 0). */
  readonly adjusted_micro_usd: number;
  /** Paid out: whole cents, rounded down. */
  readonly payout_cents: number;
  readonly payout_usd: number;
  /** Carried into your next payout. */
  readonly carried_out_micro_usd: number;
  readonly status: PayoutStatus;
  readonly reason: PayoutReason | null;
  /** The gateway's words for `reason`. */
  readonly reason_text: string | null;
  /** The provider's transfer (`tr_…`), once there is one. */
  readonly transfer_id: string | null;
  readonly paid_at: string | null;
}

/** `GET /v1/owner/statements`: an owner's earnings in one period. */
export interface Statement {
  readonly period: string;
  /** Set once the period is closed (then frozen). */
  readonly closed_at: string | null;
  readonly analytics: readonly (StatementAmounts & { readonly name: string })[];
  readonly totals: StatementAmounts;
  /** Per UTC day and analytic, days and analytics with calls only. */
  readonly by_day: readonly (StatementAmounts & { readonly date: string; readonly name: string })[];
  /**
   * Refunds and disputes of earlier usage: netted by this period's payout once it is closed;
   * while it is open, those the next close will net.
   */
  readonly adjustments: readonly StatementAdjustment[];
  /** Once the period is closed (null while open, or without earnings). */
  readonly payout: StatementPayout | null;
  /**
   * Calls of other accounts that failed after running in your warehouse, per caller and
   * analytic, most warehouse time first: free for them, no money here.
   */
  readonly failed_calls: readonly StatementFailedCalls[];
}

/** One caller's failed calls of one analytic in a statement's period. */
export interface StatementFailedCalls {
  readonly caller_account_id: string;
  readonly analytic: string;
  readonly calls: number;
  /** By the error the caller got: QUERY_TIMEOUT, RESULT_TOO_LARGE, UPSTREAM_ERROR. */
  readonly calls_by_code: Readonly<Record<string, number>>;
  readonly warehouse_seconds: number;
}

/** One of the account's agent tools: what its agents see and may call on /mcp. */
export interface AgentTool {
  readonly name: string;
  /** The listing's (or definition's) title: owner text. */
  readonly title: string;
  readonly owner_id: string;
  /** The account's own analytic (always a tool while it exists). */
  readonly owned: boolean;
  /** Published on the marketplace. */
  readonly listed: boolean;
  readonly price: number;
  readonly scheduled_price: number | null;
  readonly price_effective_at: string | null;
}

/** The account's MCP settings. */
export interface McpSettings {
  /** The price limit of a tool call without its own `max_credits`; null: none. */
  readonly max_credits: number | null;
}

/** `GET`/`PUT /v1/account/mcp`'s answer: `mcp.get()` and `mcp.set()` return its `mcp`. */
export interface McpSettingsResponse {
  readonly mcp: McpSettings;
}

/** Where your payouts go: the payment provider's account and what it still needs. */
export interface PayoutAccount {
  /** `none`: the operator of this gateway pays by hand. */
  readonly provider: BillingProvider;
  readonly status: 'not_started' | 'pending' | 'complete';
  readonly payouts_enabled: boolean;
  /** What the provider still needs (`external_account`, …). */
  readonly requirements: readonly string[];
  /** Below it a payout is held and carried to the next month. */
  readonly minimum_payout_cents: number;
}

/** `POST /v1/owner/payouts/onboarding`: the provider's page to open in a browser (a new URL each time). */
export interface PayoutOnboarding {
  readonly url: string;
}

/** One closed period's payout (`GET /v1/owner/payouts`): the statement's payout and its period. */
export interface Payout extends StatementPayout {
  readonly period: string;
}

/** `GET /v1/owner/payouts`: the balance held and carried, and the payouts, newest first. */
export interface Payouts {
  /** Held and carried (negative after refunds larger than what was earned since). */
  readonly balance_micro_usd: number;
  readonly balance_usd: number;
  readonly payouts: readonly Payout[];
}

/** A warehouse connection (`/v1/owner/connections`); secrets are never returned. */
export interface Connection {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  /** Non-secret settings. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Stored encrypted, never returned. */
  readonly secret_fields: readonly string[];
  readonly created_at: string;
  readonly updated_at: string;
}

export interface NewConnection {
  readonly name: string;
  /** A connector type (`GET /v1/connectors`): postgres, mysql, duckdb, … */
  readonly type: string;
  readonly config: Readonly<Record<string, unknown>>;
}

/** What deleting a connection did (`DELETE /v1/owner/connections/:id`). */
export interface ConnectionRemoval {
  /** The connection's id. */
  readonly deleted: string;
  /** Your analytics that were on it: they answer 404 until deployed on another connection. */
  readonly analytics: readonly string[];
  /** Those of them taken off the marketplace (`force` only). */
  readonly unlisted: readonly string[];
}

/** A result column as the warehouse described it, without running the query. */
export interface DescribedColumn {
  readonly name: string;
  readonly type: string;
}

/** What a deploy would do (`POST /v1/owner/analytics/:name/dry-run`); nothing is saved. */
export interface DryRunResult {
  readonly name: string;
  readonly outcome: DeployOutcome;
  readonly definition: Readonly<Record<string, unknown>>;
  /** Absent when the connection's engine cannot describe a statement. */
  readonly columns?: readonly DescribedColumn[];
}

/** One kept version of an analytic. */
/** An owner's deprecation of a version: calls of it are refused from `sunset` on (410 `VERSION_SUNSET`). */
export interface VersionDeprecation {
  readonly deprecated_at: string;
  readonly sunset: string;
}

/** A deprecated version of an analytic callers may still pin (`name@version`). */
export interface DeprecatedVersion extends VersionDeprecation {
  readonly analytic: string;
  readonly version: number;
  /** The version to move to. */
  readonly current_version: number;
}

export interface AnalyticVersion {
  readonly version: number;
  readonly definition: Readonly<Record<string, unknown>>;
  /** Credits a call of this version (`name@version`) pays now, and a scheduled rise. */
  readonly price: number;
  readonly scheduled_price: number | null;
  readonly price_effective_at: string | null;
  /** Its deprecation, or null. */
  readonly deprecation: VersionDeprecation | null;
  readonly created_at: string;
}

/** A marketplace listing as `GET /v1/marketplace/listings` shows it. */
export interface Listing {
  /** The analytic: the `source` of a query. */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  /** Credits a call pays now. */
  readonly price: number;
  /** A scheduled price rise and when it takes effect; null when none. */
  readonly scheduled_price: number | null;
  readonly price_effective_at: string | null;
  /** Paid calls in the last 30 days (by others than its owner). */
  readonly calls_30d: number;
  /** Distinct accounts that made those calls. */
  readonly callers_30d: number;
  /** The account that publishes it. */
  readonly owner: { readonly name: string };
  /** Whether it can be tried for free (`marketplace.tryToken`). */
  readonly previews: boolean;
  readonly published_at: string;
}

/** One listing with what a caller needs to call it (`GET /v1/marketplace/listings/:name`). */
export interface ListingDetail extends Listing {
  /** The analytic version that runs now. */
  readonly version: number;
  /** The param schema. */
  readonly params: Readonly<Record<string, unknown>>;
  /** The output shape the analytic declares, or null. */
  readonly insights: Readonly<Record<string, unknown>> | null;
  readonly example_params: Readonly<Record<string, unknown>>;
  readonly example_request: {
    readonly method: 'POST';
    readonly url: '/v1/query';
    readonly body: { readonly source: string; readonly params: Readonly<Record<string, unknown>> };
  };
  /** The same request as a shell command (key in $QUARRY_API_KEY). */
  readonly curl: string;
  /** Older versions callers may still pin that its owner deprecated, with their sunsets. */
  readonly deprecated_versions: readonly DeprecatedVersion[];
}

/** `GET /v1/marketplace/listings`: one page of matches and how many there are in all. */
export interface ListingSearch {
  readonly items: readonly Listing[];
  readonly total: number;
}

/** One of your listings (`/v1/owner/analytics/:name/listing`), published or not. */
export interface OwnerListing {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly price: number;
  readonly scheduled_price: number | null;
  readonly price_effective_at: string | null;
  readonly example_params: Readonly<Record<string, unknown>>;
  readonly previews: boolean;
  readonly published: boolean;
  readonly published_at: string;
  readonly unpublished_at: string | null;
  readonly updated_at: string;
}

/** `POST /v1/marketplace/try-token`: a short-lived token for free previews of one listed analytic. */
export interface TryToken {
  /** Use it as the client's apiKey: its queries of that analytic are previews. */
  readonly token: string;
  readonly expires_at: string;
  readonly token_type: 'Bearer';
}

/** A Pay as you Go budget as `GET/PUT /v1/account/budget` answer it. */
export interface Budget {
  readonly budget: BudgetState & {
    /** The current billing period (UTC month). */
    readonly period: string;
    /** false: the gateway's default budget. */
    readonly custom: boolean;
    /** The operator's cap. */
    readonly max_budget_usd: number;
    /** Whether the account's plan is Pay as you Go (others stop at their credits). */
    readonly applies: boolean;
  };
}

/** A connection's circuit breaker: `open` after repeated warehouse faults (calls fail fast). */
export interface Circuit {
  readonly state: 'closed' | 'open' | 'half_open';
  readonly consecutive_failures: number;
  /** Seconds until the probe (open only). */
  readonly retry_after?: number;
}

/** `GET /v1/owner/connections/:id`: the connection and its circuit breaker. */
export interface ConnectionDetail {
  readonly connection: Connection;
  readonly circuit: Circuit;
}

/** `GET /v1/connectors`: the warehouse types this gateway connects to. */
export interface ConnectorTypes {
  readonly connectors: readonly {
    readonly type: string;
    readonly display_name: string;
    /** The JSON Schema of its `config`. */
    readonly config_schema?: unknown;
    readonly secret_fields: readonly string[];
  }[];
}

/** An OAuth client of your account (client-credentials grant); never its secret. */
export interface OAuthClient {
  /** The record id (`ocl_…`), used to revoke it. */
  readonly id: string;
  /** What the client authenticates with (`qci_…`). */
  readonly client_id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** `POST /v1/oauth/clients`: the new client and its secret (`qcs_…`), shown this once. */
export interface IssuedOAuthClient {
  readonly client: OAuthClient;
  readonly client_secret: string;
}

/** `POST /v1/owner/connections/:id/test`: the warehouse answered. */
export interface ConnectionTest {
  readonly ok: true;
  /** The round trip in milliseconds. */
  readonly latency_ms: number;
}

/** What `PUT /v1/owner/analytics/:name/listing` takes. */
export interface ListingInput {
  readonly title?: string;
  readonly description?: string;
  readonly category?: string;
  readonly tags?: readonly string[];
  readonly example_params?: Readonly<Record<string, unknown>>;
  readonly previews?: boolean;
}

/** `POST /v1/accounts`: the new account and its first key (the secret is shown this once). */
export interface SignUpResult {
  readonly account: Account;
  readonly key: IssuedApiKey;
}

/** A plan as `GET /v1/plans` lists it (the same shape in usage and billing answers). */
export interface Plan {
  readonly id: string;
  readonly name: string;
  /** Credits included a month; null: Pay as you Go (billed per credit within a budget). */
  readonly included_calls: number | null;
  /** The same, by its name. */
  readonly included_credits: number | null;
  readonly monthly_price_cents: number;
  /** Pay as you Go: the price of a credit, in cents. */
  readonly per_call_cents: number;
  /** The same, by its name. */
  readonly credit_price_cents: number;
  /** What one credit costs on this plan: price ÷ included credits (Free: 0). */
  readonly credit_value_usd: number;
}

/** A Pay as you Go budget this period, in USD (display) and micro-USD (exact). */
export interface BudgetState {
  readonly budget_usd: number;
  readonly spent_usd: number;
  readonly left_usd: number;
  readonly budget_micro_usd: number;
  readonly spent_micro_usd: number;
  readonly left_micro_usd: number;
}

/** Who takes the payments: nobody (the operator sets plans), the embedded sandbox, or Stripe. */
export type BillingProvider = 'none' | 'sandbox' | 'stripe';

/** The subscription's state; `none`: no subscription (Free, or a plan the operator set). */
export type BillingStatus = 'active' | 'past_due' | 'canceled' | 'none';

/**
 * What can be done about a plan: `upgrade` (a checkout), `downgrade` (through the portal),
 * `add_card` (Pay as you Go: a card on file first), `current`; null when nothing can.
 */
export type BillingAction = 'current' | 'upgrade' | 'downgrade' | 'add_card';

/** A plan on offer, as the account sees it in `GET /v1/billing`. */
export interface BillingPlan extends Plan {
  readonly current: boolean;
  readonly action: BillingAction | null;
}

/** `GET /v1/billing`: the account's plan, its subscription and the plans it may move to. */
export interface Billing {
  readonly provider: BillingProvider;
  readonly plan: Plan;
  readonly status: BillingStatus;
  readonly current_period_end: string | null;
  readonly cancel_at_period_end: boolean;
  /** A downgrade or cancellation that applies at `pending_at`. */
  readonly pending_plan: string | null;
  readonly pending_at: string | null;
  /** Past due: when the account falls back to the Free plan. */
  readonly grace_ends_at: string | null;
  readonly card_on_file: boolean;
  /** Whether `POST /v1/billing/portal` works (the account has a payment customer). */
  readonly portal: boolean;
  /** Pay as you Go only. */
  readonly budget: BudgetState | null;
  readonly plans: readonly BillingPlan[];
  /** Pay as you Go invoices, newest first. */
  readonly invoices: readonly PaygInvoice[];
}

/** A closed period's Pay as you Go invoice. */
export interface PaygInvoice {
  readonly period: string;
  readonly status: 'pending' | 'paid' | 'failed' | 'nothing_due';
  readonly invoice_id: string | null;
  readonly amount_cents: number;
  readonly amount_usd: number;
  readonly lines: readonly {
    readonly description: string;
    readonly amount_cents: number;
    readonly analytic: string | null;
  }[];
}

/** `POST /v1/billing/checkout`: a checkout session to open in a browser. */
export interface Checkout {
  readonly id: string;
  readonly url: string;
  /** `subscription`: a paid plan; `setup`: a card on file (Pay as you Go). */
  readonly mode: 'subscription' | 'setup';
}

/** `POST /v1/billing/portal`: the payment provider's page for the card, invoices, cancelling. */
export interface BillingPortal {
  readonly url: string;
}

/** A webhook endpoint (`/v1/webhooks`); never its secret. */
export interface WebhookEndpoint {
  readonly id: string;
  readonly url: string;
  readonly description: string;
  /** Empty: every event type. */
  readonly event_types: readonly string[];
  readonly enabled: boolean;
  /** Why the gateway disabled it (every delivery failing for 3 days). */
  readonly disabled_reason: string | null;
  readonly failing_since: string | null;
  /** While set, deliveries carry the previous secret's signature too. */
  readonly previous_secret_until: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A new or rotated endpoint with its signing secret (`whsec_…`), shown this once. */
export interface IssuedWebhookEndpoint {
  readonly endpoint: WebhookEndpoint;
  readonly secret: string;
}

/** One event to one endpoint, as its delivery log shows it. */
export interface WebhookDelivery {
  readonly id: string;
  /** The `webhook-id` header: the same on every attempt. */
  readonly event_id: string;
  readonly type: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly last_status: number | null;
  readonly last_error: string | null;
  readonly last_latency_ms: number | null;
  readonly next_attempt_at: string | null;
  readonly delivered_at: string | null;
  readonly created_at: string;
}

/** The account's alert thresholds (`/v1/account/alerts`). */
export interface AlertSettings {
  /** Percent of the month's credits (Pay as you Go: of the budget). */
  readonly usage_thresholds: readonly number[];
  /** An analytic failing more than this share of its calls over 5 minutes is failing. */
  readonly error_rate_percent: number;
}

/** One analytic an embed token may call (`name`, or `name@version`), and the params it fixes. */
export interface EmbedAnalytic {
  readonly name: string;
  /** Applied whether the page sends them or not; another value is refused (403). */
  readonly fixed_params?: Readonly<Record<string, unknown>>;
}

/** What `POST /v1/embed-tokens` takes. */
export interface NewEmbedToken {
  readonly analytics: readonly EmbedAnalytic[];
  /** Browser origins it may be used from (`https://app.example.com`); none: servers only. */
  readonly origins?: readonly string[];
  /** Seconds it is valid (default 3600, at most 86400). */
  readonly expires_in?: number;
  /** Its own rate limit, besides the account's. */
  readonly rate_limit?: { readonly limit: number; readonly window_seconds: number };
}

/** `POST /v1/embed-tokens`: the token a page sends as its bearer credential. */
export interface EmbedToken {
  readonly token: string;
  readonly token_id: string;
  /** ISO 8601. */
  readonly expires_at: string;
}

/** An HS256 secret your backend mints embed tokens with offline (its id is the tokens' `kid`). */
export interface EmbedSecret {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  /** Set by a rotation: it verifies tokens until then. */
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
}

/** A new embed secret: its `secret` is shown this once. */
export interface IssuedEmbedSecret extends EmbedSecret {
  readonly secret: string;
}

/** `POST /v1/embed-secrets/:id/rotate`: the new secret and the old one (now expiring). */
export interface RotatedEmbedSecret {
  readonly embed_secret: IssuedEmbedSecret;
  readonly previous: EmbedSecret;
}

/** `GET|PUT /v1/account/cors`. */
export interface CorsSettings {
  /** Whether the account's keys and OAuth tokens are accepted from other origins' pages. */
  readonly allow_keys_from_browsers: boolean;
}

/** `GET|PUT /v1/account/cors`'s answer. */
export interface CorsSettingsResponse {
  readonly cors: CorsSettings;
}

/** One call of the account's (`GET /v1/account/calls`): served, or failed after it ran. */
export interface Call {
  /** The `X-Request-Id` the call was answered with. */
  readonly request_id: string;
  readonly analytic: string;
  /** The version that served it (null: not recorded for failed calls). */
  readonly version: number | null;
  /** `ok`, or the error code the caller got. */
  readonly status: string;
  readonly error_code: string | null;
  /** Credits charged (failed calls are free: 0). */
  readonly credits: number;
  readonly latency_ms: number | null;
  /** How a served call was counted (null for failed calls). */
  readonly origin: 'paid' | 'free' | 'marketplace' | 'owner' | null;
  /** When it came in (served) or failed, ISO 8601 UTC. */
  readonly at: string;
}

/** A page of the account's recent calls, newest first. */
export interface Calls {
  readonly items: readonly Call[];
  /** Pass as `cursor` for older calls; null: no more. */
  readonly next_cursor: string | null;
}

/** The state of an asynchronous query. */
export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** An asynchronous query (`POST /v1/query` with `Prefer: respond-async`, `GET /v1/jobs/{id}`). */
export interface Job<Row = Record<string, unknown>> {
  readonly id: string;
  readonly state: JobState;
  readonly source: string;
  readonly version: number;
  readonly request_id: string;
  readonly created_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  /** A failed job's error, as the envelope says it. */
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details: readonly unknown[];
  } | null;
  readonly row_count: number | null;
  readonly truncated: boolean | null;
  /** Credits charged: the price once succeeded, else 0. */
  readonly credits: number;
  /** `ready` with `result`; `unavailable` when the instance answering does not hold the result. */
  readonly result_status?: 'pending' | 'ready' | 'unavailable';
  /** A page of the result, once succeeded (read from the instance that ran the job). */
  readonly result?: {
    readonly results: readonly Row[];
    readonly columns: readonly { readonly name: string; readonly type: string }[];
    readonly meta: {
      readonly row_count: number;
      readonly total_rows: number;
      readonly offset: number;
      readonly next: string | null;
    };
  } | null;
}

/** A page of the account's jobs (`GET /v1/jobs`). */
export interface JobList {
  readonly items: readonly Job[];
}
