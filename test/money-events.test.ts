// The money events (docs/webhooks.md, "Event catalogue") end to end: two gateway processes with
// QUARRY_PAYMENTS=stripe over one schema of the real PostgreSQL, the official Stripe SDK against
// the protocol fake (support/fake-stripe/), a webhook receiver process on loopback. Each money
// moment makes exactly one delivery of its event, signed by the endpoint's secret, with the
// documented payload:
//   - a plan bought through Checkout: one `subscription.updated`, however many Stripe events tell
//     of it; the same subscription state again makes none, a renewal (a new period) makes one;
//   - a card saved for Pay as you Go and an invoice paid change no subscription: none;
//   - a month closed: `invoice.paid` to the payer whose card paid, `invoice.failed` (and the
//     past-due `subscription.updated`) to the one whose card was declined, `payout.paid`,
//     `payout.failed` (the transfer refused) and `payout.held` (under the minimum) to three owners;
//     closing the month again sends nothing more.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type FakeStripe, startFakeStripe } from './support/fake-stripe/fake-stripe.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  rebuildLedgerRollups,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { paymentsFixture, servedCalls, sleep, stripeEnv, waitFor } from './support/payments-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from './support/webhook-receiver.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;
// How long the tests wait after the last expected delivery for one that should not come.
const QUIET_MS = 1_500;

const http = createHttpClient({ localAddress: '127.0.0.1' });
let store: ControlPlaneSchema;
let stripe: FakeStripe;
let receiver: WebhookReceiver;
let g1: GatewayProcess;
let g2: GatewayProcess;

const { billing, buy, checkout, customerOf, subscriptionOf, priceFor, connectedAccountOf } = paymentsFixture(
  http,
  () => stripe,
);

interface Event {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

const MONEY_EVENTS = [
  'subscription.updated',
  'invoice.paid',
  'invoice.failed',
  'payout.paid',
  'payout.failed',
  'payout.held',
];

/** An endpoint for the money events of `account`, on the receiver's hook `name`: its secret. */
async function endpoint(account: TestAccount, name: string): Promise<string> {
  const res = expectStatus(
    await http.request(g1.url, 'POST', '/v1/webhooks', {
      key: account.key,
      json: { url: receiver.hook(name), event_types: MONEY_EVENTS },
    }),
    201,
    'create webhook',
  );
  return res.body.secret as string;
}

/** The deliveries to hook `name`, each verified with `secret` by the standardwebhooks library. */
async function verified(name: string, secret: string): Promise<(Event & { id: string })[]> {
  const all = await receiver.received(name);
  return all.map((d: ReceivedDelivery) => {
    const event = new Webhook(secret).verify(d.body, {
      'webhook-id': d.id,
      'webhook-timestamp': d.timestamp,
      'webhook-signature': d.signature,
    }) as Event;
    return { ...event, id: d.id };
  });
}

/** Waits until hook `name` got `count` deliveries of `type`, then a quiet moment for any more. */
async function settled(name: string, type: string, count = 1): Promise<void> {
  await receiver.waitFor(
    (all) => all.filter((d) => JSON.parse(d.body).type === type).length >= count,
    20_000,
    name,
  );
  await stripe.idle();
  await sleep(QUIET_MS);
}

const ofType = (events: readonly Event[], type: string) => events.filter((e) => e.type === type);

describe.runIf(up)(
  'money events delivered as webhooks (two instances, real Postgres, the Stripe SDK against a fake)',
  () => {
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      stripe = await startFakeStripe();
      store = await createControlPlaneSchema(`quarry_money_events_${suffix}`);
      const env = {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        ...stripeEnv(stripe),
        QUARRY_ADMIN_TOKEN: ADMIN,
        // No free credits: a call answered 200 was charged to the plan paid for.
        QUARRY_FREE_CREDITS: '0',
        // The months here are closed by the operator, when the test says.
        QUARRY_AUTO_CLOSE: 'false',
        QUARRY_BILLING_TICK_MS: '250',
        // The receiver is on loopback.
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
        QUARRY_WEBHOOK_POLL_MS: '100',
      };
      [g1, g2] = (await startGateways(2, env)) as [GatewayProcess, GatewayProcess];
      stripe.setWebhookUrl(`${g1.url}/v1/billing/stripe-webhook`);
    }, 120_000);

    afterAll(async () => {
      await Promise.allSettled([g1?.stop(), g2?.stop()]);
      await stripe?.close();
      await receiver?.stop();
      await store?.drop();
    }, 60_000);

    it('a plan bought makes one subscription.updated; the same state again none, a renewal one', async () => {
      const buyer = await signUp(http, g1, 'buyer', suffix);
      const secret = await endpoint(buyer, 'buyer');
      // Checkout tells of it several times (checkout.session.completed, customer.subscription.created,
      // invoice.paid): one change, one event.
      await stripe.completeCheckout(await checkout(g2, buyer.key, 'smb'));
      await waitFor(
        () => billing(g2, buyer.key),
        (b) => b.plan.id === 'smb' && b.status === 'active',
      );
      await settled('buyer', 'subscription.updated');
      let events = await verified('buyer', secret);
      expect(events.map((e) => e.type)).toEqual(['subscription.updated']);
      const sub = subscriptionOf(buyer.id);
      const periodEnd = (end: number) => new Date(end * 1000).toISOString();
      expect(events[0]?.data).toEqual({
        plan: 'smb',
        status: 'active',
        pending_plan: null,
        period_end: periodEnd(sub.items.data[0]!.current_period_end),
      });
      expect(events[0]?.id).toMatch(/^msg_/);

      // Stripe reports the same subscription again (its price "changed" to the one it has).
      const before = stripe.events().length;
      await stripe.changeSubscriptionPrice(sub.id, priceFor('smb').id);
      await stripe.idle();
      expect(stripe.events().length).toBeGreaterThan(before);
      await sleep(QUIET_MS);
      expect(await verified('buyer', secret)).toHaveLength(1);

      // A renewal: a new period, one event with its end.
      await stripe.renewSubscription(sub.id, 'paid');
      await settled('buyer', 'subscription.updated', 2);
      events = await verified('buyer', secret);
      expect(events.map((e) => e.type)).toEqual(['subscription.updated', 'subscription.updated']);
      const renewed = subscriptionOf(buyer.id);
      const renewedEnd = periodEnd(renewed.items.data[0]!.current_period_end);
      expect(renewedEnd).not.toBe(events[0]?.data.period_end);
      expect(events[1]?.data).toEqual({
        plan: 'smb',
        status: 'active',
        pending_plan: null,
        period_end: renewedEnd,
      });
      expect(new Set(events.map((e) => e.id)).size).toBe(2);
    }, 60_000);

    it('closing a month sends invoice.paid|failed and payout.paid|failed|held once each, as documented', async () => {
      // Three owners: two onboarded with 50-credit analytics, one onboarded earning under the minimum.
      // Payouts are transferred in owner id order (the store's); the fake refuses the first
      // transfer, so the owner whose id sorts first is the one whose payout fails.
      const pair = await Promise.all(['owner-x', 'owner-y'].map((l) => signUp(http, g1, l, suffix)));
      const order = await withPg(async (c) => {
        const { rows } = await c.query(
          `SELECT id FROM ${store.schema}.accounts WHERE id = ANY ($1::text[]) ORDER BY id`,
          [pair.map((a) => a.id)],
        );
        return rows.map((r) => r.id as string);
      });
      const [failing, paid] = order.map((id) => pair.find((a) => a.id === id)) as [TestAccount, TestAccount];
      const small = await signUp(http, g1, 'owner-small', suffix);
      const owners = [
        [paid, 'paid', `paid-${suffix}`, 50],
        [failing, 'failing', `failing-${suffix}`, 50],
        [small, 'small', `small-${suffix}`, 1],
      ] as const;
      const secrets: Record<string, string> = {};
      for (const [owner, hook, analytic, price] of owners) {
        secrets[hook] = await endpoint(owner, hook);
        await connectTestPostgres(http, g1, owner.key, 'pg');
        await deployAnalytic(http, g1, owner.key, {
          name: analytic,
          connection: 'pg',
          sql: `SELECT ${price} AS price`,
          visibility: 'public',
          price,
        });
        expectStatus(
          await http.request(g1.url, 'POST', '/v1/owner/payouts/onboarding', { key: owner.key }),
          200,
          'onboarding',
        );
        await stripe.completeOnboarding(connectedAccountOf(owner.id).id);
        await waitFor(
          async () =>
            (await http.request(g1.url, 'GET', '/v1/owner/payouts/account', { key: owner.key })).body,
          (v) => v.status === 'complete',
        );
      }

      // Two Pay as you Go payers, their endpoints there before they save a card (which changes no
      // subscription). One's card is declined when its month is charged.
      const payer = await signUp(http, g1, 'payer', suffix);
      const declined = await signUp(http, g1, 'declined', suffix);
      secrets.payer = await endpoint(payer, 'payer');
      secrets.declined = await endpoint(declined, 'declined');
      await buy(g1, payer.key, 'payg');
      await buy(g1, declined.key, 'payg');
      const call = async (key: string, source: string) =>
        expectStatus(
          await http.request(g2.url, 'POST', '/v1/query', { key, json: { source, params: {} } }),
          200,
          `call ${source}`,
        );
      // Served (not 429) once this instance knows the account is on Pay as you Go.
      const first = (key: string, source: string) =>
        waitFor(
          () => http.request(g2.url, 'POST', '/v1/query', { key, json: { source, params: {} } }),
          (r) => r.status === 200,
          5_000,
        );
      await first(payer.key, `paid-${suffix}`);
      await first(declined.key, `small-${suffix}`);
      await call(payer.key, `failing-${suffix}`);
      await call(payer.key, `small-${suffix}`);
      await call(declined.key, `failing-${suffix}`);
      stripe.setCardDeclines(customerOf(declined.id).id, true);
      await servedCalls(store.schema, [payer.id, declined.id], 5);

      // The calls move to last month in the ledger, which the operator closes.
      const now = new Date();
      const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15, 12));
      const period = at.toISOString().slice(0, 7);
      await withPg((c) =>
        c.query(
          `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3
          WHERE account_id = ANY ($1::text[])`,
          [[payer.id, declined.id], period, at],
        ),
      );
      await rebuildLedgerRollups(store.schema);
      stripe.failNextTransfers(1);
      const close = () => http.request(g1.url, 'POST', `/v1/admin/periods/${period}/close`, { key: ADMIN });
      const closed = expectStatus(await close(), 200, 'close').body;
      expect(closed.payouts).toMatchObject({ paid: 1, failed: 1, held: 1 });
      expect(closed.invoices).toMatchObject({ invoiced: 2, paid: 1, failed: 1 });

      for (const [hook, type] of [
        ['payer', 'invoice.paid'],
        ['declined', 'invoice.failed'],
        ['paid', 'payout.paid'],
        ['failing', 'payout.failed'],
        ['small', 'payout.held'],
      ] as const) {
        await receiver.waitFor((all) => all.some((d) => JSON.parse(d.body).type === type), 20_000, hook);
      }
      // Closing it again (the other instance) finds it closed and sends nothing.
      const again = expectStatus(
        await http.request(g2.url, 'POST', `/v1/admin/periods/${period}/close`, { key: ADMIN }),
        200,
        'close again',
      );
      expect(again.body).toMatchObject({ already_closed: true });
      await stripe.idle();
      await sleep(QUIET_MS);

      // Each payer: its invoice's event, once; the card saved and the invoice paid changed no
      // subscription, the declined one made the account past due (one change, one event).
      const invoiceOf = (accountId: string) => {
        const found = stripe.invoices().filter((i) => i.customer === customerOf(accountId).id);
        expect(found).toHaveLength(1);
        return found[0]!;
      };
      const payerEvents = await verified('payer', secrets.payer!);
      expect(payerEvents.map((e) => e.type)).toEqual(['invoice.paid']);
      expect(payerEvents[0]?.data).toEqual({ period, invoice_id: invoiceOf(payer.id).id, amount_usd: 50.5 });
      expect(invoiceOf(payer.id)).toMatchObject({ status: 'paid', amount_paid: 5_050 });

      const declinedEvents = await verified('declined', secrets.declined!);
      expect(declinedEvents.map((e) => e.type).sort()).toEqual(['invoice.failed', 'subscription.updated']);
      expect(ofType(declinedEvents, 'invoice.failed')[0]?.data).toEqual({
        period,
        invoice_id: invoiceOf(declined.id).id,
        amount_usd: 25.5,
      });
      expect(ofType(declinedEvents, 'subscription.updated')[0]?.data).toEqual({
        plan: 'payg',
        status: 'past_due',
        pending_plan: null,
        period_end: null,
      });
      expect((await billing(g2, declined.key)).status).toBe('past_due');

      // Each owner: its payout's event, once, with the amount its statement shows.
      // biome-ignore lint/suspicious/noExplicitAny: the tests read the answer's shape as documented.
      const payoutOf = async (owner: TestAccount): Promise<any> =>
        expectStatus(
          await http.request(g2.url, 'GET', `/v1/owner/statements?period=${period}`, { key: owner.key }),
          200,
          'statement',
        ).body.payout;

      const paidEvents = await verified('paid', secrets.paid!);
      expect(paidEvents.map((e) => e.type)).toEqual(['payout.paid']);
      const paidPayout = await payoutOf(paid);
      expect(paidPayout).toMatchObject({ status: 'paid', payout_cents: 2_000 });
      expect(paidEvents[0]?.data).toEqual({ period, amount_usd: 20, reason: null });
      expect(stripe.transfers().filter((t) => t.destination === connectedAccountOf(paid.id).id)).toHaveLength(
        1,
      );

      const failedEvents = await verified('failing', secrets.failing!);
      expect(failedEvents.map((e) => e.type)).toEqual(['payout.failed']);
      const failedPayout = await payoutOf(failing);
      expect(failedPayout).toMatchObject({ status: 'failed', carried_out_micro_usd: 40_000_000 });
      expect(failedPayout.reason).toMatch(/transfer could not be created/);
      expect(failedEvents[0]?.data).toEqual({ period, amount_usd: 40, reason: failedPayout.reason });

      const heldEvents = await verified('small', secrets.small!);
      expect(heldEvents.map((e) => e.type)).toEqual(['payout.held']);
      expect(await payoutOf(small)).toMatchObject({
        status: 'held',
        reason: 'below_minimum',
        carried_out_micro_usd: 800_000,
      });
      expect(heldEvents[0]?.data).toEqual({ period, amount_usd: 0.8, reason: 'below_minimum' });
    }, 120_000);
  },
);
