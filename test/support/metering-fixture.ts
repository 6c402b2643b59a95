// What the metering end-to-end tests share: several gateway processes on one control-plane
// schema, accounts and analytics made over HTTP, and read-only views of the ledger
// (usage_events) and the quota counters (usage_counters) straight from Postgres, so the tests
// compare what clients saw with what was recorded.
import { type LedgerDrift, ledgerDriftSql } from '../../gateway/src/money/testing/ledger-drift.js';
import { withPg } from './control-plane.js';
import { type GatewayProcess, type StartGatewayOptions, startGateway } from './gateway-process.js';
import type { HttpClient, HttpResponse } from './http-client.js';

export interface TestAccount {
  readonly id: string;
  /** The first API key's secret. */
  readonly key: string;
  readonly keyId: string;
}

/**
 * Starts `count` gateways with the same environment: the first alone (it migrates the schema),
 * the rest in parallel once it is up. `each` gives the options of instance `index` (its port…).
 */
export async function startGateways(
  count: number,
  env: Readonly<Record<string, string>>,
  each: (index: number) => Omit<StartGatewayOptions, 'env'> = () => ({}),
): Promise<GatewayProcess[]> {
  const first = await startGateway({ env, ...each(0) });
  const rest = await Promise.allSettled(
    Array.from({ length: count - 1 }, (_, i) => startGateway({ env, ...each(i + 1) })),
  );
  const started = [first, ...rest.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))];
  const failed = rest.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(started.map((g) => g.stop()));
    throw failed.reason;
  }
  return started;
}

/** Throws with the response when its status is not `status`. */
export function expectStatus(response: HttpResponse, status: number, what: string): HttpResponse {
  if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.text}`);
  return response;
}

/** Signs up a Free account over HTTP. */
export async function signUp(
  http: HttpClient,
  gateway: Pick<GatewayProcess, 'url'>,
  label: string,
  suffix: string,
): Promise<TestAccount> {
  const response = expectStatus(
    await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `${label}-${suffix}@metering.quarry.test`, name: `${label} ${suffix}` },
    }),
    201,
    'sign-up',
  );
  return { id: response.body.account.id, key: response.body.key.secret, keyId: response.body.key.id };
}

/** Issues another key for the account of `key`. */
export async function issueKey(
  http: HttpClient,
  gateway: Pick<GatewayProcess, 'url'>,
  key: string,
  name: string,
): Promise<{ readonly id: string; readonly secret: string }> {
  // Issuing is rate limited like any call: wait out a 429 (the tests' policies are small).
  for (;;) {
    const response = await http.request(gateway.url, 'POST', '/v1/keys', { key, json: { name } });
    if (response.status === 429) {
      await new Promise((r) => setTimeout(r, Math.ceil(Number(response.body.error.retry_after) * 1000) + 10));
      continue;
    }
    expectStatus(response, 201, 'issue key');
    return { id: response.body.key.id, secret: response.body.key.secret };
  }
}

/** Connects the owner to the test Postgres server itself (enough for `SELECT … FROM pg_sleep(…)`). */
export async function connectTestPostgres(
  http: HttpClient,
  gateway: Pick<GatewayProcess, 'url'>,
  ownerKey: string,
  name: string,
): Promise<void> {
  const url = new URL(process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  expectStatus(
    await http.request(gateway.url, 'POST', '/v1/owner/connections', {
      key: ownerKey,
      json: {
        name,
        type: 'postgres',
        config: {
          host: url.hostname,
          port: url.port === '' ? 5432 : Number(url.port),
          database: url.pathname.slice(1) || 'test',
          user: decodeURIComponent(url.username) || 'postgres',
          ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
        },
      },
    }),
    201,
    'create connection',
  );
}

/** Deploys an analytic as the owner of `ownerKey`. */
export async function deployAnalytic(
  http: HttpClient,
  gateway: Pick<GatewayProcess, 'url'>,
  ownerKey: string,
  definition: Record<string, unknown>,
): Promise<HttpResponse> {
  return expectStatus(
    await http.request(gateway.url, 'POST', '/v1/owner/analytics', { key: ownerKey, json: definition }),
    201,
    `deploy analytic ${String(definition.name)}`,
  );
}

/** The billing period (`YYYY-MM`, UTC) of now. */
export function currentPeriod(): string {
  return new Date().toISOString().slice(0, 7);
}

/** One row of the ledger as stored. */
export interface LedgerEvent {
  readonly request_id: string;
  readonly account_id: string;
  readonly key_id: string | null;
  readonly period: string;
  readonly analytic_name: string;
  readonly owner_id: string;
  readonly origin: 'paid' | 'free' | 'marketplace' | 'owner';
  /** The payer's plan. */
  readonly plan: string | null;
  readonly millicredits: number;
  readonly owner_millicredits: number;
  readonly platform_millicredits: number;
  /** What the payer paid for the credits, and its split, in micro-USD. */
  readonly value_musd: number;
  readonly owner_musd: number;
  readonly platform_musd: number;
  readonly status: 'pending' | 'ok';
  /** Milliseconds since the epoch, by the Postgres clock, when the call was reserved. */
  readonly reserved_ms: number;
}

/** Every usage event of `accountId` in `schema` (any status), oldest first. */
export function ledgerOf(schema: string, accountId: string): Promise<LedgerEvent[]> {
  return withPg(async (c) => {
    const result = await c.query<LedgerEvent>(
      `SELECT request_id, account_id, key_id, period, analytic_name, owner_id, origin, plan,
              millicredits::integer AS millicredits, owner_millicredits::integer AS owner_millicredits,
              platform_millicredits::integer AS platform_millicredits, value_musd::integer AS value_musd,
              owner_musd::integer AS owner_musd, platform_musd::integer AS platform_musd, status,
              (extract(epoch FROM reserved_at) * 1000)::double precision AS reserved_ms
         FROM ${schema}.usage_events WHERE account_id = $1 ORDER BY reserved_at, request_id`,
      [accountId],
    );
    return result.rows;
  });
}

/** The quota counter of `accountId` in `period`, in millicredits (0 when it has no row). */
export function quotaCounter(schema: string, accountId: string, period = currentPeriod()): Promise<number> {
  return withPg(async (c) => {
    const result = await c.query<{ millicredits: number }>(
      `SELECT millicredits::integer AS millicredits FROM ${schema}.usage_counters WHERE account_id = $1 AND period = $2`,
      [accountId, period],
    );
    return result.rows[0]?.millicredits ?? 0;
  });
}

/** The calls the quota counter of `accountId` holds in `period` (0 when it has no row). */
export function counterCalls(schema: string, accountId: string, period = currentPeriod()): Promise<number> {
  return withPg(async (c) => {
    const result = await c.query<{ calls: number }>(
      `SELECT calls FROM ${schema}.usage_counters WHERE account_id = $1 AND period = $2`,
      [accountId, period],
    );
    return result.rows[0]?.calls ?? 0;
  });
}

/**
 * Moves an account to another plan in the store. The operator API does this over HTTP; the tests
 * write it directly, before the account's key is first used, so no instance has cached the old plan.
 */
export function setPlan(schema: string, accountId: string, plan: string): Promise<void> {
  return withPg(async (c) => {
    const result = await c.query(`UPDATE ${schema}.accounts SET plan = $2 WHERE id = $1`, [accountId, plan]);
    if (result.rowCount !== 1) throw new Error(`no account ${accountId}`);
  });
}

/** Seconds from now to the first moment of next month, UTC (when a monthly quota resets). */
export function secondsToNextMonth(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return (next - now.getTime()) / 1000;
}

/** Tallies statuses (and error codes) of responses: `{"200": 30, "429 QUOTA_EXCEEDED": 270}`. */
export function tally(responses: readonly HttpResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const code = r.body?.error?.code;
    const label = code === undefined ? String(r.status) : `${r.status} ${code}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/**
 * Every key where the day rollups (migration 017) of `schema` disagree with the sums of its raw
 * served events: empty when every rollup is exact.
 */
export function ledgerDrift(schema: string): Promise<LedgerDrift[]> {
  return withPg(async (c) => (await c.query<LedgerDrift>(ledgerDriftSql(schema))).rows);
}

/**
 * Rebuilds `schema`'s day rollups from its raw events (as migration 017 fills them): for tests
 * that move served calls to another month with a raw UPDATE, as if they had been made then.
 */
export function rebuildLedgerRollups(schema: string): Promise<void> {
  return withPg(async (c) => {
    await c.query(
      `TRUNCATE ${schema}.usage_owner_days, ${schema}.usage_account_days, ${schema}.usage_analytic_callers,
                ${schema}.usage_analytic_caller_days`,
    );
    await c.query(
      `INSERT INTO ${schema}.usage_analytic_callers (analytic_id, account_id, last_day)
       SELECT analytic_id, account_id, max((reserved_at AT TIME ZONE 'UTC')::date) FROM ${schema}.usage_events
        WHERE status = 'ok' AND origin = 'paid' AND account_id <> owner_id GROUP BY 1, 2`,
    );
    await c.query(
      `INSERT INTO ${schema}.usage_analytic_caller_days (analytic_id, day, callers)
       SELECT analytic_id, last_day, count(*) FROM ${schema}.usage_analytic_callers GROUP BY 1, 2`,
    );
    await c.query(
      `INSERT INTO ${schema}.usage_owner_days (owner_id, period, day, analytic_id, analytic_name, plan, origin, calls,
                                              millicredits, owner_millicredits, platform_millicredits, value_musd,
                                              owner_musd, platform_musd)
       SELECT owner_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, coalesce(plan, ''),
              origin, count(*), sum(millicredits), sum(owner_millicredits), sum(platform_millicredits),
              sum(value_musd), sum(owner_musd), sum(platform_musd)
         FROM ${schema}.usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7`,
    );
    await c.query(
      `INSERT INTO ${schema}.usage_account_days (account_id, period, day, analytic_id, analytic_name, owner_id, plan,
                                                origin, calls, millicredits, value_musd, owner_musd, platform_musd)
       SELECT account_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, owner_id,
              coalesce(plan, ''), origin, count(*), sum(millicredits), sum(value_musd), sum(owner_musd),
              sum(platform_musd)
         FROM ${schema}.usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
    );
  });
}
