// Owners paid with the sandbox provider (the embedded default), over the app: an owner who has not
// said where to be paid is held (carried whole), onboards on the sandbox page, is then paid what
// it carried plus what it earned in one transfer, and is held again below the minimum; the
// balance, the list, the statement's payout, the operator's view and /metrics agree. Calls are
// written straight into the ledger of ended months (2020-…), as the month-close tests do.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

const ADMIN = 'payouts-admin-token-0123456789';
let tg: TestGateway;
let payer: SignedUp;

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_ADMIN_TOKEN: ADMIN, QUARRY_PUBLIC_URL: 'http://quarry.test' });
  payer = await tg.signUp('Payer');
});
afterAll(async () => {
  await tg?.close();
});

/** One served SMB call of `credits` credits by the payer, of the demo owner's analytic, in `period`. */
async function served(period: string, credits: number) {
  const entry = await tg.gateway.services.catalog.resolve('sales-by-region');
  if (!entry) throw new Error('sales-by-region is missing');
  const requestId = `req_${randomUUID().replace(/-/g, '')}`;
  const reserved = await tg.gateway.services.money.usage.reserve({
    requestId,
    accountId: payer.accountId,
    keyId: payer.keyId,
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
    credits,
  });
  expect(reserved.ok).toBe(true);
  await tg.gateway.services.money.usage.commit(requestId, { latencyMs: 1, status: 'ok' });
}

const close = async (period: string) => {
  const res = await tg.call('POST', `/v1/admin/periods/${period}/close`, { key: ADMIN });
  expect(res.status, res.text).toBe(200);
  return res.json;
};
const owner = (path: string) => tg.call('GET', path, { key: tg.ownerKey });

describe('owner payouts with the sandbox provider', () => {
  it('holds an owner not onboarded, pays it all once onboarded, and holds again below the minimum', async () => {
    expect((await owner('/v1/owner/payouts/account')).json).toEqual({
      provider: 'sandbox',
      status: 'not_started',
      payouts_enabled: false,
      requirements: [],
      minimum_payout_cents: 1_000,
    });
    // 100 SMB credits: 19.60 USD paid, 15.68 USD earned; not onboarded: held whole.
    await served('2020-02', 100);
    expect((await close('2020-02')).payouts).toEqual({ paid: 0, failed: 0, held: 1, cents: 0 });
    expect((await owner('/v1/owner/statements?period=2020-02')).json.payout).toMatchObject({
      status: 'held',
      reason: 'not_onboarded',
      payout_cents: 0,
      carried_out_micro_usd: 15_680_000,
    });

    const started = await tg.call('POST', '/v1/owner/payouts/onboarding', { key: tg.ownerKey });
    expect(started.status, started.text).toBe(200);
    const path = (started.json.url as string).replace('http://quarry.test', '');
    expect(path).toMatch(/^\/billing\/sandbox\/onboarding\/acctlink_sandbox_/);
    const page = await tg.call('GET', path);
    expect(page.text).toContain('Sandbox: no money moves');
    expect(page.text).toContain('Complete onboarding');
    const done = await tg.call('POST', path, {
      body: 'action=complete',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(done.status).toBe(200);
    expect(done.text).toContain('content="0;url=http://quarry.test/?onboarding=done#/statements"');
    expect((await owner('/v1/owner/payouts/account')).json).toMatchObject({
      status: 'complete',
      payouts_enabled: true,
    });
    // A used link is gone.
    expect((await tg.call('GET', path)).status).toBe(404);

    // 5 more credits: 15.68 + 0.784 = 16.464 USD → one transfer of 1,646 cents, 0.4 cent carried.
    await served('2020-03', 5);
    expect((await close('2020-03')).payouts).toEqual({ paid: 1, failed: 0, held: 0, cents: 1_646 });
    const march = (await owner('/v1/owner/statements?period=2020-03')).json.payout;
    expect(march).toMatchObject({
      carried_in_micro_usd: 15_680_000,
      earned_micro_usd: 784_000,
      payout_cents: 1_646,
      carried_out_micro_usd: 4_000,
      status: 'paid',
      transfer_id: `tr_sandbox_${tg.ownerId}_2020-03`,
    });
    expect(march.paid_at).toMatch(/^\d{4}-/);
    // Closing again pays nobody twice.
    expect((await close('2020-03')).payouts).toEqual({ paid: 0, failed: 0, held: 0, cents: 0 });

    // 0.788 USD is under the 10 USD minimum: held, carried.
    await served('2020-04', 5);
    await close('2020-04');
    const list = (await owner('/v1/owner/payouts')).json;
    expect(list.balance_micro_usd).toBe(788_000);
    expect(
      list.payouts.map((p: { period: string; status: string; reason: string | null }) => [
        p.period,
        p.status,
        p.reason,
      ]),
    ).toEqual([
      ['2020-04', 'held', 'below_minimum'],
      ['2020-03', 'paid', null],
      ['2020-02', 'held', 'not_onboarded'],
    ]);
    expect(list.payouts[0].reason_text).toBe('below the 10.00 USD minimum: carried to the next month');

    const operator = await tg.call('GET', '/v1/admin/payouts?period=2020-03', { key: ADMIN });
    expect(operator.json.payouts).toEqual([
      expect.objectContaining({ owner_id: tg.ownerId, status: 'paid', payout_cents: 1_646 }),
    ]);
    const metrics = (await tg.call('GET', '/metrics', { key: ADMIN })).text;
    expect(metrics).toMatch(/quarry_payouts\{status="paid"\} 1/);
    expect(metrics).toMatch(/quarry_payouts_cents\{status="paid"\} 1646/);
    expect(metrics).toMatch(/quarry_payouts_held_usd 0\.788/);
  });

  it('refuses a return URL elsewhere, and callers without the owner scope', async () => {
    const res = await tg.call('POST', '/v1/owner/payouts/onboarding', {
      key: tg.ownerKey,
      body: { return_url: 'https://evil.example/' },
    });
    expect(res.status).toBe(400);
    expect((await tg.call('GET', '/v1/owner/payouts')).status).toBe(401);
    expect((await tg.call('GET', '/v1/admin/payouts?period=2020-13', { key: ADMIN })).status).toBe(400);
  });
});
