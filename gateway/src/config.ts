// The gateway's configuration: one zod schema, parsed once at start from the environment, failing
// fast with every problem listed. No other module reads process.env.

import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';
import { type Plan, parsePlans } from './money/plan-catalog.js';
import type { AccessLogSetting } from './observability/access-log.js';
import type { TracingConfig } from './observability/tracing.js';
import { parseRateLimitTable } from './rate-limit/plan-policies.js';
import type { RateLimitPolicy } from './rate-limit/rate-limiter.js';
import { type Keyring, parseKeyring } from './security/keyring.js';
import type { AccountLimits } from './store/account-limits.js';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

const BUILTIN_CONNECTORS = [
  '@quarry/connector-postgres',
  '@quarry/connector-mysql',
  '@quarry/connector-duckdb',
  '@quarry/connector-bigquery',
  '@quarry/connector-snowflake',
  '@quarry/connector-trino',
];

/**
 * The repository (or shipped tree) root: this file is gateway/src/config.ts or
 * gateway/dist/config.js, two levels below it. Default paths of files the project ships (the
 * console, the example analytics) are resolved from here, not from the working directory, so an
 * instance started from anywhere finds them.
 */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Added to the longest analytic timeout for the default shutdown grace: answer, usage write, close. */
export const SHUTDOWN_MARGIN_MS = 5_000;

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().min(1).default('127.0.0.1'),
  QUARRY_DATA_DIR: z.string().min(1).default('./.quarry'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  QUARRY_READ_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  QUARRY_READ_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  QUARRY_SECRET_KEY: z.string().optional(),
  QUARRY_SECRET_KEYS_READABLE: z.string().optional(),
  QUARRY_ALLOW_PRIVATE_NETWORKS: bool.optional(),
  QUARRY_ALLOW_HOST_FILES: bool.optional(),
  QUARRY_ALLOW_HOST_IDENTITY: bool.optional(),
  QUARRY_SIGNUP: z.enum(['open', 'closed']).default('open'),
  QUARRY_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  QUARRY_ANALYTICS_DIR: z.string().optional(),
  QUARRY_CONSOLE_DIR: z.string().min(1).optional(),
  QUARRY_ANALYTICS_OWNER: z.email().optional(),
  QUARRY_DEMO: bool.optional(),
  QUARRY_DEMO_KEY: z.string().optional(),
  QUARRY_CONNECTORS: z.string().optional(),
  QUARRY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  QUARRY_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  QUARRY_ACCESS_LOG: z.enum(['info', 'debug', 'off']).default('info'),
  QUARRY_BUILD_COMMIT: z.string().min(1).max(64).optional(),
  OTEL_SDK_DISABLED: bool.optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none', '']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/json'], { message: 'only http/json is supported (the OTLP/HTTP JSON exporter)' })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .enum(['http/json'], { message: 'only http/json is supported (the OTLP/HTTP JSON exporter)' })
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('quarry-gateway'),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(10).max(600_000).default(5_000),
  QUARRY_CHANGE_LOG_RETENTION_HOURS: z.coerce.number().min(1).max(87_600).default(24),
  QUARRY_SESSION_RETENTION_DAYS: z.coerce.number().min(0).max(3_650).default(30),
  QUARRY_RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(3_600_000),
  QUARRY_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  // Default: the longest analytic an owner may deploy, plus SHUTDOWN_MARGIN_MS (loadConfig).
  QUARRY_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(900_000).optional(),
  QUARRY_MAX_ANALYTIC_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  QUARRY_MAX_ASYNC_TIMEOUT_MS: z.coerce.number().int().min(100).max(1_800_000).default(1_800_000),
  QUARRY_JOB_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  QUARRY_SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  QUARRY_REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  QUARRY_FREE_CREDITS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /** The old name of QUARRY_FREE_CREDITS (a call of 1 credit), still taken. */
  QUARRY_FREE_CALLS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  QUARRY_PLANS: z.string().optional(),
  QUARRY_RATE_LIMITS: z.string().optional(),
  QUARRY_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .max(64 * 1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
  QUARRY_MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(8 * 1024 * 1024),
  QUARRY_RESULT_STORE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .max(Number.MAX_SAFE_INTEGER)
    .default(1024 * 1024 * 1024),
  QUARRY_RESULT_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .max(7 * 24 * 3600)
    .default(3600),
  QUARRY_RESULT_BYTES_IN_FLIGHT: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024 * 1024)
    .optional(),
  QUARRY_WAREHOUSE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  QUARRY_BREAKER_FAILURES: z.coerce.number().int().min(1).max(10_000).default(5),
  QUARRY_BREAKER_OPEN_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  QUARRY_STORE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  QUARRY_REDIS_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  QUARRY_REAP_AFTER_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(900_000),
  QUARRY_WEBHOOK_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  // Longer than a delivery's 5 s time limit, so a live instance's claim never lapses mid-send.
  QUARRY_WEBHOOK_LEASE_MS: z.coerce.number().int().min(6_000).max(3_600_000).default(30_000),
  QUARRY_WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
  QUARRY_WEBHOOK_RETRY_HOURS: z.coerce.number().min(0.0001).max(720).default(72),
  QUARRY_ANALYTIC_HEALTH_MIN_CALLS: z.coerce.number().int().min(1).max(1_000_000).default(5),
  QUARRY_RESERVE_AHEAD: z.enum(['always', 'near-limit']).default('near-limit'),
  QUARRY_RESERVE_MARGIN: z.coerce.number().int().min(0).max(1_000_000_000).default(100),
  QUARRY_KEY_CACHE_MS: z.coerce.number().int().min(0).max(5_000).default(1_000),
  QUARRY_PUBLIC_URL: z
    // Any http(s) URL: a domain name, an IP address or localhost (z.httpUrl() takes names only).
    .url({ protocol: /^https?$/ })
    .refine((u) => !/[?#]/.test(u), 'must have no query or fragment (it is the OAuth issuer)')
    .optional(),
  QUARRY_PAYMENTS: z.enum(['none', 'sandbox', 'stripe']).optional(),
  QUARRY_SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'an SMTP URL (smtp://user:password@host:587 or smtps://…:465)')
    .optional(),
  QUARRY_MAIL_FROM: z.string().min(3).max(320).optional(),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\w+$/, 'a Stripe secret key (sk_… or rk_…)')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, 'a webhook signing secret (whsec_…)')
    .optional(),
  STRIPE_CONNECT_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\w+$/, 'a webhook signing secret (whsec_…)')
    .optional(),
  QUARRY_STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).optional(),
  QUARRY_STRIPE_PRICES: z.string().optional(),
  QUARRY_PAYMENT_GRACE_DAYS: z.coerce.number().min(0).max(365).default(7),
  QUARRY_BILLING_TICK_MS: z.coerce.number().int().min(100).max(86_400_000).default(60_000),
  QUARRY_MIN_PAYOUT_CENTS: z.coerce.number().int().min(0).max(100_000_000).default(1_000),
  QUARRY_CLOSE_GRACE_HOURS: z.coerce
    .number()
    .min(0)
    .max(24 * 31)
    .default(24),
  QUARRY_AUTO_CLOSE: bool.optional(),
  QUARRY_CLOSE_LEASE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  QUARRY_LEDGER_RETENTION_MONTHS: z.coerce.number().int().min(1).max(1_200).default(13),
  QUARRY_OAUTH_TOKEN_TTL: z.coerce.number().int().min(60).max(86_400).default(900),
  QUARRY_MAX_LIVE_POOLS: z.coerce.number().int().min(1).max(100_000).default(200),
  QUARRY_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(10_000),
  QUARRY_MAX_PRICE: z.coerce.number().int().min(1).max(1_000_000).default(100),
  // Fractions allowed: tests (and an operator trying it) use a notice of seconds.
  QUARRY_PRICE_NOTICE_HOURS: z.coerce.number().min(0).max(8_760).default(168),
  QUARRY_MAX_CONNECTIONS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(20),
  QUARRY_MAX_ANALYTICS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(100),
  QUARRY_MAX_VERSIONS_KEPT: z.coerce.number().int().min(1).max(1_000_000).default(50),
  QUARRY_MAX_KEYS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(50),
  QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(20),
  QUARRY_PREVIEW_ROWS: z.coerce.number().int().min(1).max(10_000).default(10),
  QUARRY_MCP_TOOLS_PER_PAGE: z.coerce.number().int().min(1).max(10_000).default(100),
  QUARRY_MCP_SESSIONS: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  QUARRY_MCP_SESSIONS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1_000_000).default(5),
  QUARRY_MAX_BUDGET_USD: z.coerce.number().int().min(1).max(100_000_000).default(10_000),
  QUARRY_DEFAULT_BUDGET_USD: z.coerce.number().int().min(0).max(100_000_000).default(100),
  // Test-only: holds every served query call this long after its charge is durable and before
  // it answers, so an end-to-end test can kill the process in that window. Never set it in use.
  QUARRY_TEST_PAUSE_AFTER_CHARGE_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  // Test-only: start-up work (the demo warehouse) waits until this file exists, so an end-to-end
  // test can call the gateway while it is pending, and then let it finish. Never set it in use.
  QUARRY_TEST_STARTUP_GATE: z.string().min(1).optional(),
  QUARRY_PREVIEWS_PER_DAY: z.coerce.number().int().min(0).max(1_000_000).default(20),
  QUARRY_FAILED_WAREHOUSE_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  QUARRY_FAILED_WINDOW_SECONDS: z.coerce.number().min(1).max(86_400).default(600),
  QUARRY_SIGNUPS_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000_000).default(5),
  QUARRY_SESSION_TTL: z.coerce.number().int().min(60).max(2_592_000).default(86_400),
  // Default: a quarter of the cores, at least 1. A hash holds a core for its whole ~100-300 ms,
  // so on a small host more than one at a time takes the CPU from queries as well as the threads
  // (scripts/gateway-heap-flags.mjs sizes the thread pool from the same figure).
  QUARRY_PASSWORD_HASH_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(Math.max(1, Math.floor(availableParallelism() / 4))),
  QUARRY_PASSWORD_HASH_QUEUE: z.coerce.number().int().min(0).max(10_000).default(32),
  // `true` = 1 proxy, `false` = none, or how many proxies stand in front of the gateway.
  QUARRY_TRUST_PROXY: z
    .union([
      z.enum(['true', 'false', '']).transform((v) => (v === 'true' ? 1 : 0)),
      z.coerce.number().int().min(0).max(16),
    ])
    .default(0),
});

export interface GatewayConfig {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Unset: embedded PGlite in dataDir. */
  readonly databaseUrl: string | undefined;
  /**
   * A read replica of the PostgreSQL store (QUARRY_READ_DATABASE_URL, only with DATABASE_URL) and
   * its pool's size (QUARRY_READ_POOL_SIZE): statements, usage, recent-calls and marketplace pages
   * read through it. Unset: everything reads the primary.
   */
  readonly readReplica: { readonly url: string; readonly poolSize: number } | undefined;
  /**
   * QUARRY_SECRET_KEY parsed: `id:base64[,id:base64…]` (first is current), or one base64 key,
   * with QUARRY_SECRET_KEYS_READABLE's keys added as readable only; required outside the
   * embedded demo (which makes its own in the data directory).
   */
  readonly keyring: Keyring | undefined;
  /**
   * What owners' connections may reach beyond public addresses: private networks, the gateway
   * host's files, its cloud identity (QUARRY_ALLOW_PRIVATE_NETWORKS, _HOST_FILES, _HOST_IDENTITY).
   */
  readonly destinations: {
    readonly privateNetworks: boolean;
    readonly hostFiles: boolean;
    readonly hostIdentity: boolean;
  };
  readonly signup: 'open' | 'closed';
  readonly adminToken: string | undefined;
  /** How callers pay (docs/money.md): QUARRY_PAYMENTS and, for Stripe, its keys. */
  readonly payments: PaymentsConfig;
  /** Directory of analytic YAML files loaded at start. */
  readonly analyticsDir: string | undefined;
  /** The built web console served at `/` (QUARRY_CONSOLE_DIR, default the package's console/dist). */
  readonly consoleDir: string;
  /** Email of the account that owns the analytics of `analyticsDir` outside the demo. */
  readonly analyticsOwner: string | undefined;
  /** Embedded demo: DuckDB demo warehouse, example analytics, demo account and key. */
  readonly demo: boolean;
  readonly demoKey: string | undefined;
  /** Module specifiers of connector plugins to load. */
  readonly connectors: readonly string[];
  readonly logLevel: string;
  /** QUARRY_LOG_FORMAT: `auto` (pretty on a terminal, else JSON), `json` or `pretty`. */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /**
   * QUARRY_ACCESS_LOG: one line per request at `info` (default; health probes and scrapes left
   * out), `debug` (those too) or `off`, whatever QUARRY_LOG_LEVEL says.
   */
  readonly accessLog: AccessLogSetting;
  /** QUARRY_BUILD_COMMIT: the commit to report instead of the one `npm run build` recorded. */
  readonly buildCommit: string | undefined;
  /**
   * OpenTelemetry tracing, on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
   * OTEL_EXPORTER_OTLP_ENDPOINT is set (and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none).
   */
  readonly tracing: TracingConfig | undefined;
  /**
   * Pruning of tables that only grow (store/retention.ts): change-log rows older than
   * `changeLogMs`; console sessions expired or signed out more than `sessionsMs` ago (0: at
   * once); run every `intervalMs` by every instance.
   */
  readonly retention: {
    readonly changeLogMs: number;
    readonly sessionsMs: number;
    readonly intervalMs: number;
  };
  readonly bodyLimit: number;
  /**
   * How long requests in flight at shutdown may take to finish (QUARRY_SHUTDOWN_GRACE_MS); by
   * default the longest analytic timeout plus SHUTDOWN_MARGIN_MS, so a restart cuts no call.
   */
  readonly shutdownGraceMs: number;
  /**
   * The longest `limits.timeout_ms` an analytic may have (QUARRY_MAX_ANALYTIC_TIMEOUT_MS): a
   * longer one is refused at deploy, and one deployed before is cut to it when it runs.
   */
  readonly maxAnalyticTimeoutMs: number;
  /**
   * Asynchronous queries (docs/large-results.md): the longest a job runs
   * (QUARRY_MAX_ASYNC_TIMEOUT_MS; the reaper leaves a live job's reservation alone, whatever
   * QUARRY_REAP_AFTER_MS), and how long a job's heartbeat may lapse before any instance marks it
   * failed and gives its reservation back (QUARRY_JOB_LEASE_MS).
   */
  readonly jobs: { readonly maxTimeoutMs: number; readonly leaseMs: number };
  /**
   * On SIGTERM, how long the instance keeps serving with `/readyz` failing before it stops
   * listening (QUARRY_SHUTDOWN_DELAY_MS; 0: at once): behind a proxy, long enough for its health
   * checks to take the instance out, so no new connection reaches a closing listener.
   */
  readonly shutdownDelayMs: number;
  /** Redis for rate limits shared by every instance; unset: in-process limits. */
  readonly redisUrl: string | undefined;
  /** Calls a month on the Free plan (the price list says 30). */
  readonly freeCredits: number;
  /** The plans: the defaults (Free with `freeCredits`) with QUARRY_PLANS (a JSON array) over them. */
  readonly plans: readonly Plan[];
  /** QUARRY_RATE_LIMITS (`{plan: {limit, window_seconds, burst}}`): per-plan rate-limit overrides. */
  readonly rateLimits: Readonly<Record<string, RateLimitPolicy>>;
  /**
   * A reserved call still pending after this long belongs to a dead instance and is released
   * (never charged). Must exceed the longest analytic timeout (600 s max); default 15 min.
   */
  readonly reapAfterMs: number;
  /**
   * Webhook delivery (docs/webhooks.md): how often each instance looks for due deliveries
   * (QUARRY_WEBHOOK_POLL_MS), how long a claim holds one (QUARRY_WEBHOOK_LEASE_MS), the first
   * retry's wait, doubled after each (QUARRY_WEBHOOK_RETRY_BASE_MS), and how long a failing
   * delivery is retried before it gives up and its endpoint is disabled (QUARRY_WEBHOOK_RETRY_HOURS).
   */
  readonly webhooks: {
    readonly pollMs: number;
    readonly leaseMs: number;
    readonly retryBaseMs: number;
    readonly retryWindowMs: number;
    /** Calls an analytic needs in 5 minutes before its error rate can mark it failing. */
    readonly healthMinCalls: number;
  };
  /**
   * `near-limit` (default): a call of an account with at least `reserveMargin` calls of headroom
   * runs first and is charged with one write once served; `always`: every call reserves its quota
   * unit (a pending event) before the warehouse is asked (money/metering.ts).
   */
  readonly reserveAhead: 'always' | 'near-limit';
  readonly reserveMargin: number;
  /** Bytes the result cache may hold (bodies, keys and per-entry overhead). */
  readonly cacheMaxBytes: number;
  /**
   * The most one warehouse result may weigh (its JSON plus 64 bytes a row); past it the call
   * fails with RESULT_TOO_LARGE before the rows are all held in memory where the connector can.
   */
  readonly maxResultBytes: number;
  /**
   * Warehouse result bytes in flight at once, process-wide (QUARRY_RESULT_BYTES_IN_FLIGHT): a
   * query that does not fit waits briefly, then 503. Default: a third of the V8 heap cap above
   * the result cache, and at least one result of `maxResultBytes`.
   */
  readonly resultBytesInFlight: number;
  /**
   * The data dir's result store (pages' snapshots, exports): its bound on disk in bytes
   * (QUARRY_RESULT_STORE_MAX_BYTES, least recently used results evicted first) and how long a
   * result stays for its pages (QUARRY_RESULT_TTL_SECONDS).
   */
  readonly resultStore: { readonly maxBytes: number; readonly ttlSeconds: number };
  /**
   * Time bounds on I/O outside the process: opening a warehouse session (whatever the
   * connection's own connect timeout says); each control-plane store call (connect, and each
   * statement client- and server-side); each Redis command and connect.
   */
  readonly timeouts: {
    readonly warehouseConnectMs: number;
    readonly storeMs: number;
    readonly redisMs: number;
  };
  /** Per-connection circuit breakers: faults in a row that open one, and how long it stays open. */
  readonly breaker: { readonly failures: number; readonly openMs: number };
  /** How long a verified key is trusted in process before the store is asked again (≤ 5 s). */
  readonly keyCacheMs: number;
  /**
   * The gateway's public URL, without a trailing slash: QUARRY_PUBLIC_URL, else
   * `http://HOST:PORT`. It is the OAuth issuer, so instances behind one address must share it.
   */
  readonly publicUrl: string;
  /** Lifetime of OAuth access tokens, in seconds (QUARRY_OAUTH_TOKEN_TTL). */
  readonly oauthTokenTtlSeconds: number;
  /** Live connection pools kept at once; past it the least recently used is closed. */
  readonly maxLivePools: number;
  /** How long a client may take to send its request headers (QUARRY_HEADERS_TIMEOUT_MS). */
  readonly headersTimeoutMs: number;
  /** The highest price an analytic may charge, in credits a call (QUARRY_MAX_PRICE). */
  readonly maxPrice: number;
  /** How long a price rise waits before calls pay it, in ms (QUARRY_PRICE_NOTICE_HOURS; 0: at once). */
  readonly priceNoticeMs: number;
  /** What one account may hold (QUARRY_MAX_*_PER_ACCOUNT, QUARRY_MAX_VERSIONS_KEPT). */
  readonly accountLimits: AccountLimits;
  /** The most rows a marketplace preview answers (QUARRY_PREVIEW_ROWS). */
  readonly previewRows: number;
  /** Tools in one page of an MCP `tools/list` (QUARRY_MCP_TOOLS_PER_PAGE); `nextCursor` for more. */
  readonly mcpToolsPerPage: number;
  /**
   * MCP sessions one process keeps (QUARRY_MCP_SESSIONS) and one account may hold in it
   * (QUARRY_MCP_SESSIONS_PER_ACCOUNT); past either the least recently used goes.
   */
  readonly mcpSessions: { readonly max: number; readonly perAccount: number };
  /** Pay as you Go budgets, in micro-USD: the default an account starts with, and the operator's cap. */
  readonly budgets: { readonly defaultMicroUsd: number; readonly maxMicroUsd: number };
  /** Test-only (QUARRY_TEST_PAUSE_AFTER_CHARGE_MS): pause between a call's charge and its answer. */
  readonly testPauseAfterChargeMs: number;
  /** Test-only (QUARRY_TEST_STARTUP_GATE): start-up work waits until this file exists. */
  readonly testStartupGate: string | undefined;
  /** Free previews an account may make a day, across its keys (QUARRY_PREVIEWS_PER_DAY; 0: none). */
  readonly previewsPerDay: number;
  /**
   * Warehouse time an account's failed calls may use in a sliding window before its calls that
   * would run a query are refused (429 FAILED_CALLS_THROTTLED): QUARRY_FAILED_WAREHOUSE_SECONDS
   * (0: no throttle) per QUARRY_FAILED_WINDOW_SECONDS, in ms.
   */
  readonly failedCalls: { readonly budgetMs: number; readonly windowMs: number };
  /** Sign-ups allowed per client address an hour, at most that many at once (GCRA). */
  readonly signupsPerHour: number;
  /** Mail to people (password resets): QUARRY_SMTP_URL, or undefined (the operator's log). */
  readonly mail: { readonly smtpUrl: string | undefined; readonly from: string };
  /** Seconds a console session lasts from login (QUARRY_SESSION_TTL, default one day). */
  readonly sessionTtlSeconds: number;
  /**
   * Password hashes (scrypt) at once, and how many may wait behind them before the next login,
   * sign-up or password change is refused with 429 (QUARRY_PASSWORD_HASH_CONCURRENCY, _QUEUE).
   */
  readonly passwordHash: { readonly concurrency: number; readonly queue: number };
  /**
   * How many proxies in front of the gateway to trust (QUARRY_TRUST_PROXY): 0 takes the client
   * address from the socket; N takes the address the N-th nearest proxy saw, from the right of
   * X-Forwarded-For (security/client-address.ts).
   */
  readonly trustProxyHops: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

/** A JSON variable's value (undefined when unset or blank); throws when it is not JSON. */
/** The Free plan's credits a month: QUARRY_FREE_CREDITS, or its old name QUARRY_FREE_CALLS, or 30. */
function freeCreditsOf(env: { QUARRY_FREE_CREDITS?: number; QUARRY_FREE_CALLS?: number }): number {
  return env.QUARRY_FREE_CREDITS ?? env.QUARRY_FREE_CALLS ?? 30;
}

function jsonOf(text: string | undefined): unknown {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('not valid JSON');
  }
}

/** Runs a variable's own parser; what it throws becomes a listed problem (undefined is returned). */
function parseVariable<T>(problems: string[], name: string, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    problems.push(message.startsWith(name) ? message : `${name}: ${message}`);
    return undefined;
  }
}

/** QUARRY_PAYMENTS and what it needs. */
export interface PaymentsConfig {
  /** Default: `sandbox` on the embedded store, `none` with DATABASE_URL. */
  readonly kind: 'none' | 'sandbox' | 'stripe';
  readonly stripe:
    | {
        readonly secretKey: string;
        readonly webhookSecret: string;
        readonly connectWebhookSecret: string | undefined;
        readonly apiBase: string | undefined;
        readonly prices: Readonly<Record<string, string>>;
      }
    | undefined;
  /** QUARRY_PAYMENT_GRACE_DAYS: how long a past-due account keeps its plan. */
  readonly graceMs: number;
  /** QUARRY_BILLING_TICK_MS: how often an instance applies due downgrades and ended grace periods. */
  readonly tickMs: number;
  /** QUARRY_MIN_PAYOUT_CENTS: smaller payouts are held and carried. */
  readonly minPayoutCents: number;
  /** QUARRY_CLOSE_GRACE_HOURS: how long after a month's end it closes by itself (so late usage lands). */
  readonly closeGraceMs: number;
  /** QUARRY_AUTO_CLOSE (default true): whether instances close months by themselves. */
  readonly autoClose: boolean;
  /** QUARRY_CLOSE_LEASE_MS: how long a closing instance's claim lasts unrenewed before another may resume. */
  readonly closeLeaseMs: number;
  /** QUARRY_LEDGER_RETENTION_MONTHS: closed months older than this lose their raw usage events (rollups stay). */
  readonly ledgerRetentionMonths: number;
}

/** Parses the environment once; throws ConfigError listing every problem. */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  cwd = process.cwd(),
  heapLimitBytes = getHeapStatistics().heap_size_limit,
): GatewayConfig {
  const parsed = EnvSchema.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`);
  // Cross-field rules read the raw values, so they are listed even when other variables are bad.
  if (env.QUARRY_PAYMENTS === 'stripe') {
    for (const name of ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'] as const) {
      if (!env[name]) problems.push(`${name}: required when QUARRY_PAYMENTS=stripe (docs/money.md)`);
    }
  }
  if (env.DATABASE_URL !== undefined && !env.QUARRY_SECRET_KEY) {
    problems.push('QUARRY_SECRET_KEY: required when DATABASE_URL is set (32 random bytes, base64)');
  }
  if (env.QUARRY_READ_DATABASE_URL !== undefined && env.DATABASE_URL === undefined) {
    problems.push(
      'QUARRY_READ_DATABASE_URL: needs DATABASE_URL (a read replica of the PostgreSQL store; the embedded store has none)',
    );
  }
  // The one switch that granted three powers is gone; keeping it as an alias would keep granting
  // whichever of them the operator did not mean, so it fails fast and names its replacements.
  if (env.QUARRY_ALLOW_PRIVATE_HOSTS !== undefined) {
    problems.push(
      'QUARRY_ALLOW_PRIVATE_HOSTS: replaced by QUARRY_ALLOW_PRIVATE_NETWORKS, QUARRY_ALLOW_HOST_FILES and QUARRY_ALLOW_HOST_IDENTITY (set only those you need; see docs/security.md)',
    );
  }
  // Variables with a syntax of their own are parsed here too, so their problems are listed with
  // the rest and the process stops before it opens the store.
  const plans = parseVariable(problems, 'QUARRY_PLANS', () =>
    parsePlans(jsonOf(env.QUARRY_PLANS), parsed.success ? freeCreditsOf(parsed.data) : 30),
  );
  const rateLimits = parseVariable(problems, 'QUARRY_RATE_LIMITS', () =>
    parseRateLimitTable(jsonOf(env.QUARRY_RATE_LIMITS)),
  );
  const secretKey = env.QUARRY_SECRET_KEY;
  const readableKeys = env.QUARRY_SECRET_KEYS_READABLE?.trim() || undefined;
  if (readableKeys !== undefined && !secretKey) {
    problems.push('QUARRY_SECRET_KEYS_READABLE: needs QUARRY_SECRET_KEY (the key that seals)');
  }
  const keyring =
    secretKey === undefined || secretKey === ''
      ? undefined
      : parseVariable(problems, 'QUARRY_SECRET_KEY', () => parseKeyring(secretKey, readableKeys));
  const stripePrices = parseVariable(problems, 'QUARRY_STRIPE_PRICES', () => {
    const value = jsonOf(env.QUARRY_STRIPE_PRICES);
    if (value === undefined) return {};
    const prices = z.record(z.string(), z.string().regex(/^price_\w+$/)).safeParse(value);
    if (!prices.success) throw new Error('a JSON object of plan id → Stripe price id (price_…)');
    return prices.data;
  });
  if (
    !parsed.success ||
    problems.length > 0 ||
    plans === undefined ||
    rateLimits === undefined ||
    stripePrices === undefined
  )
    throw new ConfigError(problems);
  const e = parsed.data;
  const embedded = e.DATABASE_URL === undefined;
  const demo = e.QUARRY_DEMO ?? embedded;
  const dataDir = path.resolve(cwd, e.QUARRY_DATA_DIR);
  const extra = (e.QUARRY_CONNECTORS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    readReplica:
      e.QUARRY_READ_DATABASE_URL === undefined
        ? undefined
        : { url: e.QUARRY_READ_DATABASE_URL, poolSize: e.QUARRY_READ_POOL_SIZE },
    keyring,
    destinations: {
      privateNetworks: e.QUARRY_ALLOW_PRIVATE_NETWORKS ?? false,
      hostFiles: e.QUARRY_ALLOW_HOST_FILES ?? false,
      hostIdentity: e.QUARRY_ALLOW_HOST_IDENTITY ?? false,
    },
    signup: e.QUARRY_SIGNUP,
    adminToken: e.QUARRY_ADMIN_TOKEN,
    payments: {
      // The sandbox only where nothing else is set up: an operator on PostgreSQL chooses.
      kind: e.QUARRY_PAYMENTS ?? (embedded ? 'sandbox' : 'none'),
      stripe:
        e.STRIPE_SECRET_KEY !== undefined && e.STRIPE_WEBHOOK_SECRET !== undefined
          ? {
              secretKey: e.STRIPE_SECRET_KEY,
              webhookSecret: e.STRIPE_WEBHOOK_SECRET,
              connectWebhookSecret: e.STRIPE_CONNECT_WEBHOOK_SECRET,
              apiBase: e.QUARRY_STRIPE_API_BASE,
              prices: stripePrices,
            }
          : undefined,
      graceMs: Math.round(e.QUARRY_PAYMENT_GRACE_DAYS * 86_400_000),
      tickMs: e.QUARRY_BILLING_TICK_MS,
      minPayoutCents: e.QUARRY_MIN_PAYOUT_CENTS,
      closeGraceMs: Math.round(e.QUARRY_CLOSE_GRACE_HOURS * 3_600_000),
      autoClose: e.QUARRY_AUTO_CLOSE ?? true,
      closeLeaseMs: e.QUARRY_CLOSE_LEASE_MS,
      ledgerRetentionMonths: e.QUARRY_LEDGER_RETENTION_MONTHS,
    },
    analyticsDir:
      e.QUARRY_ANALYTICS_DIR !== undefined
        ? path.resolve(cwd, e.QUARRY_ANALYTICS_DIR)
        : demo
          ? path.join(PACKAGE_ROOT, 'examples/analytics')
          : undefined,
    analyticsOwner: e.QUARRY_ANALYTICS_OWNER,
    consoleDir:
      e.QUARRY_CONSOLE_DIR === undefined
        ? path.join(PACKAGE_ROOT, 'console/dist')
        : path.resolve(cwd, e.QUARRY_CONSOLE_DIR),
    demo,
    demoKey: e.QUARRY_DEMO_KEY,
    connectors: [...new Set([...BUILTIN_CONNECTORS, ...extra])],
    logLevel: e.QUARRY_LOG_LEVEL,
    logFormat: e.QUARRY_LOG_FORMAT,
    accessLog: e.QUARRY_ACCESS_LOG,
    buildCommit: e.QUARRY_BUILD_COMMIT,
    tracing: tracingOf(e),
    retention: {
      changeLogMs: Math.round(e.QUARRY_CHANGE_LOG_RETENTION_HOURS * 3_600_000),
      sessionsMs: Math.round(e.QUARRY_SESSION_RETENTION_DAYS * 86_400_000),
      intervalMs: e.QUARRY_RETENTION_INTERVAL_MS,
    },
    bodyLimit: e.QUARRY_BODY_LIMIT,
    shutdownGraceMs: e.QUARRY_SHUTDOWN_GRACE_MS ?? e.QUARRY_MAX_ANALYTIC_TIMEOUT_MS + SHUTDOWN_MARGIN_MS,
    maxAnalyticTimeoutMs: e.QUARRY_MAX_ANALYTIC_TIMEOUT_MS,
    shutdownDelayMs: e.QUARRY_SHUTDOWN_DELAY_MS,
    keyCacheMs: e.QUARRY_KEY_CACHE_MS,
    publicUrl:
      e.QUARRY_PUBLIC_URL?.replace(/\/+$/, '') ??
      `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`,
    oauthTokenTtlSeconds: e.QUARRY_OAUTH_TOKEN_TTL,
    maxLivePools: e.QUARRY_MAX_LIVE_POOLS,
    headersTimeoutMs: e.QUARRY_HEADERS_TIMEOUT_MS,
    maxPrice: e.QUARRY_MAX_PRICE,
    priceNoticeMs: Math.round(e.QUARRY_PRICE_NOTICE_HOURS * 3_600_000),
    accountLimits: {
      connections: e.QUARRY_MAX_CONNECTIONS_PER_ACCOUNT,
      analytics: e.QUARRY_MAX_ANALYTICS_PER_ACCOUNT,
      versionsKept: e.QUARRY_MAX_VERSIONS_KEPT,
      keys: e.QUARRY_MAX_KEYS_PER_ACCOUNT,
      oauthClients: e.QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT,
    },
    previewRows: e.QUARRY_PREVIEW_ROWS,
    mcpToolsPerPage: e.QUARRY_MCP_TOOLS_PER_PAGE,
    mcpSessions: { max: e.QUARRY_MCP_SESSIONS, perAccount: e.QUARRY_MCP_SESSIONS_PER_ACCOUNT },
    budgets: {
      defaultMicroUsd: Math.min(e.QUARRY_DEFAULT_BUDGET_USD, e.QUARRY_MAX_BUDGET_USD) * 1_000_000,
      maxMicroUsd: e.QUARRY_MAX_BUDGET_USD * 1_000_000,
    },
    testPauseAfterChargeMs: e.QUARRY_TEST_PAUSE_AFTER_CHARGE_MS,
    testStartupGate: e.QUARRY_TEST_STARTUP_GATE,
    previewsPerDay: e.QUARRY_PREVIEWS_PER_DAY,
    failedCalls: {
      budgetMs: Math.round(e.QUARRY_FAILED_WAREHOUSE_SECONDS * 1000),
      windowMs: Math.round(e.QUARRY_FAILED_WINDOW_SECONDS * 1000),
    },
    signupsPerHour: e.QUARRY_SIGNUPS_PER_HOUR,
    mail: { smtpUrl: e.QUARRY_SMTP_URL, from: e.QUARRY_MAIL_FROM ?? 'Quarry <no-reply@localhost>' },
    sessionTtlSeconds: e.QUARRY_SESSION_TTL,
    passwordHash: { concurrency: e.QUARRY_PASSWORD_HASH_CONCURRENCY, queue: e.QUARRY_PASSWORD_HASH_QUEUE },
    trustProxyHops: e.QUARRY_TRUST_PROXY,
    redisUrl: e.QUARRY_REDIS_URL,
    freeCredits: freeCreditsOf(e),
    plans,
    rateLimits,
    reapAfterMs: e.QUARRY_REAP_AFTER_MS,
    jobs: {
      maxTimeoutMs: e.QUARRY_MAX_ASYNC_TIMEOUT_MS,
      leaseMs: e.QUARRY_JOB_LEASE_MS,
    },
    webhooks: {
      pollMs: e.QUARRY_WEBHOOK_POLL_MS,
      leaseMs: e.QUARRY_WEBHOOK_LEASE_MS,
      retryBaseMs: e.QUARRY_WEBHOOK_RETRY_BASE_MS,
      retryWindowMs: Math.round(e.QUARRY_WEBHOOK_RETRY_HOURS * 3_600_000),
      healthMinCalls: e.QUARRY_ANALYTIC_HEALTH_MIN_CALLS,
    },
    reserveAhead: e.QUARRY_RESERVE_AHEAD,
    reserveMargin: e.QUARRY_RESERVE_MARGIN,
    cacheMaxBytes: e.QUARRY_CACHE_MAX_BYTES,
    maxResultBytes: e.QUARRY_MAX_RESULT_BYTES,
    resultStore: { maxBytes: e.QUARRY_RESULT_STORE_MAX_BYTES, ttlSeconds: e.QUARRY_RESULT_TTL_SECONDS },
    resultBytesInFlight:
      e.QUARRY_RESULT_BYTES_IN_FLIGHT ??
      Math.max(e.QUARRY_MAX_RESULT_BYTES, Math.floor((heapLimitBytes - e.QUARRY_CACHE_MAX_BYTES) / 3)),
    timeouts: {
      warehouseConnectMs: e.QUARRY_WAREHOUSE_CONNECT_TIMEOUT_MS,
      storeMs: e.QUARRY_STORE_TIMEOUT_MS,
      redisMs: e.QUARRY_REDIS_TIMEOUT_MS,
    },
    breaker: { failures: e.QUARRY_BREAKER_FAILURES, openMs: e.QUARRY_BREAKER_OPEN_MS },
  };
}

/**
 * Tracing from the standard OpenTelemetry variables: the traces endpoint is used as is, the
 * general one gets `/v1/traces` appended (as the OTLP exporters do).
 */
function tracingOf(e: z.infer<typeof EnvSchema>): TracingConfig | undefined {
  if (e.OTEL_SDK_DISABLED === true || e.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  return url === undefined
    ? undefined
    : { url, serviceName: e.OTEL_SERVICE_NAME, exportDelayMs: e.OTEL_BSP_SCHEDULE_DELAY };
}

/** A copy safe to log: secrets replaced. */
export function redactedConfig(config: GatewayConfig): Record<string, unknown> {
  return {
    ...config,
    databaseUrl: config.databaseUrl?.replace(/\/\/[^@/]*@/, '//***@'),
    readReplica: config.readReplica && {
      ...config.readReplica,
      url: config.readReplica.url.replace(/\/\/[^@/]*@/, '//***@'),
    },
    keyring: config.keyring ? '***' : undefined,
    adminToken: config.adminToken ? '***' : undefined,
    payments: {
      ...config.payments,
      stripe: config.payments.stripe && {
        ...config.payments.stripe,
        secretKey: '***',
        webhookSecret: '***',
        connectWebhookSecret: config.payments.stripe.connectWebhookSecret && '***',
      },
    },
    demoKey: config.demoKey ? '***' : undefined,
    redisUrl: config.redisUrl?.replace(/\/\/[^@/]*@/, '//***@'),
    mail: { ...config.mail, smtpUrl: config.mail.smtpUrl?.replace(/\/\/[^@/]*@/, '//***@') },
  };
}
