// The operator API over HTTP: absent (404 like any unknown route) without QUARRY_ADMIN_TOKEN,
// 401 for a wrong token or any API key, and its effects: a plan change applies to the next call,
// a key's rate-limit override applies and lifts, closing a period freezes its statements.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { periodOf } from '../money/billing-period.js';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

const ADMIN_TOKEN = `admin-${randomUUID()}`;
let tg: TestGateway;
let alice: SignedUp;

beforeAll(async () => {
  // Free plan: 1 call a month, so a plan change shows at once.
  tg = await createTestGateway({ QUARRY_ADMIN_TOKEN: ADMIN_TOKEN, QUARRY_FREE_CALLS: '1' });
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

const admin = (method: string, path: string, body?: unknown) =>
  tg.call(method, path, { key: ADMIN_TOKEN, ...(body === undefined ? {} : { body }) });

const sales = (key: string) =>
  tg.call('POST', '/v1/query', { key, body: { source: 'sales-by-region', params: { year: 2024 } } });

describe('operator authentication', () => {
  it('does not exist without QUARRY_ADMIN_TOKEN: every admin path answers like an unknown route', async () => {
    const services = tg.gateway.services;
    const app = createApp({ ...services, config: { ...services.config, adminToken: undefined } });
    const answer = async (method: string, path: string) => {
      const res = await app.request(path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: '{"plan":"smb"}' }),
      });
      const body = (await res.json()) as { error: { code: string; message: string } };
      return {
        status: res.status,
        code: body.error.code,
        message: body.error.message,
        allow: res.headers.get('allow'),
      };
    };
    const unknown = await answer('GET', '/v1/admin/no-such-route');
    expect(unknown).toMatchObject({ status: 404, code: 'NOT_FOUND', allow: null });
    for (const [method, path] of [
      ['GET', '/v1/admin/accounts'],
      ['PUT', `/v1/admin/accounts/${alice.accountId}/plan`],
      ['POST', '/v1/admin/accounts'],
      ['DELETE', `/v1/admin/keys/${alice.keyId}/rate-limit`],
      ['POST', '/v1/admin/periods/2020-01/close'],
    ] as const) {
      const res = await answer(method, path);
      expect(res, `${method} ${path}`).toEqual({ ...unknown, message: `No route for ${method} ${path}.` });
    }
    const doc = (await (await app.request('/v1/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/admin'))).toEqual([]);
    // With the token set, the operator routes are documented under their own security scheme.
    const documented = (await tg.call('GET', '/v1/openapi.json')).json;
    expect(documented.paths['/v1/admin/accounts'].get.security).toEqual([{ adminAuth: [] }]);
  });

  it('refuses a missing or wrong token and every API key with 401', async () => {
    for (const key of [
      undefined,
      'wrong-token-0123456789',
      `${ADMIN_TOKEN}x`,
      alice.key,
      tg.ownerKey,
      tg.demoKey,
    ]) {
      const res = await tg.call('GET', '/v1/admin/accounts', key === undefined ? {} : { key });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect((await admin('GET', '/v1/admin/accounts')).status).toBe(200);
  });
});

describe('accounts and plans', () => {
  it('lists accounts with their plan and calls this period', async () => {
    expect((await sales(alice.key)).status).toBe(200);
    const res = await admin('GET', '/v1/admin/accounts?limit=500');
    expect(res.status, res.text).toBe(200);
    const row = res.json.accounts.find((a: { id: string }) => a.id === alice.accountId);
    expect(row).toMatchObject({
      email: alice.email,
      plan: 'free',
      period: periodOf(new Date()),
      calls: 1,
      closed_at: null,
    });
    const page = await admin('GET', '/v1/admin/accounts?limit=1');
    expect(page.json.accounts).toHaveLength(1);
    expect((await admin('GET', '/v1/admin/accounts?limit=0')).status).toBe(400);
  });

  it('changes a plan, which applies to the very next call', async () => {
    const refused = await sales(alice.key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('QUOTA_EXCEEDED');
    const res = await admin('PUT', `/v1/admin/accounts/${alice.accountId}/plan`, { plan: 'smb' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.account).toMatchObject({ id: alice.accountId, plan: 'smb' });
    const served = await sales(alice.key);
    expect(served.status, served.text).toBe(200);
    expect(served.headers.get('ratelimit')).toMatch(/"monthly";r=248/);
    expect((await tg.call('GET', '/v1/account', { key: alice.key })).json.account.plan).toBe('smb');

    const unknownPlan = await admin('PUT', `/v1/admin/accounts/${alice.accountId}/plan`, {
      plan: 'platinum',
    });
    expect(unknownPlan.status).toBe(400);
    expect(unknownPlan.json.error.code).toBe('INVALID_REQUEST');
    const unknownAccount = await admin('PUT', '/v1/admin/accounts/acc_nope/plan', { plan: 'smb' });
    expect(unknownAccount.status).toBe(404);
  });
});

describe('key rate limits', () => {
  it('sets an override that applies at once, and lifts it', async () => {
    const bob = await tg.signUp('Bob');
    const set = await admin('PUT', `/v1/admin/keys/${bob.keyId}/rate-limit`, {
      limit: 1,
      window_seconds: 60,
      burst: 0,
    });
    expect(set.status, set.text).toBe(200);
    expect(set.json.key).toMatchObject({
      id: bob.keyId,
      rate_limit: { limit: 1, window_seconds: 60, burst: 0 },
    });
    const first = await tg.call('GET', '/v1/account', { key: bob.key });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=1;w=60');
    const limited = await tg.call('GET', '/v1/account', { key: bob.key });
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('RATE_LIMIT_EXCEEDED');

    const lifted = await admin('DELETE', `/v1/admin/keys/${bob.keyId}/rate-limit`);
    expect(lifted.status, lifted.text).toBe(200);
    expect(lifted.json.key.rate_limit).toBeNull();
    const again = await tg.call('GET', '/v1/account', { key: bob.key });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('ratelimit-policy')).not.toContain('q=1;');

    const unlimited = await admin('PUT', `/v1/admin/keys/${bob.keyId}/rate-limit`, { unlimited: true });
    expect(unlimited.status).toBe(200);
    const free = await tg.call('GET', '/v1/account', { key: bob.key });
    expect(free.status).toBe(200);
    expect(free.headers.get('ratelimit-policy')).toBeNull();
  });

  it('validates the override and the key', async () => {
    for (const body of [{}, { limit: 0 }, { limit: 5, per: 'minute' }, { unlimited: false }]) {
      const res = await admin('PUT', `/v1/admin/keys/${alice.keyId}/rate-limit`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
    expect((await admin('PUT', '/v1/admin/keys/key_nope/rate-limit', { limit: 5 })).status).toBe(404);
    expect((await admin('DELETE', '/v1/admin/keys/key_nope/rate-limit')).status).toBe(404);
  });
});

describe('closing a period', () => {
  /** Records one served (or, with `commit: false`, pending) call of `period` straight in the ledger. */
  async function record(period: string, commit = true) {
    const entry = await tg.gateway.services.catalog.resolve('sales-by-region');
    if (!entry) throw new Error('sales-by-region is missing');
    const requestId = `req_${randomUUID().replace(/-/g, '')}`;
    const reserved = await tg.gateway.services.money.usage.reserve({
      requestId,
      accountId: alice.accountId,
      keyId: alice.keyId,
      period,
      plan: 'smb',
      limit: null,
      budget: null,
      creditValueMicroUsd: 196_000,
      analyticId: entry.analyticId,
      analyticName: entry.name,
      version: entry.version,
      ownerId: entry.ownerId,
      origin: 'paid',
      credits: 5,
    });
    if (reserved.ok && commit)
      await tg.gateway.services.money.usage.commit(requestId, { latencyMs: 1, status: 'ok' });
    return { reserved, requestId };
  }
  const statement = async (period: string) =>
    (await tg.call('GET', `/v1/owner/statements?period=${period}`, { key: tg.ownerKey })).json;

  it('freezes the statement of an ended month and refuses its later calls', async () => {
    await record('2020-01');
    const open = await statement('2020-01');
    expect(open.closed_at).toBeNull();
    expect(open.analytics).toEqual([
      expect.objectContaining({
        name: 'sales-by-region',
        calls: 1,
        credits: 5,
        owner_share: 4,
        platform_share: 1,
        value_micro_usd: 980_000,
        owner_share_micro_usd: 784_000,
        platform_share_micro_usd: 196_000,
      }),
    ]);
    expect(open.payout).toBeNull();
    const closed = await admin('POST', '/v1/admin/periods/2020-01/close');
    expect(closed.status, closed.text).toBe(200);
    expect(closed.json).toMatchObject({ period: '2020-01', already_closed: false });
    const frozen = await statement('2020-01');
    expect(frozen.closed_at).toBe(closed.json.closed_at);
    expect((await record('2020-01')).reserved).toMatchObject({ ok: false, reason: 'period_closed' });
    expect((await statement('2020-01')).analytics).toEqual(open.analytics);
    // The payout: 0.784 USD earned; the owner has not said where to be paid (the sandbox
    // provider, as on npm start), so all of it is held and carried to its next payout.
    expect(frozen.payout).toEqual({
      carried_in_micro_usd: 0,
      earned_micro_usd: 784_000,
      adjusted_micro_usd: 0,
      payout_cents: 0,
      payout_usd: 0,
      carried_out_micro_usd: 784_000,
      status: 'held',
      reason: 'not_onboarded',
      reason_text: 'payouts are not set up yet: carried until they are',
      transfer_id: null,
      paid_at: null,
    });
    expect(frozen.adjustments).toEqual([]);
    expect(closed.json.payouts).toEqual({ paid: 0, failed: 0, held: 1, cents: 0 });
    const listed = await admin('GET', '/v1/admin/payouts?period=2020-01');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.payouts).toEqual([
      expect.objectContaining({
        period: '2020-01',
        owner_id: tg.ownerId,
        status: 'held',
        carried_out_micro_usd: 784_000,
      }),
    ]);
    const again = await admin('POST', '/v1/admin/periods/2020-01/close');
    expect(again.json).toEqual({
      period: '2020-01',
      closed_at: closed.json.closed_at,
      already_closed: true,
      payouts: { paid: 0, failed: 0, held: 1, cents: 0 },
      invoices: { invoiced: 0, paid: 0, failed: 0, total_cents: 0 },
    });
  });

  it('refuses the current month, a future one and a malformed one', async () => {
    const now = new Date();
    const next = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)));
    for (const period of [periodOf(now), next, '2999-01', '2020-13', 'last']) {
      const res = await admin('POST', `/v1/admin/periods/${period}/close`);
      expect(res.status, period).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('answers 409 with retry_after while calls of the period are in flight', async () => {
    const { requestId } = await record('2020-02', false);
    const busy = await admin('POST', '/v1/admin/periods/2020-02/close');
    expect(busy.status).toBe(409);
    expect(busy.json.error).toMatchObject({ code: 'CONFLICT', retry_after: 1 });
    expect(busy.headers.get('retry-after')).toBe('1');
    await tg.gateway.services.money.usage.release(requestId);
    expect((await admin('POST', '/v1/admin/periods/2020-02/close')).status).toBe(200);
  });
});
