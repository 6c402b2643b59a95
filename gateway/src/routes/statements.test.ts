// Owner statements over HTTP: exactly 0.8 credit a credit to the owner (price 7 → owner 5.6,
// platform 1.4; price 1 → owner 0.8, not 0), Free-plan credits worth 0 USD, JSON and CSV, another
// owner's calls never mixed in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf } from '../money/billing-period.js';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let consumer: SignedUp;
const period = periodOf(new Date());

beforeAll(async () => {
  tg = await createTestGateway();
  consumer = await tg.signUp('Consumer');
  for (const [name, price] of [
    ['stmt-test-seven', 7],
    ['stmt-test-one', 1],
  ] as const) {
    const res = await tg.call('PUT', `/v1/owner/analytics/${name}`, {
      key: tg.ownerKey,
      body: { connection: 'demo', sql: 'SELECT 1 AS one', price, visibility: 'public' },
    });
    expect(res.status, res.text).toBe(200);
  }
  for (const [source, times] of [
    ['stmt-test-seven', 3],
    ['stmt-test-one', 2],
  ] as const) {
    for (let i = 0; i < times; i++) {
      const res = await tg.call('POST', '/v1/query', { key: consumer.key, body: { source, params: {} } });
      expect(res.status, res.text).toBe(200);
    }
  }
});
afterAll(async () => {
  await tg?.close();
});

describe('GET /v1/owner/statements', () => {
  it('gives the owner 0.8 of every credit (0.8 of a 1-credit call, not 0) and Free credits no USD', async () => {
    const res = await tg.call('GET', '/v1/owner/statements', { key: tg.ownerKey });
    expect(res.status, res.text).toBe(200);
    expect(res.json.period).toBe(period);
    expect(res.json.closed_at).toBeNull();
    const rows = res.json.analytics as { name: string }[];
    expect(rows.find((a) => a.name === 'stmt-test-seven')).toMatchObject({
      name: 'stmt-test-seven',
      calls: 3,
      calls_by_origin: { paid: 0, free: 3, marketplace: 0, owner: 0 },
      credits: 21,
      owner_share: 16.8,
      platform_share: 4.2,
      owner_share_millicredits: 16_800,
      platform_share_millicredits: 4_200,
      value_micro_usd: 0,
      owner_share_usd: 0,
    });
    expect(rows.find((a) => a.name === 'stmt-test-one')).toMatchObject({
      name: 'stmt-test-one',
      calls: 2,
      credits: 2,
      owner_share_millicredits: 1_600,
      platform_share_millicredits: 400,
    });
    const sum = (field: string) =>
      (res.json.analytics as Record<string, number>[]).reduce((total, a) => total + (a[field] ?? 0), 0);
    expect(res.json.totals).toMatchObject({
      calls: sum('calls'),
      millicredits: sum('millicredits'),
      owner_share_millicredits: sum('owner_share_millicredits'),
      platform_share_millicredits: sum('platform_share_millicredits'),
    });
    expect(res.json.totals.owner_share_millicredits + res.json.totals.platform_share_millicredits).toBe(
      res.json.totals.millicredits,
    );
    expect(res.json.payout).toBeNull();
    // Per day and analytic: today's rows, summing to the same totals.
    const today = new Date().toISOString().slice(0, 10);
    const days = res.json.by_day as { date: string; name: string; calls: number; owner_share: number }[];
    expect(days.find((d) => d.name === 'stmt-test-seven')).toMatchObject({
      date: today,
      calls: 3,
      credits: 21,
      owner_share: 16.8,
    });
    const daySum = (field: string) =>
      (res.json.by_day as Record<string, number>[]).reduce((total, d) => total + (d[field] ?? 0), 0);
    expect(daySum('owner_share_millicredits')).toBe(res.json.totals.owner_share_millicredits);
    expect(daySum('calls')).toBe(res.json.totals.calls);
  });

  it('shows nothing of other owners', async () => {
    const res = await tg.call('GET', '/v1/owner/statements', { key: consumer.key });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      period,
      closed_at: null,
      analytics: [],
      totals: { calls: 0, credits: 0, owner_share: 0, platform_share: 0, value_usd: 0 },
      payout: null,
    });
  });

  it('answers CSV with one row per analytic and a total row', async () => {
    const res = await tg.call('GET', `/v1/owner/statements?period=${period}`, {
      key: tg.ownerKey,
      headers: { accept: 'text/csv, application/json;q=0.5' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename=quarry-statement-${period}.csv`,
    );
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(
      'period,analytic,calls,credits,owner_share,platform_share,closed_at,paid_calls,free_calls,marketplace_calls,owner_calls,value_usd,owner_share_usd,platform_share_usd',
    );
    expect(lines).toContain(`${period},stmt-test-seven,3,21,16.8,4.2,,0,3,0,0,0,0,0`);
    expect(lines).toContain(`${period},stmt-test-one,2,2,1.6,0.4,,0,2,0,0,0,0,0`);
    const json = (await tg.call('GET', '/v1/owner/statements', { key: tg.ownerKey })).json;
    const t = json.totals;
    expect(lines.at(-2)).toMatch(
      new RegExp(`^${period},,${t.calls},${t.credits},${t.owner_share},${t.platform_share},,`),
    );
    expect(lines.at(-1)).toBe('');
  });

  it('refuses a malformed period and a key without the owner scope', async () => {
    const bad = await tg.call('GET', '/v1/owner/statements?period=2024-00', { key: tg.ownerKey });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_REQUEST');
    const key = (
      await tg.call('POST', '/v1/keys', { key: consumer.key, body: { name: 'q', scopes: ['query'] } })
    ).json.key.secret;
    expect((await tg.call('GET', '/v1/owner/statements', { key })).status).toBe(403);
  });
});
