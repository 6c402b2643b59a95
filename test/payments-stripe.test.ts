// Money that moves (docs/money.md, "Paying for a plan"), end to end on real processes: two
// gateway instances with QUARRY_PAYMENTS=stripe over one schema of the real PostgreSQL, the
// official Stripe SDK talking HTTP to our protocol fake (support/fake-stripe/), whose webhooks,
// signed as Stripe signs them, go to the first instance. A person's checkout, a card network's
// renewals, refunds and disputes are the fake's drivers.
//   - a Free account that spent its credits upgrades to SMB through Checkout and has the month's
//     250 credits at once, on the other instance too; one customer, one price for both instances;
//   - a declined (then expired) checkout changes nothing;
//   - a forged webhook is refused with 400 and changes nothing; a replayed one changes nothing twice;
//   - events delivered in reverse order end in the state Stripe holds;
//   - a failed renewal: past due, still served, Free once the grace period (8.6 s here) ends;
//   - a refund or a dispute of a subscription payment: Free at once, recorded once;
//   - a Pay as you Go month of 37 calls of 3-credit analytics: one invoice of 55.50 USD with a line
//     per analytic, charged once although the period is closed twice on two instances at once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type FakeStripe, startFakeStripe } from './support/fake-stripe/fake-stripe.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  rebuildLedgerRollups,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { paymentsFixture, stripeEnv, waitFor } from './support/payments-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;
const GRACE_DAYS = 0.0001; // 8.64 s
const ONE = `one-${suffix}`;
const THREE_A = `three-a-${suffix}`;
const THREE_B = `three-b-${suffix}`;

const http = createHttpClient();
let store: ControlPlaneSchema;
let stripe: FakeStripe;
let g1: GatewayProcess;
let g2: GatewayProcess;
let owner: TestAccount;

const query = (g: GatewayProcess, key: string, source = ONE): Promise<HttpResponse> =>
  http.request(g.url, 'POST', '/v1/query', { key, json: { source, params: {} } });
const { billing, checkout, customerOf, subscriptionOf, priceFor } = paymentsFixture(http, () => stripe);
const adjustments = (accountId: string) =>
  withPg(async (c) => {
    const { rows } = await c.query(
      `SELECT kind, amount_cents::int AS cents FROM ${store.schema}.payment_adjustments WHERE account_id = $1`,
      [accountId],
    );
    return rows as { kind: string; cents: number }[];
  });

async function webhook(body: string, signature: string): Promise<HttpResponse> {
  return http.request(g1.url, 'POST', '/v1/billing/stripe-webhook', {
    raw: body,
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
  });
}

/** A Free account that paid for `plan` through Checkout. */
async function subscribed(label: string, plan: string): Promise<TestAccount> {
  const account = await signUp(http, g1, label, suffix);
  await stripe.completeCheckout(await checkout(g1, account.key, plan));
  await waitFor(
    () => billing(g2, account.key),
    (b) => b.plan.id === plan,
  );
  return account;
}

describe.runIf(up)('paying with Stripe (two instances, real Postgres, the Stripe SDK against a fake)', () => {
  beforeAll(async () => {
    stripe = await startFakeStripe();
    store = await createControlPlaneSchema(`quarry_pay_${suffix}`);
    const env = {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      ...stripeEnv(stripe),
      QUARRY_FREE_CREDITS: '3',
      QUARRY_ADMIN_TOKEN: ADMIN,
      // The months here are closed by the operator, when the test says.
      QUARRY_AUTO_CLOSE: 'false',
      QUARRY_PAYMENT_GRACE_DAYS: String(GRACE_DAYS),
      QUARRY_BILLING_TICK_MS: '250',
    };
    [g1, g2] = (await startGateways(2, env)) as [GatewayProcess, GatewayProcess];
    stripe.setWebhookUrl(`${g1.url}/v1/billing/stripe-webhook`);
    owner = await signUp(http, g1, 'owner', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    for (const [name, price] of [
      [ONE, 1],
      [THREE_A, 3],
      [THREE_B, 3],
    ] as const) {
      await deployAnalytic(http, g1, owner.key, {
        name,
        connection: 'pg',
        sql: `SELECT ${price} AS price`,
        visibility: 'public',
        price,
      });
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([g1?.stop(), g2?.stop()]);
    await stripe?.close();
    await store?.drop();
  });

  it('upgrades a Free account that spent its credits to SMB at once, on every instance', async () => {
    const alice = await signUp(http, g1, 'alice', suffix);
    for (let i = 0; i < 3; i++) expectStatus(await query(g1, alice.key), 200, 'free call');
    const refused = await query(g2, alice.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.body.error.message).toMatch(/quarry billing upgrade/);

    const id = await checkout(g1, alice.key, 'smb');
    const session = stripe.checkoutSessions().find((s) => s.id === id)!;
    expect(session).toMatchObject({ mode: 'subscription', client_reference_id: alice.id, status: 'open' });
    await stripe.completeCheckout(id);

    const after = await waitFor(
      () => billing(g2, alice.key),
      (b) => b.plan.id === 'smb',
    );
    expect(after).toMatchObject({ provider: 'stripe', status: 'active', card_on_file: true, portal: true });
    // Served on the other instance right away (its cached principal is dropped by the change log).
    await waitFor(
      () => query(g2, alice.key),
      (r) => r.status === 200,
      3_000,
    );
    const usage = (await http.request(g2.url, 'GET', '/v1/account/usage', { key: alice.key })).body;
    expect(usage.plan.included_credits).toBe(250);
    expect(usage.totals.credits_used).toBe(4);
    expect(usage.totals.credits_left).toBe(246);

    // One customer for the account; the SMB price found or made once, though both instances sell it.
    expect(customerOf(alice.id).email).toBe(`alice-${suffix}@metering.quarry.test`);
    const bob = await signUp(http, g2, 'bob', suffix);
    await checkout(g2, bob.key, 'smb');
    expect(priceFor('smb').unit_amount).toBe(4_900);
    const portal = expectStatus(
      await http.request(g1.url, 'POST', '/v1/billing/portal', { key: alice.key }),
      200,
      'portal',
    );
    expect(portal.body.url).toMatch(new RegExp(`^${stripe.url}/portal/`));

    // Paying already, Alice upgrades in place: the subscription's price changes, no second one.
    const up = expectStatus(
      await http.request(g2.url, 'POST', '/v1/billing/checkout', {
        key: alice.key,
        json: { plan: 'enterprise' },
      }),
      200,
      'upgrade in place',
    );
    expect(up.body.url).toMatch(/checkout=success/);
    expect(await billing(g1, alice.key)).toMatchObject({ plan: { id: 'enterprise' }, status: 'active' });
    const subs = stripe.subscriptions().filter((s) => s.customer === customerOf(alice.id).id);
    expect(subs).toHaveLength(1);
    expect(subs[0]!.items.data[0]!.price.lookup_key).toBe(priceFor('enterprise').lookup_key);
  });

  it('changes nothing when the card is declined and the checkout expires', async () => {
    const carol = await signUp(http, g1, 'carol', suffix);
    const id = await checkout(g2, carol.key, 'enterprise');
    await stripe.declineCheckout(id);
    await stripe.expireCheckout(id);
    await stripe.idle();
    const expired = stripe.events().find((e) => e.type === 'checkout.session.expired')!;
    expect(stripe.deliveries().find((d) => d.eventId === expired.id)?.status).toBe(200);
    expect(await billing(g1, carol.key)).toMatchObject({
      plan: { id: 'free' },
      status: 'none',
      card_on_file: false,
    });
    expect(stripe.subscriptions().filter((s) => s.customer === customerOf(carol.id).id)).toHaveLength(0);
  });

  it('refuses a forged webhook with 400 and applies a replayed one once', async () => {
    const dave = await subscribed('dave', 'smb');
    const sub = subscriptionOf(dave.id);
    const forged = JSON.stringify({
      id: `evt_forged_${suffix}`,
      object: 'event',
      type: 'customer.subscription.deleted',
      data: { object: { ...sub, status: 'canceled' } },
    });
    const t = Math.floor(Date.now() / 1000);
    for (const signature of [
      `t=${t},v1=${'0'.repeat(64)}`,
      stripe.signPayload(forged, 'whsec_not_the_secret'),
      stripe.signPayload(`${forged} `).replace(/^t=\d+/, `t=${t}`),
      '',
    ]) {
      const res = await webhook(forged, signature);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
    // An old signature, replayed past the tolerance.
    const stale = await webhook(forged, stripe.signPayload(forged, undefined, t - 3_600));
    expect(stale.status).toBe(400);
    expect(await billing(g1, dave.key)).toMatchObject({ plan: { id: 'smb' }, status: 'active' });

    const completed = stripe
      .events()
      .find(
        (e) =>
          e.type === 'checkout.session.completed' &&
          (e.data.object as { customer?: string }).customer === customerOf(dave.id).id,
      )!;
    const replay = await stripe.redeliver(completed.id);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ received: true, duplicate: true });
    expect(await billing(g2, dave.key)).toMatchObject({ plan: { id: 'smb' }, status: 'active' });
  });

  it('ends in Stripe’s state when events come in reverse order', async () => {
    const erin = await signUp(http, g1, 'erin', suffix);
    stripe.holdEvents(true);
    const id = await checkout(g1, erin.key, 'smb');
    await stripe.completeCheckout(id);
    const sub = subscriptionOf(erin.id);
    await stripe.changeSubscriptionPrice(sub.id, priceFor('enterprise').id);
    const held = stripe.pendingEvents().map((e) => e.id);
    expect(held.length).toBeGreaterThan(3);
    stripe.holdEvents(false);
    const answers = await stripe.deliver([...held].reverse());
    expect(answers.map((r) => r.status).every((s) => s === 200)).toBe(true);
    expect(await billing(g2, erin.key)).toMatchObject({ plan: { id: 'enterprise' }, status: 'active' });
  });

  it('keeps a failed renewal’s account serving for the grace period, then moves it to Free', async () => {
    const frank = await subscribed('frank', 'smb');
    const sub = subscriptionOf(frank.id);
    stripe.setCardDeclines(customerOf(frank.id).id, true);
    await stripe.renewSubscription(sub.id, 'failed');
    const owing = await billing(g1, frank.key);
    expect(owing).toMatchObject({ plan: { id: 'smb' }, status: 'past_due' });
    const graceEnds = Date.parse(owing.grace_ends_at);
    expect(graceEnds).toBeGreaterThan(Date.now());
    expect((await query(g2, frank.key)).status).toBe(200);
    const fallen = await waitFor(
      () => billing(g2, frank.key),
      (b) => b.plan.id === 'free',
      20_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(graceEnds);
    expect(fallen).toMatchObject({ status: 'canceled', grace_ends_at: null });
    // Its Stripe subscription is ended too, so it is never charged again.
    await waitFor(
      async () => stripe.subscriptions().find((s) => s.id === sub.id)?.status,
      (status) => status === 'canceled',
    );
  });

  it('moves an account to Free at once on a refund or a dispute, recorded once', async () => {
    const gina = await subscribed('gina', 'smb');
    const charge = stripe.charges().find((c) => c.customer === customerOf(gina.id).id)!;
    await stripe.refundCharge(charge.id);
    expect(await billing(g1, gina.key)).toMatchObject({ plan: { id: 'free' }, status: 'canceled' });
    expect(await adjustments(gina.id)).toEqual([{ kind: 'refund', cents: 4_900 }]);
    const refunded = stripe.events().find((e) => e.type === 'charge.refunded')!;
    expect((await stripe.redeliver(refunded.id)).status).toBe(200);
    expect(await adjustments(gina.id)).toHaveLength(1);

    const hank = await subscribed('hank', 'enterprise');
    const paid = stripe.charges().find((c) => c.customer === customerOf(hank.id).id)!;
    await stripe.disputeCharge(paid.id);
    expect(await billing(g2, hank.key)).toMatchObject({ plan: { id: 'free' } });
    expect(await adjustments(hank.id)).toEqual([{ kind: 'dispute', cents: 19_900 }]);
  });

  it('invoices a Pay as you Go month once, with a line per analytic, however often it is closed', async () => {
    const ivy = await signUp(http, g1, 'ivy', suffix);
    const id = await checkout(g1, ivy.key, 'payg');
    expect(stripe.checkoutSessions().find((s) => s.id === id)?.mode).toBe('setup');
    await stripe.completeCheckout(id);
    const onPayg = await waitFor(
      () => billing(g2, ivy.key),
      (b) => b.plan.id === 'payg',
    );
    expect(onPayg.card_on_file).toBe(true);
    const customer = customerOf(ivy.id);
    expect(
      stripe.customers().find((c) => c.id === customer.id)?.invoice_settings.default_payment_method,
    ).toMatch(/^pm_/);
    await waitFor(
      () => query(g1, ivy.key, THREE_A),
      (r) => r.status === 200,
      3_000,
    );
    for (let i = 1; i < 25; i++) expectStatus(await query(g1, ivy.key, THREE_A), 200, 'payg call');
    for (let i = 0; i < 12; i++) expectStatus(await query(g2, ivy.key, THREE_B), 200, 'payg call');

    // The month ends: the calls move to last month in the ledger, which the operator closes.
    const now = new Date();
    const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    const period = last.toISOString().slice(0, 7);
    await withPg((c) =>
      c.query(
        `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3 WHERE account_id = $1`,
        [ivy.id, period, last],
      ),
    );
    await rebuildLedgerRollups(store.schema);
    const close = (g: GatewayProcess) =>
      http.request(g.url, 'POST', `/v1/admin/periods/${period}/close`, { key: ADMIN });
    // Both at once: one closes it; the other finds it closing (409 with retry_after) or closed.
    const both = await Promise.all([close(g1), close(g2)]);
    for (const res of both) {
      expect([200, 409]).toContain(res.status);
      if (res.status === 409) expect(res.body.error.retry_after).toBeGreaterThan(0);
    }
    const done = both.filter((r) => r.status === 200);
    expect(done.length).toBeGreaterThanOrEqual(1);
    expect(done.reduce((sum, r) => sum + r.body.invoices.total_cents, 0)).toBe(5_550);
    for (const g of [g1, g2]) {
      const again = expectStatus(await close(g), 200, 'close again');
      expect(again.body).toMatchObject({ already_closed: true });
      expect(again.body.invoices).toEqual({ invoiced: 0, paid: 0, failed: 0, total_cents: 0 });
    }

    const invoices = stripe.invoices().filter((i) => i.customer === customer.id);
    expect(invoices).toHaveLength(1);
    const invoice = invoices[0]!;
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 5_550, amount_paid: 5_550, currency: 'usd' });
    expect(invoice.metadata).toMatchObject({ quarry_kind: 'payg', quarry_period: period });
    expect(invoice.lines.data.map((l) => [l.description, l.amount]).sort()).toEqual([
      [`${THREE_A}: 25 calls, 75 credits`, 3_750],
      [`${THREE_B}: 12 calls, 36 credits`, 1_800],
    ]);
    const pays = stripe
      .requests()
      .filter((r) => r.method === 'POST' && r.path === `/v1/invoices/${invoice.id}/pay` && !r.replayed);
    expect(pays).toHaveLength(1);
    expect(
      stripe.charges().filter((c) => c.customer === customer.id && c.status === 'succeeded'),
    ).toHaveLength(1);

    const shown = await billing(g2, ivy.key);
    expect(shown.invoices).toEqual([
      {
        period,
        status: 'paid',
        invoice_id: invoice.id,
        amount_cents: 5_550,
        amount_usd: 55.5,
        lines: expect.arrayContaining([
          { description: `${THREE_A}: 25 calls, 75 credits`, amount_cents: 3_750, analytic: THREE_A },
        ]),
      },
    ]);
  });
});
