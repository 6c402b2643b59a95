// Failed calls that kept an owner's warehouse busy (issue 29, item 7), against a real gateway
// process on the embedded store: a caller whose failed calls (timeouts, results too large) used
// more than QUARRY_FAILED_WAREHOUSE_SECONDS of warehouse time in QUARRY_FAILED_WINDOW_SECONDS is
// refused before any warehouse work with 429 FAILED_CALLS_THROTTLED and `retry_after` (not the
// rate limit's or the quota's code); other callers are not; failed calls stay free; and the
// owner's statement (JSON and CSV) shows the failed calls and warehouse seconds by caller.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { currentPeriod, expectStatus, signUp, type TestAccount } from './support/metering-fixture.js';

const http = createHttpClient();
const TIMEOUT_MS = 700;
const ENV = {
  QUARRY_LOG_LEVEL: 'warn',
  QUARRY_ALLOW_HOST_FILES: 'true',
  QUARRY_FREE_CREDITS: '1000',
  QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
  // Two timeouts (2 × 0.7 s) pass a 1 s budget; the window is long enough for the whole test.
  QUARRY_FAILED_WAREHOUSE_SECONDS: '1',
  QUARRY_FAILED_WINDOW_SECONDS: '120',
};
const SLOW = 'slow-on-purpose';
const CHEAP = 'cheap-and-fine';

let dir: string;
let gateway: GatewayProcess;
let owner: TestAccount;
let caller: TestAccount;
let bystander: TestAccount;

async function deploy(name: string, sql: string) {
  expectStatus(
    await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${name}`, {
      key: owner.key,
      json: {
        connection: 'mem',
        sql,
        visibility: 'public',
        limits: { timeout_ms: TIMEOUT_MS, max_rows: 10 },
      },
    }),
    200,
    `deploy ${name}`,
  );
}

const call = (who: TestAccount, source: string) =>
  http.request(gateway.url, 'POST', '/v1/query', { key: who.key, json: { source, params: {} } });

async function creditsUsed(who: TestAccount): Promise<number> {
  const usage = expectStatus(
    await http.request(gateway.url, 'GET', '/v1/account/usage', { key: who.key }),
    200,
    'usage',
  );
  return usage.body.totals.credits_used as number;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-failed-calls-'));
  gateway = await startGateway({ env: { QUARRY_DATA_DIR: dir, ...ENV }, readyTimeoutMs: 90_000 });
  owner = await signUp(http, gateway, 'owner', 'failed-calls');
  caller = await signUp(http, gateway, 'caller', 'failed-calls');
  bystander = await signUp(http, gateway, 'bystander', 'failed-calls');
  expectStatus(
    await http.request(gateway.url, 'POST', '/v1/owner/connections', {
      key: owner.key,
      json: { name: 'mem', type: 'duckdb', config: { path: ':memory:' } },
    }),
    201,
    'connect',
  );
  // CPU-bound for far longer than the time limit: it is interrupted at TIMEOUT_MS.
  await deploy(SLOW, 'SELECT count(*) AS n FROM range(100000000000) a WHERE a.range % 7 = 3');
  await deploy(CHEAP, 'SELECT 1 AS one');
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('failed calls past the warehouse-time budget are throttled', () => {
  it('two timeouts use the budget; the third call is 429 FAILED_CALLS_THROTTLED before any warehouse work', async () => {
    for (let i = 0; i < 2; i++) expectErrorEnvelope(await call(caller, SLOW), 504, 'QUERY_TIMEOUT');
    const started = performance.now();
    const throttled = await call(caller, SLOW);
    const elapsed = performance.now() - started;
    expectErrorEnvelope(throttled, 429, 'FAILED_CALLS_THROTTLED');
    expect(throttled.body.error.retry_after).toBeGreaterThan(0);
    expect(throttled.body.error.retry_after).toBeLessThanOrEqual(120);
    expect(throttled.headers.get('retry-after')).toBe(String(Math.ceil(throttled.body.error.retry_after)));
    expect(throttled.body.error.message).toMatch(/warehouse/);
    // Refused before running: far quicker than the analytic's time limit.
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
    // Any call that would run a query is refused for this caller while it lasts…
    expectErrorEnvelope(await call(caller, CHEAP), 429, 'FAILED_CALLS_THROTTLED');
    // …and nobody else is: the budget is per calling account.
    expectStatus(await call(bystander, CHEAP), 200, 'a bystander’s call');
    // Failed and throttled calls stay free.
    expect(await creditsUsed(caller)).toBe(0);
  }, 60_000);

  it('the owner’s statement shows failed calls and warehouse seconds by caller (JSON and CSV)', async () => {
    const period = currentPeriod();
    const statement = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/owner/statements?period=${period}`, { key: owner.key }),
      200,
      'statement',
    ).body;
    expect(statement.failed_calls).toHaveLength(1);
    const row = statement.failed_calls[0];
    expect(row).toMatchObject({ caller_account_id: caller.id, analytic: SLOW, calls: 2 });
    expect(row.calls_by_code).toEqual({ QUERY_TIMEOUT: 2 });
    expect(row.warehouse_seconds).toBeGreaterThanOrEqual(1.2);
    expect(row.warehouse_seconds).toBeLessThan(10);
    // No money moved: the failed calls are no served calls and earned nothing.
    expect(statement.analytics.find((a: { name: string }) => a.name === SLOW)?.calls ?? 0).toBe(0);
    const csv = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/owner/statements?period=${period}&format=csv`, {
        key: owner.key,
      }),
      200,
      'statement CSV',
    ).text;
    expect(csv).toContain(`failed calls of ${caller.id}`);
    // The caller cannot read the owner's statement of failures.
    const callerStatement = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/owner/statements?period=${period}`, { key: caller.key }),
      200,
      'the caller’s own statement',
    ).body;
    expect(callerStatement.failed_calls).toEqual([]);
  }, 60_000);
});
