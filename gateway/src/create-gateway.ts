// Assembles a gateway from its configuration: connector plugins (first, so a bad one fails fast),
// store (PGlite or Postgres) with migrations, the secret box, services, the change feed and, in
// demo mode, the demo data.
// server.ts and the end-to-end tests both build gateways here; only server.ts listens.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApp } from './app.js';
import { createAuthenticator } from './auth/authenticator.js';
import { createEmbedTokens } from './auth/embed-tokens.js';
import { createKeyUsage } from './auth/key-usage.js';
import { createKnownCredentials } from './auth/known-credentials.js';
import { createTryTokens } from './auth/try-token.js';
import { loadAnalyticsDir } from './bootstrap/analytics-dir.js';
import { bootstrapDemo, DEMO_WAREHOUSE_FILE, type DemoInfo, prepareDemoWarehouse } from './bootstrap/demo.js';
import { checkSecretKeys } from './bootstrap/secret-key-check.js';
import { createStartupWork } from './bootstrap/startup-work.js';
import { cacheKeyPrefix } from './cache/cache-key.js';
import { createResultCache } from './cache/result-cache.js';
import { createStoreCatalog } from './catalog/store-catalog.js';
import type { GatewayConfig } from './config.js';
import { type CircuitStatus, createConnectionBreakers } from './connections/connection-breakers.js';
import { loadPlugins, type PluginRegistry } from './connections/plugin-registry.js';
import type { AppEnv } from './http/app-env.js';
import { newRequestId } from './http/middleware/request-id.js';
import { createMcpSessions } from './mcp/mcp-sessions.js';
import { createMcpTools } from './mcp/mcp-tools.js';
import { createBillingService } from './money/billing-service.js';
import { settleInDoubt } from './money/in-doubt-metering.js';
import { createLedgerMaintenance } from './money/ledger-retention.js';
import { createMetering } from './money/metering.js';
import { createMoneyStore } from './money/money-store.js';
import type { PaymentProvider } from './money/payment-provider.js';
import { createPaymentsService } from './money/payments-service.js';
import { createPayoutsService } from './money/payouts.js';
import type { PlanCatalog } from './money/plan-catalog.js';
import { createPlanCatalog } from './money/plan-catalog.js';
import { createOAuthServices } from './oauth/oauth-services.js';
import { createRequestRecorder } from './observability/access-log.js';
import { buildInfo } from './observability/build-info.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics } from './observability/metrics.js';
import { createTracing } from './observability/tracing.js';
import { createFailedCalls } from './query/failed-calls.js';
import { createJobs } from './query/jobs.js';
import { createLargeResults } from './query/large-results.js';
import { createPinnedCalls } from './query/pinned-version.js';
import { createPreviewListings } from './query/preview-listings.js';
import { createQueryCallHandler } from './query/query-call.js';
import { createQueryService } from './query/query-service.js';
import { createResultBudget } from './query/result-budget.js';
import { createFailedCallWindow, createRateLimiter } from './rate-limit/create-rate-limiter.js';
import { createFailureThrottle } from './rate-limit/failure-throttle.js';
import { createMemoryRateLimiter } from './rate-limit/memory-rate-limiter.js';
import { createPlanPolicies } from './rate-limit/plan-policies.js';
import { createResultCursors } from './results/result-cursor.js';
import { createResultStore } from './results/result-store.js';
import { loadOrCreateDemoSecretKey } from './security/demo-secret-key.js';
import { createHashLimiter } from './security/hash-limiter.js';
import type { Keyring } from './security/keyring.js';
import { createPasswordHasher } from './security/password-hash.js';
import { createSecretBox } from './security/secret-box.js';
import { createAccountService } from './services/account-service.js';
import { createAnalyticHealth } from './services/analytic-health.js';
import { createAnalyticsService } from './services/analytics-service.js';
import { createConnectionService } from './services/connection-service.js';
import { createEmbedService } from './services/embed-service.js';
import type { GatewayServices, HealthCheck, ReplicaReads } from './services/gateway-services.js';
import { createMailer } from './services/mailer.js';
import { createMarketplaceService } from './services/marketplace-service.js';
import {
  createSessionService,
  LOGIN_FAILURES_PER_ACCOUNT,
  LOGIN_FAILURES_PER_ADDRESS,
} from './services/session-service.js';
import { createUsageAlerts } from './services/usage-alerts.js';
import { createWebhookDeliverer } from './services/webhook-delivery.js';
import { createWebhookService } from './services/webhook-service.js';
import { createChangeFeed } from './store/change-feed.js';
import { createControlPlaneStore } from './store/control-plane-store.js';
import { loadMigrations, type MigrateResult, type Migration, migrate } from './store/migrate.js';
import { migratedPgliteTemplate, pgliteTemplateFile } from './store/pglite-template.js';
import { createReadReplica, type ReadReplica } from './store/read-replica.js';
import { pruneStore } from './store/retention.js';
import type { SqlClient } from './store/sql-client.js';

const REAP_INTERVAL_MS = 60_000;

/** The start-up task that prepares the demo warehouse (reported by /readyz). */
const DEMO_WAREHOUSE_TASK = 'demo_warehouse';
/**
 * How long a call on the demo connection waits for its warehouse being prepared: a copy of the
 * template takes milliseconds, generating it seconds (minutes on a machine many times
 * oversubscribed). Past it the call goes on and fails as it would have (503, not counted by the
 * breaker: the connector is not opened).
 */
const DEMO_WAREHOUSE_WAIT_MS = 60_000;

/**
 * Migrations run on a connection of their own without the store's per-call time bound: one may
 * rewrite a large table. PGlite (no URL) migrates on its one connection.
 */
async function migrateStore(
  sql: SqlClient,
  databaseUrl: string | undefined,
  migrations: readonly Migration[],
): Promise<MigrateResult> {
  if (databaseUrl === undefined) return migrate(sql, { migrations });
  const { createPgClient } = await import('./store/pg-client.js');
  const unbounded = createPgClient(databaseUrl, { max: 1 });
  try {
    return await migrate(unbounded, { migrations });
  } finally {
    await unbounded.close();
  }
}

/** A circuit as /readyz words it for the operator. */
function circuitText(status: CircuitStatus): string {
  const state = status.state.replace('_', '-');
  return status.retry_after === undefined
    ? `circuit ${state}`
    : `circuit ${state} (probe in ${status.retry_after} s)`;
}
/** Bad credentials an address may send: 60 at once, then one a second. */
const CREDENTIAL_FAILURE_POLICY = { limit: 60, windowSeconds: 60, burst: 60 };

export interface Gateway {
  readonly app: OpenAPIHono<AppEnv>;
  readonly services: GatewayServices;
  /** Present when demo mode created or found the demo account. */
  readonly demo: DemoInfo | undefined;
  /** Reads the change log now instead of at the next poll (resolves once its changes are applied). */
  pollChanges(): Promise<void>;
  /** Stops the change feed, closes every connector (waiting up to graceMs) and the store. */
  close(graceMs?: number): Promise<void>;
}

export interface CreateGatewayOptions {
  readonly logger?: Logger;
  /** Plugins already loaded (tests); otherwise loaded from config.connectors. */
  readonly plugins?: PluginRegistry;
  /** Change feed poll interval (default 1,000 ms). */
  readonly changeFeedIntervalMs?: number;
  /** How often keys' `last_used_at` is written (default 10,000 ms). */
  readonly keyUsageFlushMs?: number;
}

async function keyringFor(config: GatewayConfig): Promise<Keyring> {
  if (config.keyring !== undefined) return config.keyring;
  // Only reachable in the embedded mode (loadConfig requires a key with DATABASE_URL).
  const demo = await loadOrCreateDemoSecretKey(config.dataDir);
  return { keys: { [demo.id]: demo.key }, current: demo.id };
}

/** The payment provider QUARRY_PAYMENTS names; Stripe's SDK is loaded only when it is the one. */
async function paymentProviderFor(
  config: GatewayConfig,
  plans: PlanCatalog,
): Promise<PaymentProvider | undefined> {
  const { kind, stripe } = config.payments;
  if (kind === 'sandbox') return (await import('./money/sandbox-provider.js')).createSandboxProvider();
  if (kind !== 'stripe') return undefined;
  // loadConfig refuses QUARRY_PAYMENTS=stripe without both keys.
  if (stripe === undefined)
    throw new Error('QUARRY_PAYMENTS=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  return (await import('./money/stripe-provider.js')).createStripeProvider({
    secretKey: stripe.secretKey,
    webhookSecret: stripe.webhookSecret,
    ...(stripe.connectWebhookSecret === undefined
      ? {}
      : { connectWebhookSecret: stripe.connectWebhookSecret }),
    apiBase: stripe.apiBase,
    prices: stripe.prices,
    plans,
  });
}

export async function createGateway(
  config: GatewayConfig,
  options: CreateGatewayOptions = {},
): Promise<Gateway> {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  // Plugins first: a mistyped QUARRY_CONNECTORS entry fails at once, before the store is created
  // or opened (creating an embedded store takes seconds and leaves files behind).
  const plugins = options.plugins ?? (await loadPlugins(config.connectors));
  // Start-up work runs beside the rest of the start and after it: the demo warehouse is prepared
  // while the store opens; until it is, /readyz says `starting` and demo calls wait for it.
  const startup = createStartupWork();
  const demoWarehouse = join(config.dataDir, DEMO_WAREHOUSE_FILE);
  if (config.demo) {
    startup.add(
      DEMO_WAREHOUSE_TASK,
      async () => {
        const gate = config.testStartupGate;
        while (gate !== undefined && !existsSync(gate))
          await new Promise((resolve) => setTimeout(resolve, 50));
        const started = performance.now();
        const prepared = await prepareDemoWarehouse(config.dataDir);
        logger.info(
          { ...prepared, ms: Math.round(performance.now() - started) },
          prepared.how === 'kept' ? 'demo warehouse ready' : 'demo warehouse created',
        );
      },
      (error) =>
        logger.error({ err: error, path: demoWarehouse }, 'the demo warehouse could not be prepared'),
    );
  }
  const build = buildInfo(config.buildCommit);
  const metrics = createMetrics({ build });
  metrics.setRateLimiterSource(() => ({ backend: 'memory', fallback: false, fallbacks: 0 }));
  const migrations = await loadMigrations();
  // A new embedded store is unpacked from the template already holding these migrations when
  // there is one (npm ci and npm run build make it), else from initdb's template, else by initdb.
  const migratedTemplate = migratedPgliteTemplate(migrations);
  // Each store's driver is imported only when it is the one configured: the embedded default
  // never loads pg, a PostgreSQL store never loads PGlite.
  const sql: SqlClient = config.databaseUrl
    ? (await import('./store/pg-client.js')).createPgClient(config.databaseUrl, {
        onError: (e) => logger.warn({ err: e }, 'store connection error'),
        timeoutMs: config.timeouts.storeMs,
      })
    : await (await import('./store/pglite-client.js')).createPgliteClient(join(config.dataDir, 'pglite'), {
        template: existsSync(join(migratedTemplate, 'PG_VERSION')) ? migratedTemplate : pgliteTemplateFile(),
        onTemplateError: (error) =>
          logger.warn(
            { err: error },
            'the embedded store template did not load: creating the store by initdb',
          ),
      });
  const storeStats = sql.stats;
  if (storeStats !== undefined) metrics.setStoreSource(() => storeStats());
  // The heavy read-only pages' pool (QUARRY_READ_DATABASE_URL; loadConfig allows it only with
  // DATABASE_URL): no I/O until the first read.
  const replica: ReadReplica | undefined =
    config.readReplica === undefined
      ? undefined
      : createReadReplica({
          replica: (await import('./store/pg-client.js')).createPgClient(config.readReplica.url, {
            max: config.readReplica.poolSize,
            onError: (e) => logger.warn({ err: e }, 'read replica connection error'),
            timeoutMs: config.timeouts.storeMs,
          }),
          primary: sql,
          onDown: (error) =>
            logger.warn(
              { err: error },
              'the read replica does not answer: statements, usage, calls and marketplace pages read the primary until it does',
            ),
          onUp: () => logger.info('the read replica answers again: the heavy read-only pages read it'),
        });
  if (replica !== undefined) metrics.setReadReplicaSource(() => replica.replicaStats());
  try {
    const { applied, newer } = await migrateStore(sql, config.databaseUrl, migrations);
    if (applied.length > 0) logger.info({ applied }, 'store migrated');
    // A rollback: the store was migrated by a newer release. Migrations only add (docs/deploy.md,
    // "Upgrades and rollbacks"), so this build runs on it; said once, so the operator knows.
    if (newer.length > 0)
      logger.warn(
        { newer, build: build.version },
        'the store has migrations this build does not know: running on a newer schema',
      );
    const keyring = await keyringFor(config);
    const secretBox = createSecretBox(keyring);
    const tryTokens = createTryTokens(keyring);
    const store = createControlPlaneStore(sql, { secretBox, limits: config.accountLimits });
    // Before anything opens or seals a secret: this key ring must open what the fleet sealed.
    await checkSecretKeys(store.sealedSecrets, keyring);
    const money = createMoneyStore(sql);
    const connectorLogger = logger.child({ component: 'connector' });
    // The demo's DuckDB file is the operator's own (bootstrapDemo writes it and its connection
    // through the store): it opens trusted while every QUARRY_ALLOW_* switch is off.
    let demoOwnerId: string | undefined;
    const connections = createConnectionService({
      repository: store.connections,
      plugins,
      destinations: config.destinations,
      logger: connectorLogger,
      isOperatorConnection: (c) =>
        demoOwnerId !== undefined &&
        c.accountId === demoOwnerId &&
        c.type === 'duckdb' &&
        c.config.path === demoWarehouse,
      maxLivePools: config.maxLivePools,
      connectTimeoutMs: config.timeouts.warehouseConnectMs,
      // Any connection to the demo's file (the demo's own, or an owner's made from the README)
      // waits while the file is being prepared.
      beforeOpen: (c) =>
        c.type === 'duckdb' && c.config.path === demoWarehouse
          ? startup.settled(DEMO_WAREHOUSE_TASK, DEMO_WAREHOUSE_WAIT_MS)
          : Promise.resolve(),
    });
    const breakers = createConnectionBreakers({
      failures: config.breaker.failures,
      halfOpenAfterMs: config.breaker.openMs,
      onChange: (connection, state) =>
        logger.warn(
          { connection, state },
          state === 'open'
            ? 'circuit opened: calls to the connection fail fast'
            : 'circuit closed: the connection answers again',
        ),
    });
    const resultCache = createResultCache({
      maxBytes: config.cacheMaxBytes,
      onRefreshError: (key, error) => logger.warn({ err: error, key }, 'background cache refresh failed'),
    });
    metrics.setResultCacheSource(() => resultCache.stats());
    const catalog = createStoreCatalog({
      analytics: store.analytics,
      connections: store.connections,
      plugins,
      // Answers of a superseded version are dropped, not left to age out (calls pinning it,
      // `name@3`, fill the cache again under the same version's keys).
      onSuperseded: (old) => resultCache.delete(cacheKeyPrefix(old.analyticId, old.version)),
    });
    const plans = createPlanCatalog(config.plans);
    const policies = createPlanPolicies(config.rateLimits);
    const rateLimiter = await createRateLimiter({
      ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
      logger,
      redis: { commandTimeoutMs: config.timeouts.redisMs },
    });
    // The failed-call throttle (query/failed-calls.ts); QUARRY_FAILED_WAREHOUSE_SECONDS=0: none.
    const failedCallWindow =
      config.failedCalls.budgetMs > 0
        ? await createFailedCallWindow({
            ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
            policy: config.failedCalls,
            logger,
            commandTimeoutMs: config.timeouts.redisMs,
          })
        : undefined;
    const limiterState = () =>
      rateLimiter.state?.() ?? { backend: 'memory' as const, fallback: false, fallbacks: 0 };
    metrics.setRateLimiterSource(limiterState);
    const oauth = createOAuthServices({
      store,
      issuer: config.publicUrl,
      tokenTtlSeconds: config.oauthTokenTtlSeconds,
      policies,
      rateLimiter,
      cacheMs: config.keyCacheMs,
    });
    const keyUsage = createKeyUsage({
      keys: store.keys,
      ...(options.keyUsageFlushMs === undefined ? {} : { intervalMs: options.keyUsageFlushMs }),
      onError: (error) => logger.warn({ err: error }, "recording keys' last use failed"),
    });
    const embed = createEmbedService({
      tokens: createEmbedTokens({
        ring: oauth.keyRing,
        issuer: config.publicUrl,
        store: store.embed,
        cacheMs: config.keyCacheMs,
      }),
      store: store.embed,
      publicUrl: config.publicUrl,
      cacheMs: config.keyCacheMs,
      pinVersion: (pin) => store.analyticVersions.pin(pin),
    });
    const auth = createAuthenticator({
      embedTokens: embed.tokens,
      onKeyUsed: (keyId) => keyUsage.record(keyId),
      keys: store.keys,
      cacheMs: config.keyCacheMs,
      policies,
      tryTokens,
      sessions: store.sessions,
      accessTokens: oauth.authenticator,
    });
    const accounts = createAccountService(store, money, {
      // Cached principals carry the plan and the key's limit: drop them so a change applies at
      // once, here and (through the change log) on every other instance.
      onPlanChanged: (accountId) => {
        auth.forgetAll();
        void store.changes
          .append('account_plan', accountId)
          .catch((error) => logger.warn({ err: error }, 'announcing a plan change failed'));
      },
      onKeyChanged: (keyId) => auth.forgetKey(keyId),
    });
    const payments = createPaymentsService({
      kind: config.payments.kind,
      provider: await paymentProviderFor(config, plans),
      repository: money.payments,
      payouts: money.payouts,
      accounts: { get: (id) => store.accounts.get(id), setPlan: (id, plan) => accounts.setPlan(id, plan) },
      plans,
      graceMs: config.payments.graceMs,
      publicUrl: config.publicUrl,
      logger: logger.child({ component: 'payments' }),
    });
    const payouts = createPayoutsService({
      provider: payments.provider,
      kind: config.payments.kind,
      repository: money.payouts,
      statements: money.statements,
      invoicePeriod: (period) => payments.invoicePeriod(period),
      minimumCents: config.payments.minPayoutCents,
      closeGraceMs: config.payments.closeGraceMs,
      autoClose: config.payments.autoClose,
      leaseMs: config.payments.closeLeaseMs,
      publicUrl: config.publicUrl,
      logger: logger.child({ component: 'payouts' }),
    });
    const billing = createBillingService(store, money, plans, config.budgets, payouts);
    metrics.setPayoutSource(() => money.payouts.totals());
    const marketplace = createMarketplaceService(store);
    // The same read repositories a second time over the replica, for the read-only pages only;
    // without a replica, the primary's.
    const readStore =
      replica === undefined
        ? store
        : createControlPlaneStore(replica, { secretBox, limits: config.accountLimits });
    const readMoney = replica === undefined ? money : createMoneyStore(replica);
    const reads: ReplicaReads = {
      billing:
        replica === undefined
          ? billing
          : createBillingService(readStore, readMoney, plans, config.budgets, payouts),
      marketplace: replica === undefined ? marketplace : createMarketplaceService(readStore),
      calls: readMoney.calls,
      failedCalls: readStore.failedCalls,
      analyticVersions: readStore.analyticVersions,
    };
    // Events out (docs/webhooks.md): every instance delivers what any instance wrote.
    const deliverer = createWebhookDeliverer({
      repository: store.webhooks,
      destinations: config.destinations,
      instance: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      logger: logger.child({ component: 'webhooks' }),
      pollMs: config.webhooks.pollMs,
      leaseMs: config.webhooks.leaseMs,
      retryBaseMs: config.webhooks.retryBaseMs,
      retryWindowMs: config.webhooks.retryWindowMs,
    });
    const webhooks = createWebhookService({
      repository: store.webhooks,
      destinations: config.destinations,
      onEmitted: () => deliverer.kick(),
    });
    const hashLimiter = createHashLimiter(config.passwordHash);
    metrics.setPasswordHashSource(() => hashLimiter.stats());
    const passwords = createPasswordHasher(hashLimiter);
    const sessions = createSessionService({
      store,
      passwords,
      ttlSeconds: config.sessionTtlSeconds,
      // In the shared limiter: one account's allowance holds across every instance.
      addressFailures: createFailureThrottle(rateLimiter, LOGIN_FAILURES_PER_ADDRESS),
      accountFailures: createFailureThrottle(rateLimiter, LOGIN_FAILURES_PER_ACCOUNT),
      onSessionEnded: (sessionId) => auth.forgetKey(sessionId),
      mailer: createMailer({ smtpUrl: config.mail.smtpUrl, from: config.mail.from, logger }),
      publicUrl: config.publicUrl,
    });
    const analyticHealth = createAnalyticHealth({
      sql,
      repository: store.webhooks,
      logger,
      minCalls: config.webhooks.healthMinCalls,
      onEmitted: () => deliverer.kick(),
    });
    const usageAlerts = createUsageAlerts({
      repository: store.webhooks,
      logger,
      onEmitted: () => deliverer.kick(),
    });
    const resultBudget = createResultBudget({ limitBytes: config.resultBytesInFlight });
    metrics.setResultBudgetSource(() => resultBudget.stats());
    const queries = createQueryService({
      catalog,
      connectors: connections,
      metrics,
      maxResultBytes: config.maxResultBytes,
      maxTimeoutMs: config.maxAnalyticTimeoutMs,
      breakers,
      budget: resultBudget,
      onOutcome: (entry, failed) => void analyticHealth.record(entry, failed),
    });
    const analytics = createAnalyticsService({
      analytics: store.analytics,
      connections: store.connections,
      plugins,
      changes: store.changes,
      maxPrice: config.maxPrice,
      maxTimeoutMs: config.maxAnalyticTimeoutMs,
      priceNoticeMs: config.priceNoticeMs,
      dropCached: (analyticId) => resultCache.delete(cacheKeyPrefix(analyticId)),
      describe: (ownerId, connectionId, request) => connections.describe(ownerId, connectionId, request),
    });
    // Served calls' usage writes that the store may have committed unheard are settled before
    // the call answers (money/in-doubt-metering.ts).
    const metering = settleInDoubt(
      createMetering({
        usage: money.usage,
        plans,
        budgets: config.budgets,
        reserveAhead: config.reserveAhead,
        reserveMargin: config.reserveMargin,
        onCounted: (observation) => usageAlerts.observe(observation),
      }),
      { logger },
    );
    metrics.setUsageWriteSource(() => {
      const { reserves, commits } = metering.stats();
      return [
        { kind: 'reserve', ...reserves },
        { kind: 'commit', ...commits },
      ];
    });
    metrics.setPoolSource(() =>
      connections
        .pools()
        .map((p) => ({ connection: p.connection, type: p.type, stats: p.connector.stats() })),
    );
    metrics.setCircuitSource(() =>
      breakers.all().map(({ connection, status }) => ({ connection, state: status.state })),
    );
    const credentialFailures = createFailureThrottle(createMemoryRateLimiter(), CREDENTIAL_FAILURE_POLICY);
    const knownCredentials = createKnownCredentials();
    const previewListings = createPreviewListings(store.listings);
    const failedCalls =
      failedCallWindow === undefined
        ? undefined
        : createFailedCalls({
            window: failedCallWindow,
            records: store.failedCalls,
            budgetSeconds: config.failedCalls.budgetMs / 1000,
            windowSeconds: config.failedCalls.windowMs / 1000,
            logger,
          });
    const resultStore = await createResultStore({
      dir: join(config.dataDir, 'results'),
      maxBytes: config.resultStore.maxBytes,
      ttlMs: config.resultStore.ttlSeconds * 1000,
    });
    const large = createLargeResults({
      queries,
      metering,
      ...(failedCalls === undefined ? {} : { failedCalls }),
      store: resultStore,
      cursors: createResultCursors(resultStore.instance),
    });
    const jobs = createJobs({
      auth,
      rateLimiter,
      credentialFailures,
      knownCredentials,
      repository: store.jobs,
      queries,
      metering,
      store: resultStore,
      cursors: createResultCursors(resultStore.instance),
      maxTimeoutMs: config.jobs.maxTimeoutMs,
      leaseMs: config.jobs.leaseMs,
      releaseUsage: async (requestId) => {
        await money.usage.release(requestId);
      },
      emit: (event) => store.webhooks.emit(event),
      ...(failedCalls === undefined ? {} : { failedCalls }),
      logger: logger.child({ component: 'jobs' }),
    });
    const queryCall = createQueryCallHandler({
      auth,
      embed,
      rateLimiter,
      credentialFailures,
      knownCredentials,
      queries,
      metering,
      resultCache,
      plans,
      idempotency: store.idempotency,
      logger,
      previews: { rows: config.previewRows, perDay: config.previewsPerDay, listings: previewListings },
      pinnedCalls: createPinnedCalls(store.analyticVersions, (error) =>
        logger.warn({ err: error }, 'recording a pinned call failed'),
      ),
      ...(failedCalls === undefined ? {} : { failedCalls }),
      large,
      jobs,
      pauseAfterChargeMs: config.testPauseAfterChargeMs,
    });
    const mcpTools = createMcpTools(
      {
        analytics: store.analytics,
        agentTools: store.agentTools,
        listings: store.listings,
        marketplace,
        queryCall,
        tryTokens,
        rateLimiter,
        newRequestId,
        logger,
      },
      { rows: config.previewRows, perDay: config.previewsPerDay },
    );
    const mcp = createMcpSessions({
      tools: mcpTools,
      toolsPerPage: config.mcpToolsPerPage,
      maxSessions: config.mcpSessions.max,
      maxSessionsPerAccount: config.mcpSessions.perAccount,
      onError: (error) => logger.warn({ err: error }, 'MCP session error'),
    });
    /** Set on SIGTERM (health.stopping()): /readyz fails from then on; then draining. */
    let phase: 'serving' | 'stopping' | 'draining' = 'serving';
    let inFlight = () => 0;
    const tracing = await createTracing(config.tracing, build);
    const services: GatewayServices = {
      config,
      logger,
      metrics,
      requests: createRequestRecorder(metrics, logger, { setting: config.accessLog, build }),
      tracing,
      build,
      store,
      money,
      payments,
      payouts,
      plugins,
      auth,
      catalog,
      queries,
      queryCall,
      jobs,
      previewListings,
      mcp,
      mcpTools,
      connections,
      breakers,
      analytics,
      accounts,
      billing,
      marketplace,
      reads,
      sessions,
      passwords,
      plans,
      policies,
      rateLimiter,
      credentialFailures,
      knownCredentials,
      metering,
      resultCache,
      tryTokens,
      oauth,
      webhooks,
      onAccountClosed: (closure) => {
        auth.forgetAll();
        catalog.invalidate();
        previewListings.invalidate();
        mcpTools.forget(closure.accountId);
        mcp.toolsChanged();
      },
      embed,
      health: {
        stopping() {
          phase = 'stopping';
        },
        draining(count) {
          phase = 'draining';
          inFlight = count;
        },
        phase: () => phase,
        starting: () => startup.pending(),
        async check() {
          const checks: Record<string, HealthCheck> = {};
          for (const task of startup.tasks()) {
            // A failed task does not make the gateway unready: everything else serves (logged).
            checks[`startup:${task.name}`] =
              task.state === 'pending'
                ? { ok: false, message: 'starting: in progress; calls that need it wait for it' }
                : task.state === 'failed'
                  ? { ok: true, degraded: true, message: `failed: ${task.error ?? 'unknown error'}` }
                  : { ok: true };
          }
          if (phase === 'stopping')
            checks.shutdown = { ok: false, message: 'stopping: the instance is shutting down' };
          else if (phase === 'draining') {
            checks.shutdown = {
              ok: false,
              message: `draining: ${inFlight()} connection(s) with a request in flight, then the instance stops`,
            };
          }
          try {
            await sql.query('SELECT 1');
            checks.store = { ok: true };
          } catch {
            checks.store = { ok: false, message: 'the control-plane store does not answer' };
          }
          // Ready either way: its pages read the primary while it does not answer.
          if (replica !== undefined) {
            checks.read_replica = (await replica.check())
              ? { ok: true }
              : {
                  ok: true,
                  degraded: true,
                  message:
                    'degraded: the read replica does not answer; statements, usage, calls and marketplace pages read the primary until it does',
                };
          }
          // Ready either way: limits still hold, per instance (so up to N × the limit across N).
          const limiter = limiterState();
          if (limiter.fallback) {
            checks.rate_limiter = {
              ok: true,
              degraded: true,
              message: 'degraded: Redis does not answer; limiting per instance until it returns',
            };
          } else checks.rate_limiter = { ok: true, message: limiter.backend };
          // One owner's warehouse failing does not make this gateway unready (ok stays true):
          // the operator reads its circuit here, its callers get 503s from the circuit itself.
          for (const p of connections.pools()) {
            const stats = p.connector.stats();
            checks[`connection:${p.connection}`] = {
              ok: true,
              message: `${stats.total} open, ${stats.waiting} waiting; ${circuitText(breakers.status(p.connection))}`,
            };
          }
          for (const { connection, status } of breakers.all()) {
            const name = `connection:${connection}`;
            if (checks[name] === undefined && status.state !== 'closed') {
              checks[name] = { ok: true, message: `no pool; ${circuitText(status)}` };
            }
          }
          return checks;
        },
      },
    };
    const feed = await createChangeFeed({
      changes: store.changes,
      intervalMs: options.changeFeedIntervalMs ?? 1_000,
      onChange: (event) => {
        if (event.kind === 'key') auth.forgetKey(event.ref);
        else if (event.kind === 'account_plan') auth.forgetAll();
        else if (event.kind === 'oauth_client') auth.forgetClient(event.ref);
        else if (event.kind === 'signing_key') oauth.keyRing.invalidate();
        else if (event.kind === 'analytic') {
          catalog.invalidate(event.ref);
          // An analytic made private or deleted leaves the marketplace with its listing.
          previewListings.invalidate();
          mcp.toolsChanged();
        } else if (event.kind === 'listing') {
          previewListings.invalidate();
          mcp.toolsChanged();
        } else if (event.kind === 'analytic_cache') resultCache.delete(cacheKeyPrefix(event.ref));
        else if (event.kind === 'connection') {
          catalog.invalidate();
          void connections.evict(event.ref);
        }
      },
      onError: (error) => logger.warn({ err: error }, 'change feed poll failed'),
    });
    const demo = config.demo
      ? await bootstrapDemo({ config, store, analytics, accounts, logger })
      : undefined;
    demoOwnerId = demo?.accountId;
    if (!config.demo && config.analyticsDir !== undefined && config.analyticsOwner !== undefined) {
      const owner =
        (await store.accounts.findByEmail(config.analyticsOwner)) ??
        (await store.accounts.create({ email: config.analyticsOwner, name: config.analyticsOwner }));
      const loaded = await loadAnalyticsDir(config.analyticsDir, owner.id, analytics, {
        skipMissingConnections: true,
        onSkip: (file, reason) =>
          logger.warn({ file, reason }, 'analytic skipped until its connection exists'),
      });
      logger.info(
        { dir: config.analyticsDir, analytics: loaded.map((l) => `${l.name}@${l.version} ${l.outcome}`) },
        'analytics loaded',
      );
    }
    // Calls reserved by an instance that died before answering: released (never charged).
    // The bound (QUARRY_REAP_AFTER_MS) is longer than any query may run, so a live call is never reaped.
    const reap = async () => {
      try {
        const reaped = await money.usage.reapStale(config.reapAfterMs);
        if (reaped > 0) logger.warn({ reaped }, 'released calls left pending by a stopped instance');
        await store.idempotency.purgeExpired();
      } catch (error) {
        logger.warn({ err: error }, 'usage reaper failed');
      }
    };
    await reap();
    const reaper = setInterval(() => void reap(), Math.min(REAP_INTERVAL_MS, config.reapAfterMs));
    reaper.unref();
    // Old change-log rows, ended console sessions and expired version pins (store/retention.ts),
    // on every instance.
    const prune = async () => {
      try {
        const pruned = await pruneStore(sql, config.retention);
        if (pruned.changeLog > 0 || pruned.sessions > 0 || pruned.versionPins > 0)
          logger.info(
            {
              change_log: pruned.changeLog,
              console_sessions: pruned.sessions,
              version_pins: pruned.versionPins,
            },
            'retention: pruned',
          );
      } catch (error) {
        logger.warn({ err: error }, 'retention run failed; retried next interval');
      }
    };
    const pruner = setInterval(() => void prune(), config.retention.intervalMs);
    pruner.unref();
    // Downgrades and cancels that reached their period's end, and grace periods that ran out:
    // every instance ticks, and each change is conditional, so two ticks apply it once.
    // The same tick closes the last month once its grace has passed (one instance, by claim).
    // The ledger's monthly partitions: created ahead, and closed months past the retention dropped.
    const ledger = createLedgerMaintenance({
      usage: money.usage,
      closedAt: (period) => money.statements.closedAt(period),
      retentionMonths: config.payments.ledgerRetentionMonths,
      logger,
    });
    await ledger.tick();
    let ticking = false;
    const billingTick = setInterval(() => {
      if (ticking) return;
      ticking = true;
      Promise.all([
        payments.tick().catch((error) => logger.warn({ err: error }, 'billing tick failed')),
        ledger.tick().catch((error) => logger.warn({ err: error }, 'ledger partition upkeep failed')),
        payouts
          .tick()
          .catch((error) => logger.warn({ err: error }, 'closing the month failed; retried next tick')),
      ]).finally(() => {
        ticking = false;
      });
    }, config.payments.tickMs);
    billingTick.unref();
    const app = createApp(services);
    let closed: Promise<void> | undefined;
    return {
      app,
      services,
      demo,
      // Twice: a poll already under way may have read the log before the caller's write.
      pollChanges: () => feed.poll().then(() => feed.poll()),
      close(graceMs = config.shutdownGraceMs) {
        closed ??= (async () => {
          clearInterval(reaper);
          clearInterval(pruner);
          clearInterval(billingTick);
          await deliverer.close();
          // A demo warehouse being written finishes (or its temp file is swept at the next start).
          await startup.idle();
          await feed.stop();
          await mcp.close();
          await jobs.close();
          await connections.close(graceMs);
          await rateLimiter.close();
          await failedCallWindow?.close();
          await keyUsage.close();
          await resultStore.close();
          // Usage writes still queued belong to calls that are waiting to answer.
          await metering.drain();
          await replica?.close();
          await sql.close();
          await tracing
            .shutdown()
            .catch((error) => logger.warn({ err: error }, 'exporting the last spans failed'));
        })();
        return closed;
      },
    };
  } catch (error) {
    await startup.idle();
    await replica?.close().catch(() => {});
    await sql.close().catch(() => {});
    throw error;
  }
}
