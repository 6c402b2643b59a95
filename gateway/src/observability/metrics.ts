// Prometheus metrics: request counts and latency by route and status, error answers by code,
// 429s by reason, client hang-ups, connector latency by warehouse type and outcome, and pool,
// store, rate-limiter, usage-write and result-cache figures read on scrape (no work on the request
// path). The access line of each request is written by access-log.ts.
import type { PoolStats } from '@quarry/sdk-connector';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { CacheStats } from '../cache/result-cache.js';
import { microUsdToUsd } from '../money/units.js';
import { createSeriesHistogram, type SeriesHistogram } from './series-histogram.js';

export interface PoolSnapshot {
  readonly connection: string;
  readonly type: string;
  readonly stats: PoolStats;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /**
   * Requests by method, route template and status: their count (`quarry_http_requests_total`)
   * and latency in seconds (`quarry_http_request_duration_seconds`).
   */
  readonly httpRequests: SeriesHistogram;
  /** Warehouse query latency in seconds by connector type and outcome. */
  readonly connectorDuration: SeriesHistogram;
  /** Error answers (4xx and 5xx with the envelope) by route and error code. */
  readonly httpErrors: Counter<'route' | 'code'>;
  /** 429s by reason: `quota` (the month's calls), `rate_limit` (the key's rate), `other`. */
  readonly rateLimited: Counter<'reason'>;
  /** Requests whose caller hung up before the answer was written (status 499, never a 504). */
  readonly clientAborts: Counter<'route'>;
  /** Registers the rate limiter's state (Redis or the per-instance fallback), read at scrape time. */
  setRateLimiterSource(source: () => RateLimiterSnapshot): void;
  /** Registers the control-plane store's pool figures and error count, read at scrape time. */
  setStoreSource(source: () => StoreSnapshot | undefined): void;
  /** Registers the read replica's state, fallbacks and pool figures (QUARRY_READ_DATABASE_URL), read at scrape time. */
  setReadReplicaSource(source: () => ReadReplicaSnapshot): void;
  /** Registers the source of pool gauges, read at scrape time. */
  setPoolSource(source: () => readonly PoolSnapshot[]): void;
  /** Registers the source of the usage-ledger group-commit counters, read at scrape time. */
  setUsageWriteSource(source: () => readonly UsageWriteSnapshot[]): void;
  /** Registers the result cache's counters and sizes, read at scrape time. */
  setResultCacheSource(source: () => CacheStats): void;
  /** Registers the result-bytes budget's figures, read at scrape time. */
  setResultBudgetSource(source: () => ResultBudgetSnapshot): void;
  /** Registers the password-hash limiter's figures, read at scrape time. */
  setPasswordHashSource(source: () => PasswordHashSnapshot): void;
  /** Registers the source of each connection's circuit state, read at scrape time. */
  setCircuitSource(source: () => readonly CircuitSnapshot[]): void;
  /** Registers the source of owner payouts by state and the amount held (a store read at scrape time). */
  setPayoutSource(source: () => Promise<PayoutSnapshot>): void;
}

/** Which limiter answers: the shared Redis one, or this instance's memory fallback. */
export interface RateLimiterSnapshot {
  readonly backend: 'memory' | 'redis';
  /** True while a Redis limiter is limiting in memory (Redis unreachable). */
  readonly fallback: boolean;
  /** Times this instance fell back to memory since it started. */
  readonly fallbacks: number;
}

/** A PostgreSQL pool's connections: open, idle, and calls waiting for one. */
export interface PoolConnections {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
}

/** The control-plane store's connection pool (PostgreSQL; the embedded store has none). */
export interface StoreSnapshot extends PoolConnections {
  /** Calls that failed because the store could not be reached or stopped answering. */
  readonly errors: number;
}

/** The read replica the heavy read-only pages read through (store/read-replica.ts). */
export interface ReadReplicaSnapshot {
  /** True while its reads go to the primary because it does not answer. */
  readonly down: boolean;
  /** Reads the primary served in its stead since start. */
  readonly fallbacks: number;
  /** Its pool: connections open, idle, and reads waiting for one. */
  readonly pool: PoolConnections | undefined;
}

/** Owner payouts by state (every closed period) and what owners hold now. */
export interface PayoutSnapshot {
  readonly byStatus: readonly { readonly status: string; readonly count: number; readonly cents: number }[];
  readonly heldMicroUsd: number;
}

/** The process-wide budget of warehouse result bytes in flight. */
export interface ResultBudgetSnapshot {
  readonly limitBytes: number;
  readonly inFlightBytes: number;
  readonly waiting: number;
}

/** The password-hash limiter (security/hash-limiter.ts): hashes running, waiting, refused so far. */
export interface PasswordHashSnapshot {
  readonly inFlight: number;
  readonly queued: number;
  readonly refused: number;
}

/** One connection's circuit breaker state. */
export interface CircuitSnapshot {
  readonly connection: string;
  readonly state: 'closed' | 'open' | 'half_open';
}

const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;

/** Group-commit counters of one kind of usage write (`reserve`, `commit`). */
export interface UsageWriteSnapshot {
  readonly kind: string;
  readonly items: number;
  readonly writes: number;
  readonly writeMs: number;
}

export interface MetricsOptions {
  readonly defaultMetrics?: boolean;
  /** The build this process runs, exported as `quarry_build_info` (value 1). */
  readonly build?: { readonly version: string; readonly commit: string; readonly node: string };
}

/** A pool gauge's `state` series (total, idle, waiting); none when there is no pool. */
function setPoolConnections(gauge: Gauge<'state'>, pool: PoolConnections | undefined): void {
  if (pool === undefined) return;
  gauge.set({ state: 'total' }, pool.total);
  gauge.set({ state: 'idle' }, pool.idle);
  gauge.set({ state: 'waiting' }, pool.waiting);
}

export function createMetrics(options: MetricsOptions = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'quarry_' });
  const build = options.build;
  if (build !== undefined) {
    new Gauge({
      name: 'quarry_build_info',
      help: 'The build this instance runs (value 1): gateway version, commit, Node version',
      labelNames: ['version', 'commit', 'node'] as const,
      registers: [registry],
    }).set({ version: build.version, commit: build.commit, node: build.node }, 1);
  }
  const httpErrors = new Counter({
    name: 'quarry_http_errors_total',
    help: 'Error answers by route template and error code (the envelope code; CLIENT_CLOSED when the caller hung up)',
    labelNames: ['route', 'code'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'quarry_rate_limited_total',
    help: '429 answers by reason: quota (the monthly calls are used up), rate_limit (the key or account rate), other (failed-credential, preview, sign-up and password-hash allowances)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['quota', 'rate_limit', 'other']) rateLimited.inc({ reason }, 0);
  const clientAborts = new Counter({
    name: 'quarry_client_aborts_total',
    help: 'Requests whose caller hung up before the answer was written (logged and counted as status 499)',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  let limiterSource: (() => RateLimiterSnapshot) | undefined;
  new Gauge({
    name: 'quarry_rate_limiter_fallback',
    help: 'The Redis rate limiter is unreachable and this instance limits in memory (1), or not (0): while 1, each instance admits up to the full limit on its own',
    registers: [registry],
    collect() {
      const state = limiterSource?.();
      this.set(state?.fallback === true ? 1 : 0);
    },
  });
  new Counter({
    name: 'quarry_rate_limiter_fallbacks_total',
    help: 'Times this instance lost Redis and fell back to limiting in memory',
    registers: [registry],
    collect() {
      this.reset();
      const state = limiterSource?.();
      if (state !== undefined) this.inc(state.fallbacks);
    },
  });
  let storeSource: () => StoreSnapshot | undefined = () => undefined;
  new Gauge({
    name: 'quarry_store_pool_connections',
    help: "The control-plane store's pool (PostgreSQL): connections open (total), idle, and calls waiting for one",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      setPoolConnections(this, storeSource());
    },
  });
  new Counter({
    name: 'quarry_store_errors_total',
    help: 'Store calls that failed because the control-plane store could not be reached or stopped answering',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(storeSource()?.errors ?? 0);
    },
  });
  let replicaSource: (() => ReadReplicaSnapshot) | undefined;
  new Gauge({
    name: 'quarry_read_replica_fallback',
    help: 'The read replica (QUARRY_READ_DATABASE_URL) does not answer and its reads go to the primary (1), or not (0)',
    registers: [registry],
    collect() {
      this.reset();
      const state = replicaSource?.();
      if (state !== undefined) this.set(state.down ? 1 : 0);
    },
  });
  new Counter({
    name: 'quarry_read_replica_fallbacks_total',
    help: 'Reads of statements, usage, recent-calls and marketplace pages the primary served because the read replica did not answer',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(replicaSource?.().fallbacks ?? 0);
    },
  });
  new Gauge({
    name: 'quarry_read_replica_pool_connections',
    help: "The read replica's pool: connections open (total), idle, and reads waiting for one",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      setPoolConnections(this, replicaSource?.().pool);
    },
  });
  // Fed by every request: kept in plain numbers (series-histogram.ts), not prom-client's.
  const httpRequests = createSeriesHistogram({
    name: 'quarry_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    counter: {
      name: 'quarry_http_requests_total',
      help: 'HTTP requests by route template, method and status',
    },
    registers: [registry],
  });
  const connectorDuration = createSeriesHistogram({
    name: 'quarry_connector_query_duration_seconds',
    help: 'Warehouse query latency by connector type and outcome',
    labelNames: ['type', 'outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  let poolSource: () => readonly PoolSnapshot[] = () => [];
  const gauge = (name: string, help: string, pick: (s: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['connection', 'type'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of poolSource()) this.set({ connection: p.connection, type: p.type }, pick(p.stats));
      },
    });
  gauge('quarry_pool_sessions_total', 'Open warehouse sessions per connection', (s) => s.total);
  gauge('quarry_pool_sessions_idle', 'Idle warehouse sessions per connection', (s) => s.idle);
  gauge('quarry_pool_waiting', 'Callers waiting for a warehouse session', (s) => s.waiting);
  let circuitSource: () => readonly CircuitSnapshot[] = () => [];
  new Gauge({
    name: 'quarry_connection_circuit',
    help: "Each connection's circuit breaker: 1 for its current state (closed, open, half_open), 0 for the others",
    labelNames: ['connection', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const c of circuitSource()) {
        for (const state of CIRCUIT_STATES)
          this.set({ connection: c.connection, state }, c.state === state ? 1 : 0);
      }
    },
  });
  let budgetSource: (() => ResultBudgetSnapshot) | undefined;
  const budgetGauge = (name: string, help: string, pick: (s: ResultBudgetSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const stats = budgetSource?.();
        if (stats !== undefined) this.set(pick(stats));
      },
    });
  budgetGauge(
    'quarry_result_bytes_in_flight',
    'Warehouse result bytes expected in flight now',
    (s) => s.inFlightBytes,
  );
  budgetGauge(
    'quarry_result_bytes_in_flight_limit',
    'The budget of result bytes in flight (QUARRY_RESULT_BYTES_IN_FLIGHT)',
    (s) => s.limitBytes,
  );
  budgetGauge(
    'quarry_result_budget_waiting',
    'Warehouse queries waiting for room in the result budget',
    (s) => s.waiting,
  );
  let hashSource: (() => PasswordHashSnapshot) | undefined;
  new Gauge({
    name: 'quarry_password_hashes_in_flight',
    help: 'Password hashes (scrypt) running now, at most QUARRY_PASSWORD_HASH_CONCURRENCY',
    registers: [registry],
    collect() {
      const stats = hashSource?.();
      if (stats !== undefined) this.set(stats.inFlight);
    },
  });
  new Gauge({
    name: 'quarry_password_hashes_queued',
    help: 'Password hashes waiting for a slot, at most QUARRY_PASSWORD_HASH_QUEUE',
    registers: [registry],
    collect() {
      const stats = hashSource?.();
      if (stats !== undefined) this.set(stats.queued);
    },
  });
  new Counter({
    name: 'quarry_password_hashes_refused_total',
    help: 'Logins, sign-ups and password changes refused with 429 because the password-hash queue was full',
    registers: [registry],
    collect() {
      this.reset();
      const stats = hashSource?.();
      if (stats !== undefined) this.inc(stats.refused);
    },
  });
  let usageSource: () => readonly UsageWriteSnapshot[] = () => [];
  // Counters kept by the group-commit writers; copied in at scrape time.
  const usageCounter = (name: string, help: string, pick: (s: UsageWriteSnapshot) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['kind'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const u of usageSource()) this.inc({ kind: u.kind }, pick(u));
      },
    });
  usageCounter('quarry_usage_writes_total', 'Group-committed usage-ledger writes (batches)', (u) => u.writes);
  usageCounter('quarry_usage_write_items_total', 'Calls written to the usage ledger', (u) => u.items);
  usageCounter(
    'quarry_usage_write_seconds_total',
    'Time spent in usage-ledger writes',
    (u) => u.writeMs / 1000,
  );
  let cacheSource: (() => CacheStats) | undefined;
  new Counter({
    name: 'quarry_result_cache_lookups_total',
    help: 'Result-cache answers by outcome: hit, stale (served while one query refreshes it), miss (the warehouse ran)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const stats = cacheSource?.();
      if (stats === undefined) return;
      this.inc({ outcome: 'hit' }, stats.hits);
      this.inc({ outcome: 'stale' }, stats.stale);
      this.inc({ outcome: 'miss' }, stats.misses);
    },
  });
  new Counter({
    name: 'quarry_result_cache_evictions_total',
    help: 'Result-cache entries dropped to stay under QUARRY_CACHE_MAX_BYTES (least recently used first)',
    registers: [registry],
    collect() {
      this.reset();
      const stats = cacheSource?.();
      if (stats !== undefined) this.inc(stats.evictions);
    },
  });
  const cacheGauge = (name: string, help: string, pick: (s: CacheStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const stats = cacheSource?.();
        if (stats !== undefined) this.set(pick(stats));
      },
    });
  let payoutSource: (() => Promise<PayoutSnapshot>) | undefined;
  // One store read per scrape feeds both gauges (the first to collect reads, the second reuses it).
  let payoutRead: Promise<PayoutSnapshot | undefined> | undefined;
  const payouts = () => {
    payoutRead ??= (payoutSource?.() ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .finally(() => setTimeout(() => (payoutRead = undefined), 0));
    return payoutRead;
  };
  new Gauge({
    name: 'quarry_payouts',
    help: 'Owner payouts of every closed period, by state (held, pending, paid, failed, operator)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of (await payouts())?.byStatus ?? []) this.set({ status: s.status }, s.count);
    },
  });
  new Gauge({
    name: 'quarry_payouts_cents',
    help: 'Cents of owner payouts of every closed period, by state',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of (await payouts())?.byStatus ?? []) this.set({ status: s.status }, s.cents);
    },
  });
  new Gauge({
    name: 'quarry_payouts_held_usd',
    help: 'What owners are owed and not paid yet: held (below the minimum, not onboarded) or failed, carried',
    registers: [registry],
    async collect() {
      const snapshot = await payouts();
      if (snapshot !== undefined) this.set(microUsdToUsd(snapshot.heldMicroUsd));
    },
  });
  cacheGauge('quarry_result_cache_entries', 'Answers in the result cache', (s) => s.entries);
  cacheGauge(
    'quarry_result_cache_bytes',
    'Bytes the result cache accounts for (bodies, keys, per-entry overhead)',
    (s) => s.bytes,
  );
  cacheGauge(
    'quarry_result_cache_max_bytes',
    'The result cache bound (QUARRY_CACHE_MAX_BYTES)',
    (s) => s.maxBytes,
  );
  return {
    registry,
    httpRequests,
    connectorDuration,
    httpErrors,
    rateLimited,
    clientAborts,
    setRateLimiterSource(source) {
      limiterSource = source;
    },
    setStoreSource(source) {
      storeSource = source;
    },
    setReadReplicaSource(source) {
      replicaSource = source;
    },
    setPoolSource(source) {
      poolSource = source;
    },
    setUsageWriteSource(source) {
      usageSource = source;
    },
    setResultCacheSource(source) {
      cacheSource = source;
    },
    setPayoutSource(source) {
      payoutSource = source;
    },
    setCircuitSource(source) {
      circuitSource = source;
    },
    setResultBudgetSource(source) {
      budgetSource = source;
    },
    setPasswordHashSource(source) {
      hashSource = source;
    },
  };
}
