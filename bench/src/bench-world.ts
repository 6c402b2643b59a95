// Everything the gateway bench runs against, made fresh and removed after: a control-plane schema
// for the gateway's store, a warehouse schema with a keyed table (the cheap lookup) and a sales
// table of at least 100,000 rows in the measured year (the heavy aggregate), an account with a
// key, a Postgres connection and the bench's analytics, deployed over HTTP like an owner would.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { gatewayHeapFlags } from '../../scripts/gateway-heap-flags.mjs';
import { processCpuSeconds } from './proc-cpu.js';

/** Rows of the keyed-lookup table. */
export const KV_ROWS = 10_000;
/** Sales rows in the measured year (the heavy aggregate reads all of them), plus a tenth as many in another year. */
export const SALES_ROWS = 100_000;
export const SALES_YEAR = 2024;
const REGIONS = ['EU', 'NA', 'SA', 'AF', 'AS', 'OC', 'ME', 'CA'];

/** The analytics the bench deploys. */
export const ANALYTICS = {
  /** Cheap keyed lookup, no cache (scenario d cheap). */
  lookup: 'bench-lookup',
  /** The heavy aggregate, no cache (scenario d heavy). */
  revenue: 'bench-revenue',
  /** The heavy aggregate with a long TTL (scenario b's cache hit). */
  revenueCached: 'bench-revenue-cached',
  /** A slow query that notifies the bench each time it really runs (scenario e). */
  coalesce: 'bench-coalesce',
  /** A cheap lookup with a second param, cached: a million distinct keys (scenario f). */
  distinct: 'bench-distinct',
} as const;

/** The fresh schemas and how to reach them. */
export interface BenchWorld {
  readonly id: string;
  readonly pgUrl: string;
  /** DATABASE_URL for the gateway: the store in its own schema. */
  readonly storeUrl: string;
  readonly warehouseSchema: string;
  /** LISTEN channel the coalescing analytic notifies on every real run. */
  readonly channel: string;
  /** The lookup's SQL with `$1` (scenario c cheap). */
  readonly lookupSql: string;
  /** The aggregate's SQL with `$1` (scenario c heavy). */
  readonly revenueSql: string;
  /**
   * The `application_name` of the gateway's store sessions and of its warehouse sessions: the
   * bench finds their backends in `pg_stat_activity` and reads their own CPU (other work on the
   * same PostgreSQL then does not count).
   */
  readonly storeApp: string;
  readonly warehouseApp: string;
  /** Drops both schemas. */
  drop(): Promise<void>;
}

/** Runs `fn` on a short-lived connection. */
export async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withSearchPath(url: string, schema: string, applicationName?: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  if (applicationName !== undefined) parsed.searchParams.set('application_name', applicationName);
  return parsed.toString();
}

/**
 * Starts the CPU clock of the backends of the sessions named `apps`: read again at the end, a
 * backend alive then counts from its start-of-window reading (or from zero, if it connected
 * during the window: pools close idle sessions and open new ones). One that ended within the
 * window is not counted.
 */
export async function sessionsCpu(pgUrl: string, apps: readonly string[]): Promise<() => Promise<number>> {
  const pidsNow = async () => (await Promise.all(apps.map((app) => backendPids(pgUrl, app)))).flat();
  const before = new Map((await pidsNow()).map((pid) => [pid, processCpuSeconds(pid)]));
  return async () => {
    let seconds = 0;
    for (const pid of await pidsNow()) seconds += processCpuSeconds(pid) - (before.get(pid) ?? 0);
    return seconds;
  };
}

/** The backend pids of the sessions named `applicationName` right now. */
export async function backendPids(pgUrl: string, applicationName: string): Promise<number[]> {
  return withPg(pgUrl, async (c) =>
    (
      await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
        applicationName,
      ])
    ).rows.map((r) => r.pid),
  );
}

/** Creates the schemas and fills the warehouse tables. */
export async function createBenchWorld(pgUrl: string): Promise<BenchWorld> {
  const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const store = `quarry_bench_store_${id}`;
  const wh = `quarry_bench_wh_${id}`;
  await withPg(pgUrl, async (c) => {
    await c.query(`CREATE SCHEMA ${store}`);
    await c.query(`CREATE SCHEMA ${wh}`);
    await c.query(
      `CREATE TABLE ${wh}.kv (id integer PRIMARY KEY, name text NOT NULL, score double precision NOT NULL)`,
    );
    await c.query(
      `INSERT INTO ${wh}.kv SELECT g, 'item-' || g, g * 1.5 FROM generate_series(1, ${KV_ROWS}) AS g`,
    );
    await c.query(
      `CREATE TABLE ${wh}.sales (id integer PRIMARY KEY, year integer NOT NULL, region text NOT NULL,
         product text NOT NULL, amount numeric(12, 2) NOT NULL)`,
    );
    const regions = `(ARRAY['${REGIONS.join("','")}'])[1 + g % ${REGIONS.length}]`;
    const total = SALES_ROWS + SALES_ROWS / 10;
    await c.query(
      `INSERT INTO ${wh}.sales
       SELECT g, CASE WHEN g <= ${SALES_ROWS} THEN ${SALES_YEAR} ELSE ${SALES_YEAR - 1} END, ${regions},
              'product-' || (g % 97), round((10 + (g * 7919) % 99000 / 100.0)::numeric, 2)
         FROM generate_series(1, ${total}) AS g`,
    );
    await c.query(`ANALYZE ${wh}.kv`);
    await c.query(`ANALYZE ${wh}.sales`);
  });
  return {
    id,
    pgUrl,
    storeUrl: withSearchPath(pgUrl, store, `qb_store_${id}`),
    storeApp: `qb_store_${id}`,
    warehouseApp: `qb_wh_${id}`,
    warehouseSchema: wh,
    channel: `quarry_bench_${id}`,
    lookupSql: `SELECT id, name, score FROM ${wh}.kv WHERE id = $1`,
    revenueSql: revenueSql(wh, '$1'),
    async drop() {
      await withPg(pgUrl, async (c) => {
        await c.query(`DROP SCHEMA IF EXISTS ${store} CASCADE`);
        await c.query(`DROP SCHEMA IF EXISTS ${wh} CASCADE`);
      });
    },
  };
}

function revenueSql(wh: string, year: string): string {
  return `SELECT region, sum(amount) AS revenue FROM ${wh}.sales WHERE year = ${year} GROUP BY region ORDER BY revenue DESC`;
}

const CACHE_BYTES = 64 * 1024 * 1024;

/** The gateway's environment for this world: Postgres store, limits that never trigger, 64 MiB cache. */
export function gatewayEnv(world: BenchWorld, logLevel: string): Record<string, string> {
  return {
    DATABASE_URL: world.storeUrl,
    QUARRY_SECRET_KEY: randomBytes(32).toString('base64'),
    QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
    QUARRY_ALLOW_HOST_FILES: 'true',
    QUARRY_DEMO: 'false',
    QUARRY_LOG_LEVEL: logLevel,
    // Access lines have their own setting: at `warn` the bench measures the gateway without them,
    // at `info`/`debug` with them, as before they were split from QUARRY_LOG_LEVEL.
    QUARRY_ACCESS_LOG: logLevel === 'info' || logLevel === 'debug' || logLevel === 'trace' ? 'info' : 'off',
    QUARRY_CACHE_MAX_BYTES: String(CACHE_BYTES),
    // The heap flags `npm start` gives the gateway.
    NODE_OPTIONS: gatewayHeapFlags({ QUARRY_CACHE_MAX_BYTES: String(CACHE_BYTES) }).join(' '),
    // Metering stays on: every call reserves and commits a usage event against a quota this large.
    QUARRY_PLANS: JSON.stringify([
      {
        id: 'free',
        name: 'Bench',
        included_credits: 1_000_000_000,
        monthly_price_cents: 0,
        credit_price_cents: 0,
      },
    ]),
    // Every bench client signs up from 127.0.0.1.
    QUARRY_SIGNUPS_PER_HOUR: '1000000000',
    // The rate limiter runs on every call; this policy never refuses one.
    QUARRY_RATE_LIMITS: JSON.stringify({
      free: { limit: 1_000_000_000, window_seconds: 1, burst: 1_000_000_000 },
    }),
  };
}

/** POSTs JSON (as the account of `key`, if given); throws unless the answer is 201 Created. */
export async function post(
  base: string,
  path: string,
  body: unknown,
  key?: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Signs up an account of this world (on the Free plan: `gatewayEnv`'s quota); its id and first key. */
export async function signUpAccount(
  base: string,
  world: BenchWorld,
  label: string,
): Promise<{ readonly id: string; readonly key: string }> {
  const signUp = await post(base, '/v1/accounts', {
    email: `${label}-${world.id.replace('_', '-')}@bench.quarry.test`,
    name: `Quarry ${label}`,
  });
  return { id: (signUp.account as { id: string }).id, key: (signUp.key as { secret: string }).secret };
}

/**
 * Signs up the bench account, connects the warehouse and deploys the analytics; returns the key.
 * The coalescing analytic's query takes `coalesceQueryMs`, so that concurrent calls reach the
 * cache while its one run is still in flight.
 */
/** The owner API's config of a postgres connection to the database at `url`. */
export function postgresConnectionConfig(url: URL): Record<string, unknown> {
  return {
    host: url.hostname,
    port: url.port === '' ? 5432 : Number(url.port),
    database: url.pathname.slice(1) || 'test',
    user: decodeURIComponent(url.username) || 'postgres',
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
  };
}

export async function provision(base: string, world: BenchWorld, coalesceQueryMs: number): Promise<string> {
  const { key } = await signUpAccount(base, world, 'bench');
  const url = new URL(world.pgUrl);
  await post(
    base,
    '/v1/owner/connections',
    {
      name: 'bench',
      type: 'postgres',
      config: { ...postgresConnectionConfig(url), applicationName: world.warehouseApp },
    },
    key,
  );
  const wh = world.warehouseSchema;
  const year = { type: 'integer', required: true, min: 2000, max: 2100 };
  const id = { type: 'integer', required: true, min: 1, max: KV_ROWS };
  const definitions = [
    { name: ANALYTICS.lookup, sql: `SELECT id, name, score FROM ${wh}.kv WHERE id = :id`, params: { id } },
    { name: ANALYTICS.revenue, sql: revenueSql(wh, ':year'), params: { year } },
    {
      name: ANALYTICS.revenueCached,
      sql: revenueSql(wh, ':year'),
      params: { year },
      insights: { shape: 'keyed', key: 'region' },
      cache: { ttl: 86_400 },
    },
    {
      // pg_notify works in the connector's read-only session (nextval would not) and is delivered
      // once per committed run, so the bench counts real warehouse executions by LISTENing.
      name: ANALYTICS.coalesce,
      sql: `SELECT :run AS run, (SELECT count(*)::integer FROM (SELECT pg_notify('${world.channel}', '')) AS n) AS notified FROM pg_sleep(${coalesceQueryMs / 1000})`,
      params: { run: { type: 'integer', required: true, min: 0 } },
      cache: { ttl: 3_600 },
    },
    {
      name: ANALYTICS.distinct,
      sql: `SELECT id, name, score, :v AS v FROM ${wh}.kv WHERE id = :id`,
      params: { id, v: { type: 'integer', required: true, min: 0 } },
      cache: { ttl: 86_400 },
    },
  ];
  for (const definition of definitions) {
    await post(base, '/v1/owner/analytics', { connection: 'bench', ...definition }, key);
  }
  return key;
}
