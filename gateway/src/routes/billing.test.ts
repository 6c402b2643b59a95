// Paying for a plan with the sandbox provider (the embedded default), over the app: the billing
// view, checkout pages that pay or decline, Pay as you Go's card, the portal's cancel, and every
// refusal (unknown, free or current plan, a second subscription, a return URL elsewhere). With
// QUARRY_PAYMENTS=none nothing can be bought. The Free plan here includes 2 credits a month.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let none: TestGateway;

beforeAll(async () => {
  [tg, none] = await Promise.all([
    createTestGateway({ QUARRY_FREE_CREDITS: '2', QUARRY_PUBLIC_URL: 'http://quarry.test' }),
    createTestGateway({ QUARRY_PAYMENTS: 'none' }),
  ]);
});
afterAll(async () => {
  await Promise.all([tg?.close(), none?.close()]);
});

const sales = (key: string) =>
  tg.call('POST', '/v1/query', { key, body: { source: 'sales-by-region', params: { year: 2024 } } });

const form = (action: string) => ({
  body: `action=${action}`,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

/** The path of a URL the gateway answered (absolute, on QUARRY_PUBLIC_URL). */
function pathOf(url: string): string {
  expect(url.startsWith('http://quarry.test/')).toBe(true);
  return url.slice('http://quarry.test'.length);
}

async function checkout(account: SignedUp, plan: string) {
  const res = await tg.call('POST', '/v1/billing/checkout', { key: account.key, body: { plan } });
  expect(res.status, res.text).toBe(200);
  return res.json as { id: string; url: string; mode: string };
}

describe('the sandbox provider', () => {
  it('shows a new account on Free with the plans it can buy', async () => {
    const alice = await tg.signUp('Alice');
    const res = await tg.call('GET', '/v1/billing', { key: alice.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      provider: 'sandbox',
      plan: { id: 'free' },
      status: 'none',
      card_on_file: false,
      portal: false,
      budget: null,
      invoices: [],
    });
    const actions = Object.fromEntries(
      (res.json.plans as { id: string; action: string | null }[]).map((p) => [p.id, p.action]),
    );
    expect(actions).toEqual({ free: 'current', smb: 'upgrade', enterprise: 'upgrade', payg: 'add_card' });
  });

  it('upgrades at once through the sandbox checkout: the month’s credits become the plan’s', async () => {
    const bob = await tg.signUp('Bob');
    expect((await sales(bob.key)).status).toBe(200);
    expect((await sales(bob.key)).status).toBe(200);
    const refused = await sales(bob.key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.json.error.message).toMatch(/upgrade/i);

    const started = await checkout(bob, 'smb');
    expect(started.mode).toBe('subscription');
    const page = await tg.call('GET', pathOf(started.url));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('Sandbox: no money moves');
    expect(page.text).toContain('Pay 49.00 USD');

    const paid = await tg.call('POST', pathOf(started.url), form('pay'));
    expect(paid.status).toBe(200);
    expect(paid.text).toContain('content="0;url=http://quarry.test/?checkout=success#/usage"');

    const billing = (await tg.call('GET', '/v1/billing', { key: bob.key })).json;
    expect(billing).toMatchObject({
      plan: { id: 'smb' },
      status: 'active',
      card_on_file: true,
      portal: true,
    });
    expect(billing.current_period_end).toMatch(/^\d{4}-\d\d-\d\dT23:59:59\.999Z$/);
    expect((await sales(bob.key)).status).toBe(200);
    const usage = (await tg.call('GET', '/v1/account/usage', { key: bob.key })).json;
    expect(usage.plan.included_credits).toBe(250);
    expect(usage.totals.credits_used).toBe(3);
    expect(usage.totals.credits_left).toBe(247);

    // A finished checkout cannot be paid again.
    const again = await tg.call('POST', pathOf(started.url), form('pay'));
    expect(again.status).toBe(404);
    // A paying account upgrades in place: no checkout page, the plan changes at once.
    const actions = (await tg.call('GET', '/v1/billing', { key: bob.key })).json.plans.map(
      (p: { id: string; action: string | null }) => `${p.id}:${p.action}`,
    );
    expect(actions).toEqual(['free:downgrade', 'smb:current', 'enterprise:upgrade', 'payg:null']);
    const up = await tg.call('POST', '/v1/billing/checkout', { key: bob.key, body: { plan: 'enterprise' } });
    expect(up.status, up.text).toBe(200);
    expect(up.json.url).toBe('http://quarry.test/?checkout=success#/usage');
    expect((await tg.call('GET', '/v1/billing', { key: bob.key })).json).toMatchObject({
      plan: { id: 'enterprise' },
      status: 'active',
    });
    // Cheaper plans and Pay as you Go go through the portal.
    for (const plan of ['smb', 'payg']) {
      const down = await tg.call('POST', '/v1/billing/checkout', { key: bob.key, body: { plan } });
      expect(down.status).toBe(409);
      expect(down.json.error.message).toMatch(/portal/);
    }
  });

  it('changes nothing when the checkout is declined', async () => {
    const carol = await tg.signUp('Carol');
    const started = await checkout(carol, 'enterprise');
    const declined = await tg.call('POST', pathOf(started.url), form('decline'));
    expect(declined.status).toBe(200);
    expect(declined.text).toContain('nothing was charged');
    expect(declined.text).toContain('content="0;url=http://quarry.test/?checkout=cancel#/usage"');
    const billing = (await tg.call('GET', '/v1/billing', { key: carol.key })).json;
    expect(billing).toMatchObject({
      plan: { id: 'free' },
      status: 'none',
      card_on_file: false,
      portal: false,
    });
  });

  it('puts a card on file for Pay as you Go, which then shows its budget', async () => {
    const dan = await tg.signUp('Dan');
    const started = await checkout(dan, 'payg');
    expect(started.mode).toBe('setup');
    const page = await tg.call('GET', pathOf(started.url));
    expect(page.text).toContain('0.50 USD a credit');
    expect((await tg.call('POST', pathOf(started.url), form('pay'))).status).toBe(200);
    const billing = (await tg.call('GET', '/v1/billing', { key: dan.key })).json;
    expect(billing).toMatchObject({ plan: { id: 'payg' }, card_on_file: true, budget: { budget_usd: 100 } });
  });

  it('cancels at the period’s end from the portal, and keeps the plan until then', async () => {
    const erin = await tg.signUp('Erin');
    const started = await checkout(erin, 'smb');
    await tg.call('POST', pathOf(started.url), form('pay'));
    const portal = await tg.call('POST', '/v1/billing/portal', { key: erin.key });
    expect(portal.status, portal.text).toBe(200);
    const page = await tg.call('GET', pathOf(portal.json.url));
    expect(page.text).toContain('Cancel subscription');
    const cancelled = await tg.call('POST', pathOf(portal.json.url), form('cancel'));
    expect(cancelled.status).toBe(200);
    const billing = (await tg.call('GET', '/v1/billing', { key: erin.key })).json;
    expect(billing).toMatchObject({ plan: { id: 'smb' }, cancel_at_period_end: true, pending_plan: 'free' });
    expect(billing.pending_at).toBe(billing.current_period_end);
    await tg.call('POST', pathOf(portal.json.url), form('resume'));
    const resumed = (await tg.call('GET', '/v1/billing', { key: erin.key })).json;
    expect(resumed).toMatchObject({ plan: { id: 'smb' }, cancel_at_period_end: false, pending_plan: null });
  });

  it('refuses what cannot be bought, with the reason', async () => {
    const frank = await tg.signUp('Frank');
    const cases: [unknown, number, RegExp][] = [
      [{ plan: 'platinum' }, 400, /no plan "platinum"/],
      [{ plan: 'free' }, 400, /costs nothing/],
      [{ plan: 'smb', return_url: 'https://evil.example/phish' }, 400, /on this gateway/],
      [{ plan: 'smb', extra: 1 }, 400, /./],
      [{}, 400, /./],
    ];
    for (const [body, status, message] of cases) {
      const res = await tg.call('POST', '/v1/billing/checkout', { key: frank.key, body });
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.json.error.message).toMatch(message);
    }
    const portal = await tg.call('POST', '/v1/billing/portal', { key: frank.key });
    expect(portal.status).toBe(409);
    expect((await tg.call('GET', '/billing/sandbox/checkout/cs_sandbox_forged')).status).toBe(404);
    expect((await tg.call('POST', '/v1/billing/stripe-webhook', { body: '{}' })).status).toBe(404);
    expect((await tg.call('GET', '/v1/billing')).status).toBe(401);
  });
});

describe('QUARRY_PAYMENTS=none', () => {
  it('sells nothing: the operator sets plans', async () => {
    const gina = await none.signUp('Gina');
    const billing = (await none.call('GET', '/v1/billing', { key: gina.key })).json;
    expect(billing.provider).toBe('none');
    expect((billing.plans as { action: string | null }[]).map((p) => p.action)).toEqual([
      'current',
      null,
      null,
      null,
    ]);
    const res = await none.call('POST', '/v1/billing/checkout', { key: gina.key, body: { plan: 'smb' } });
    expect(res.status).toBe(409);
    expect(res.json.error.message).toMatch(/operator sets plans/);
    expect((await none.call('GET', '/billing/sandbox/checkout/x')).status).toBe(404);
  });
});
