// The services a running gateway injects into its app (typed context: docs/architecture.md, "Gateway").

import type { Authenticator } from '../auth/authenticator.js';
import type { KnownCredentials } from '../auth/known-credentials.js';
import type { TryTokens } from '../auth/try-token.js';
import type { ResultCache } from '../cache/result-cache.js';
import type { Catalog } from '../catalog/catalog.js';
import type { GatewayConfig } from '../config.js';
import type { ConnectionBreakers } from '../connections/connection-breakers.js';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import type { McpSessions } from '../mcp/mcp-sessions.js';
import type { McpTools } from '../mcp/mcp-tools.js';
import type { BillingService } from '../money/billing-service.js';
import type { Metering } from '../money/metering.js';
import type { MoneyStore } from '../money/money-store.js';
import type { PaymentsService } from '../money/payments-service.js';
import type { PayoutsService } from '../money/payouts.js';
import type { PlanCatalog } from '../money/plan-catalog.js';
import type { OAuthServices } from '../oauth/oauth-services.js';
import type { RequestRecorder } from '../observability/access-log.js';
import type { BuildInfo } from '../observability/build-info.js';
import type { Logger } from '../observability/logger.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { Jobs } from '../query/jobs.js';
import type { PreviewListings } from '../query/preview-listings.js';
import type { QueryCallHandler } from '../query/query-call.js';
import type { QueryService } from '../query/query-service.js';
import type { FailureThrottle } from '../rate-limit/failure-throttle.js';
import type { PlanPolicies } from '../rate-limit/plan-policies.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { PasswordHasher } from '../security/password-hash.js';
import type { AccountClosure } from '../store/account-closure-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { AccountService } from './account-service.js';
import type { AnalyticsService } from './analytics-service.js';
import type { ConnectionService } from './connection-service.js';
import type { EmbedService } from './embed-service.js';
import type { MarketplaceService } from './marketplace-service.js';
import type { SessionService } from './session-service.js';
import type { WebhookService } from './webhook-service.js';

export interface HealthCheck {
  readonly ok: boolean;
  /** Working, but not as configured (the Redis limiter's per-instance fallback): ready, reported degraded. */
  readonly degraded?: boolean;
  readonly message?: string;
}

export interface HealthService {
  check(): Promise<Record<string, HealthCheck>>;
  /**
   * From now on `/readyz` fails (check `shutdown`) while everything else is still served: a
   * proxy's health checks take the instance out before it stops listening (server.ts, on SIGTERM).
   */
  stopping(): void;
  /**
   * Past the shutdown delay: `/readyz` answers 503 `draining` with the connections whose
   * requests are still in flight (`inFlight()`) while they finish within the grace period.
   */
  draining(inFlight: () => number): void;
  /** `serving`, `stopping` (the delay) or `draining` (the grace period). */
  phase(): 'serving' | 'stopping' | 'draining';
  /** True while start-up work (the demo warehouse being prepared) is pending: /readyz answers 503 `starting`. */
  starting(): boolean;
}

/**
 * What the heavy read-only pages read: owners' statements (JSON and CSV), a caller's usage and
 * recent-calls pages, the marketplace's search and listing pages. With QUARRY_READ_DATABASE_URL
 * these are the same repositories built a second time over the read replica (store/read-replica.ts,
 * falling back to the primary while it does not answer), so they may lag the primary by the
 * replica's delay; without it, the primary's. Reads only: nothing that writes, decides money or
 * must read its own writes goes through here.
 */
export interface ReplicaReads {
  readonly billing: Pick<BillingService, 'usage' | 'ownerStatement'>;
  readonly marketplace: Pick<MarketplaceService, 'search' | 'listing'>;
  readonly calls: Pick<MoneyStore['calls'], 'list'>;
  readonly failedCalls: Pick<ControlPlaneStore['failedCalls'], 'byCaller'>;
  readonly analyticVersions: Pick<
    ControlPlaneStore['analyticVersions'],
    'deprecatedCalledBy' | 'deprecationsOf'
  >;
}

export interface GatewayServices {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Counts every finished request and writes its access line (observability/access-log.ts). */
  readonly requests: RequestRecorder;
  /** OpenTelemetry tracing, or NO_TRACING when it is not configured (observability/tracing.ts). */
  readonly tracing: Tracing;
  /** The build this process runs. */
  readonly build: BuildInfo;
  readonly store: ControlPlaneStore;
  /** The money tables: usage ledger and quota counters, statements (money/). */
  readonly money: MoneyStore;
  readonly plugins: PluginRegistry;
  readonly auth: Authenticator;
  readonly catalog: Catalog;
  readonly queries: QueryService;
  /** The one query call (query/query-call.ts), served by both query adapters. */
  readonly queryCall: QueryCallHandler;
  /** Asynchronous queries (query/jobs.ts): GET/DELETE /v1/jobs…; absent in a gateway without them. */
  readonly jobs?: Jobs;
  /** The MCP endpoint's sessions (mcp/): the analytics as tools, calling queryCall. */
  readonly mcp: McpSessions;
  /** The MCP tools of each account (mcp/mcp-tools.ts): the account routes forget a changed choice. */
  readonly mcpTools: Pick<McpTools, 'forget'>;
  readonly connections: ConnectionService;
  /** Each connection's circuit breaker (warehouse calls go through it). */
  readonly breakers: ConnectionBreakers;
  readonly analytics: AnalyticsService;
  readonly accounts: AccountService;
  readonly billing: BillingService;
  /** Callers paying for plans (QUARRY_PAYMENTS). */
  readonly payments: PaymentsService;
  /** Owners paid: onboarding, payouts, closing months (by itself, once a month). */
  readonly payouts: PayoutsService;
  readonly marketplace: MarketplaceService;
  /** The heavy read-only pages' reads: through the read replica when there is one. */
  readonly reads: ReplicaReads;
  /** The web console's passwords and sign-in sessions. */
  readonly sessions: SessionService;
  /** Password hashing through the hash limiter (sign-up's hash; the session service's too). */
  readonly passwords: PasswordHasher;
  readonly health: HealthService;
  readonly plans: PlanCatalog;
  readonly policies: PlanPolicies;
  readonly rateLimiter: RateLimiter;
  /**
   * Failed credentials per client address, in an in-process limiter of their own: an attacker
   * spraying addresses can only evict other failure counts, never callers' rate-limit buckets.
   */
  readonly credentialFailures: FailureThrottle;
  /** Credentials verified lately, still authenticated from an address refused for failures. */
  readonly knownCredentials: KnownCredentials;
  readonly metering: Metering;
  readonly resultCache: ResultCache;
  readonly tryTokens: TryTokens;
  /** Whether an analytic is listed with previews on now (kept until the change feed says otherwise). */
  readonly previewListings: PreviewListings;
  /** OAuth 2.0 client credentials: clients, signing keys, access tokens. */
  readonly oauth: OAuthServices;
  /** Webhook endpoints, their deliveries and the account's alert settings (docs/webhooks.md). */
  readonly webhooks: WebhookService;
  /**
   * Told when an account is deleted here: drops this instance's cached principals, analytics and
   * listings at once (other instances learn it from the change log).
   */
  readonly onAccountClosed?: (closure: AccountClosure) => void;
  /** Embed tokens, embed secrets and the query routes' CORS (docs/embedding.md). */
  readonly embed: EmbedService;
}
