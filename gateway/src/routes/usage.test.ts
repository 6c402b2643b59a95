// Account usage over HTTP (JSON and CSV), the Free plan's quota (429 QUOTA_EXCEEDED until the
// next UTC month), Pay as you Go never refused, and marketplace try-it calls free even with the
// quota spent. The Free plan here includes 3 calls a month; usage-test-broken deploys (the warehouse
// accepts its SQL) and fails when it runs (a scalar subquery of two rows).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf, secondsToPeriodEnd } from '../money/billing-period.js';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
const period = periodOf(new Date());
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_FREE_CALLS: '3' });
  for (const [name, sql, price] of [
    ['usage-test-priced', 'SELECT 1 AS one', 2],
    ['usage-test-broken', 'SELECT (SELECT 1 UNION ALL SELECT 2) AS two_rows', 1],
  ] as const) {
    const res = await tg.call('PUT', `/v1/owner/analytics/${name}`, {
      key: tg.ownerKey,
      body: { connection: 'demo', sql, price, visibility: 'public' },
    });
    expect(res.status, res.text).toBe(200);
  }
});
afterAll(async () => {
  await tg?.close();
});

async function onPlan(plan: string): Promise<SignedUp> {
  const account = await tg.signUp(`On ${plan}`);
  await tg.gateway.services.store.accounts.setPlan(account.accountId, plan);
  tg.gateway.services.auth.forgetAll();
  return account;
}

const sales = (key: string) =>
  tg.call('POST', '/v1/query', { key, body: { source: 'sales-by-region', params: { year: 2024 } } });

describe('GET /v1/account/usage', () => {
  let smb: SignedUp;

  beforeAll(async () => {
    smb = await onPlan('smb');
    expect((await sales(smb.key)).status).toBe(200);
    expect((await sales(smb.key)).status).toBe(200);
    const priced = await tg.call('GET', '/v1/analytics/usage-test-priced', { key: smb.key });
    expect(priced.status).toBe(200);
    // Failed calls are never charged: a param error and a warehouse error.
    const invalid = await tg.call('POST', '/v1/query', {
      key: smb.key,
      body: { source: 'sales-by-region', params: { year: 'x' } },
    });
    expect(invalid.json.error.code).toBe('INVALID_PARAMS');
    const broken = await tg.call('GET', '/v1/analytics/usage-test-broken', { key: smb.key });
    expect(broken.status).toBe(502);
  });

  it('gives totals, by analytic and by day for the current month, without failed calls', async () => {
    const res = await tg.call('GET', '/v1/account/usage', { key: smb.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({
      period,
      plan: {
        id: 'smb',
        name: 'SMB',
        included_calls: 250,
        included_credits: 250,
        monthly_price_cents: 4_900,
        per_call_cents: 0,
        credit_price_cents: 0,
        credit_value_usd: 0.196,
      },
      totals: {
        calls: 3,
        calls_by_origin: { paid: 3, free: 0, marketplace: 0, owner: 0 },
        credits: 4,
        credits_used: 4,
        credits_left: 246,
        marketplace_calls: 0,
        remaining_calls: 246,
        amount_due_usd: 49,
        amount_due_micro_usd: 49_000_000,
        amount_due_cents: 4_900,
      },
      budget: null,
      by_analytic: [
        { name: 'sales-by-region', calls: 2, credits: 2, value_usd: 0.392 },
        { name: 'usage-test-priced', calls: 1, credits: 2, value_usd: 0.392 },
      ],
      by_day: [{ date: today, calls: 3, credits: 4, value_usd: 0.784 }],
      // No version of anything called by version (name@N) is deprecated.
      deprecated_versions: [],
    });
  });

  it('answers another month, and refuses a malformed period', async () => {
    const old = await tg.call('GET', '/v1/account/usage?period=2020-01', { key: smb.key });
    expect(old.status).toBe(200);
    expect(old.json).toMatchObject({
      period: '2020-01',
      totals: { calls: 0, credits: 0, marketplace_calls: 0, remaining_calls: 250 },
      by_analytic: [],
      by_day: [],
    });
    for (const bad of ['2024-13', '2024-1', 'last-month']) {
      const res = await tg.call('GET', `/v1/account/usage?period=${bad}`, { key: smb.key });
      expect(res.status, bad).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('answers CSV for ?format=csv or Accept: text/csv, as an attachment', async () => {
    const byQuery = await tg.call('GET', '/v1/account/usage?format=csv', { key: smb.key });
    const byAccept = await tg.call('GET', '/v1/account/usage', {
      key: smb.key,
      headers: { accept: 'text/csv' },
    });
    for (const res of [byQuery, byAccept]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename=quarry-usage-${period}.csv`);
    }
    expect(byAccept.text).toBe(byQuery.text);
    expect(byQuery.text.split('\r\n')).toEqual([
      'period,date,analytic,origin,calls,credits,value_usd',
      `${period},,,paid,3,4,0.784`,
      `${period},,,free,0,0,0`,
      `${period},,,marketplace,0,0,0`,
      `${period},,,owner,0,0,0`,
      `${period},,sales-by-region,,2,2,0.392`,
      `${period},,usage-test-priced,,1,2,0.392`,
      `${period},${today},,,3,4,0.784`,
      '',
    ]);
    expect((await tg.call('GET', '/v1/account/usage?format=xml', { key: smb.key })).status).toBe(400);
  });

  it('needs the account scope', async () => {
    const created = await tg.call('POST', '/v1/keys', {
      key: smb.key,
      body: { name: 'q', scopes: ['query'] },
    });
    const res = await tg.call('GET', '/v1/account/usage', { key: created.json.key.secret });
    expect(res.status).toBe(403);
    expect((await tg.call('GET', '/v1/account/usage')).status).toBe(401);
  });
});

describe('quota', () => {
  it('stops the Free plan at its calls with QUOTA_EXCEEDED until the next UTC month', async () => {
    const free = await tg.signUp('Free');
    for (let i = 0; i < 3; i++) expect((await sales(free.key)).status).toBe(200);
    const refused = await sales(free.key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('QUOTA_EXCEEDED');
    expect(Math.abs(refused.json.error.retry_after - secondsToPeriodEnd(new Date()))).toBeLessThanOrEqual(2);
    expect(refused.headers.get('ratelimit')).toMatch(/"monthly";r=0(;|$)/);
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil(refused.json.error.retry_after)));
    const usage = (await tg.call('GET', '/v1/account/usage', { key: free.key })).json;
    expect(usage.totals).toMatchObject({ calls: 3, credits: 3, remaining_calls: 0, amount_due_cents: 0 });

    // Try-it calls from the marketplace still run: free, not counted, not against the quota.
    const token = (
      await tg.call('POST', '/v1/marketplace/try-token', {
        key: free.key,
        body: { source: 'sales-by-region' },
      })
    ).json.token;
    const tried = await sales(token);
    expect(tried.status, tried.text).toBe(200);
    expect(tried.json.meta.credits).toBe(0);
    const after = (await tg.call('GET', '/v1/account/usage', { key: free.key })).json;
    expect(after.totals).toMatchObject({ calls: 3, credits: 3, marketplace_calls: 1, remaining_calls: 0 });
    expect(await tg.gateway.services.money.usage.counter(free.accountId, period)).toBe(3);
    expect((await sales(free.key)).status).toBe(429);
  });

  it('bills Pay as you Go per credit, within its monthly budget (default 100 USD: 200 credits)', async () => {
    const payg = await onPlan('payg');
    for (let i = 0; i < 5; i++) {
      const res = await sales(payg.key);
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('ratelimit') ?? '').toMatch(new RegExp(`"monthly";r=${199 - i}(;|$)`));
    }
    const usage = (await tg.call('GET', '/v1/account/usage', { key: payg.key })).json;
    expect(usage.plan).toMatchObject({
      id: 'payg',
      included_calls: null,
      per_call_cents: 50,
      credit_value_usd: 0.5,
    });
    expect(usage.totals).toMatchObject({
      calls: 5,
      credits: 5,
      credits_left: 195,
      marketplace_calls: 0,
      remaining_calls: 195,
      amount_due_usd: 2.5,
      amount_due_cents: 250,
    });
    expect(usage.budget).toMatchObject({ budget_usd: 100, spent_usd: 2.5, left_usd: 97.5 });
  });
});

describe('GET /v1/plans', () => {
  it('lists every plan, without a credential, in the shape of the usage answer’s plan', async () => {
    const res = await tg.call('GET', '/v1/plans');
    expect(res.status, res.text).toBe(200);
    const plan = (
      id: string,
      name: string,
      included: number | null,
      cents: number,
      perCall: number,
      value: number,
    ) => ({
      id,
      name,
      included_calls: included,
      included_credits: included,
      monthly_price_cents: cents,
      per_call_cents: perCall,
      credit_price_cents: perCall,
      credit_value_usd: value,
    });
    expect(res.json).toEqual({
      plans: [
        plan('free', 'Forever Free', 3, 0, 0, 0),
        plan('smb', 'SMB', 250, 4_900, 0, 0.196),
        plan('enterprise', 'Enterprise', 2_000, 19_900, 0, 0.0995),
        plan('payg', 'Pay as you Go', null, 0, 50, 0.5),
      ],
    });
    const usage = await tg.call('GET', '/v1/account/usage', { key: (await tg.signUp('Plans reader')).key });
    expect(res.json.plans[0]).toEqual(usage.json.plan);
  });
});
