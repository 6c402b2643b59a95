// Money that adds up (issue 16), over real HTTP against gateway processes sharing one schema on
// the real Postgres (and Redis for rate limits):
//   - the quota counts credits, not calls: 300 concurrent calls of a 5-credit analytic over three
//     instances on a fresh Free account (30 credits) serve exactly 6;
//   - a 1-credit call on SMB (49 USD for 250 credits) earns its owner exactly 800 millicredits and
//     156,800 µUSD (80% of the 196,000 µUSD the caller paid for the credit);
//   - an owner calling its own analytic pays nothing, uses no quota and earns nothing;
//   - a Pay as you Go account stops at its monthly budget, with a message naming it.
// The ledger (usage_events) and counters are read straight from Postgres.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  currentPeriod,
  deployAnalytic,
  expectStatus,
  ledgerOf,
  quotaCounter,
  setPlan,
  signUp,
  startGateways,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import {
  pgAvailable,
  redisAvailable,
  serviceUp,
  TEST_REDIS_URL,
  uniqueSuffix,
} from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await redisAvailable());

const suffix = uniqueSuffix();
const GENEROUS = { limit: 100_000, window_seconds: 60, burst: 100_000 };
const FIVE = `five-${suffix}`;
const ONE = `one-${suffix}`;

const http = createHttpClient();
let store: ControlPlaneSchema;
let gateways: GatewayProcess[] = [];
let owner: TestAccount;

const query = (gateway: GatewayProcess, key: string, source: string): Promise<HttpResponse> =>
  http.request(gateway.url, 'POST', '/v1/query', { key, json: { source, params: {} } });

describe.runIf(up)('money that adds up (three gateway instances, real Postgres)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_money_${suffix}`);
    const env = {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      QUARRY_FREE_CALLS: '30',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: GENEROUS, smb: GENEROUS, payg: GENEROUS }),
      QUARRY_REDIS_URL: TEST_REDIS_URL,
    };
    gateways = await startGateways(3, env);
    const [g1] = gateways as [GatewayProcess];
    owner = await signUp(http, g1, 'owner', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: FIVE,
      connection: 'pg',
      sql: 'SELECT 5 AS five',
      visibility: 'public',
      price: 5,
    });
    await deployAnalytic(http, g1, owner.key, {
      name: ONE,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await store?.drop();
  }, 60_000);

  it('300 concurrent calls of a 5-credit analytic over three instances on a Free account: exactly 6 served', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'free5', suffix);
    const responses = await Promise.all(
      gateways.flatMap((g) => Array.from({ length: 100 }, () => query(g, caller.key, FIVE))),
    );
    expect(tally(responses)).toEqual({ '200': 6, '429 QUOTA_EXCEEDED': 294 });
    for (const r of responses.filter((x) => x.status === 200)) expect(r.body.meta.credits).toBe(5);
    const refused = responses.find((r) => r.status === 429) as HttpResponse;
    expectErrorEnvelope(refused, 429, 'QUOTA_EXCEEDED');
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({ field: 'credits_needed', value: 5 }),
      expect.objectContaining({ field: 'credits_left', value: 0 }),
    ]);

    const ledger = await ledgerOf(store.schema, caller.id);
    expect(ledger).toHaveLength(6);
    for (const event of ledger) {
      expect(event).toMatchObject({
        status: 'ok',
        origin: 'free',
        plan: 'free',
        millicredits: 5_000,
        owner_millicredits: 4_000,
        platform_millicredits: 1_000,
        value_musd: 0,
        owner_musd: 0,
        platform_musd: 0,
      });
    }
    expect(await quotaCounter(store.schema, caller.id)).toBe(30_000); // millicredits: 30 credits

    const usage = expectStatus(
      await http.request(gateways[1]!.url, 'GET', '/v1/account/usage', { key: caller.key }),
      200,
      'usage',
    ).body;
    expect(usage.totals).toMatchObject({
      calls: 6,
      credits: 30,
      credits_used: 30,
      credits_left: 0,
      amount_due_usd: 0,
      amount_due_cents: 0,
    });
  });

  it('a 1-credit call on SMB gives the owner exactly 800 millicredits and 156,800 µUSD', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'smb1', suffix);
    await setPlan(store.schema, caller.id, 'smb');
    const served = await query(gateways[2] as GatewayProcess, caller.key, ONE);
    expect(served.status, served.text).toBe(200);
    expect(served.body.meta.credits).toBe(1);

    const [event] = await ledgerOf(store.schema, caller.id);
    expect(event).toMatchObject({
      origin: 'paid',
      plan: 'smb',
      millicredits: 1_000,
      value_musd: 196_000,
      owner_millicredits: 800,
      owner_musd: 156_800,
      platform_millicredits: 200,
      platform_musd: 39_200,
    });

    const statement = expectStatus(
      await http.request(gateways[0]!.url, 'GET', `/v1/owner/statements?period=${currentPeriod()}`, {
        key: owner.key,
      }),
      200,
      'statement',
    ).body;
    const line = statement.analytics.find((a: { name: string }) => a.name === ONE);
    expect(line).toMatchObject({
      calls: 1,
      calls_by_origin: { paid: 1, free: 0, marketplace: 0, owner: 0 },
      credits: 1,
      owner_share: 0.8,
      owner_share_millicredits: 800,
      value_micro_usd: 196_000,
      owner_share_micro_usd: 156_800,
      platform_share_micro_usd: 39_200,
      value_usd: 0.196,
      owner_share_usd: 0.1568,
    });
  });

  it("an owner's calls of its own analytic are origin owner: free, outside the quota, earning nothing", async () => {
    const before = await quotaCounter(store.schema, owner.id);
    const served = await query(gateways[1] as GatewayProcess, owner.key, FIVE);
    expect(served.status, served.text).toBe(200);
    expect(served.body.meta.credits).toBe(0);
    const events = (await ledgerOf(store.schema, owner.id)).filter((e) => e.analytic_name === FIVE);
    expect(events).toEqual([
      expect.objectContaining({
        origin: 'owner',
        millicredits: 0,
        value_musd: 0,
        owner_millicredits: 0,
        owner_musd: 0,
      }),
    ]);
    expect(await quotaCounter(store.schema, owner.id)).toBe(before);
  });

  it('Pay as you Go stops at its monthly budget: 429 QUOTA_EXCEEDED naming the budget', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'payg', suffix);
    await setPlan(store.schema, caller.id, 'payg');
    const shown = expectStatus(
      await http.request(gateways[0]!.url, 'GET', '/v1/account/budget', { key: caller.key }),
      200,
      'budget',
    ).body;
    expect(shown.budget).toMatchObject({ budget_usd: 100, spent_usd: 0, left_usd: 100 });
    // Above the operator's cap: refused, nothing changed.
    expectErrorEnvelope(
      await http.request(gateways[0]!.url, 'PUT', '/v1/account/budget', {
        key: caller.key,
        json: { budget_usd: 10_000_000 },
      }),
      400,
      'INVALID_REQUEST',
    );
    // 1.50 USD buys three 0.50 USD credits.
    expectStatus(
      await http.request(gateways[1]!.url, 'PUT', '/v1/account/budget', {
        key: caller.key,
        json: { budget_usd: 1.5 },
      }),
      200,
      'set budget',
    );
    const responses = await Promise.all(
      gateways.flatMap((g) => Array.from({ length: 10 }, () => query(g, caller.key, ONE))),
    );
    expect(tally(responses)).toEqual({ '200': 3, '429 QUOTA_EXCEEDED': 27 });
    const refused = responses.find((r) => r.status === 429) as HttpResponse;
    expect(refused.body.error.message).toMatch(/budget/i);
    const ledger = await ledgerOf(store.schema, caller.id);
    expect(ledger.map((e) => [e.origin, e.value_musd])).toEqual([
      ['paid', 500_000],
      ['paid', 500_000],
      ['paid', 500_000],
    ]);
    const usage = expectStatus(
      await http.request(gateways[2]!.url, 'GET', '/v1/account/usage', { key: caller.key }),
      200,
      'usage',
    ).body;
    expect(usage.totals).toMatchObject({ credits_used: 3, amount_due_usd: 1.5, amount_due_cents: 150 });
    expect(usage.budget).toMatchObject({ budget_usd: 1.5, spent_usd: 1.5, left_usd: 0 });
  });
});
