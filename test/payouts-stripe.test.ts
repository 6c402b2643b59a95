// Owners paid (docs/money.md, "Owners' payouts"), end to end on real processes: gateways with
// QUARRY_PAYMENTS=stripe over one schema of the real PostgreSQL, the official Stripe SDK against
// the protocol fake with Connect (connected accounts, Account Links, Transfers).
//   - owner A onboards (the fake completes it; `account.updated` tells the gateway); B never does;
//     C onboards but earns little;
//   - two months ago: an SMB caller (paid then: the fake's clock) and a Pay as you Go caller call
//     their analytics; the operator closes it: A is paid by one transfer of exactly its statement's
//     cents, B is held (not onboarded), C is held (below the 10 USD minimum);
//   - the SMB payment is refunded: A's and C's shares of it become adjustments;
//   - last month: more Pay as you Go calls. The instances close it by themselves
//     (QUARRY_CLOSE_GRACE_HOURS=0); the first one dies mid-close, after Stripe made the transfer but
//     before it heard so; two others resume it; exactly one of them closes it, and A is paid once,
//     its payout reduced by exactly the refund's adjustment.
// Calls are made now and their ledger rows moved to the month they stand for.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type FakeStripe, startFakeStripe } from './support/fake-stripe/fake-stripe.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  rebuildLedgerRollups,
  signUp,
  type TestAccount,
} from './support/metering-fixture.js';
import { paymentsFixture, stripeEnv, waitFor } from './support/payments-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;

const http = createHttpClient();
let store: ControlPlaneSchema;
let stripe: FakeStripe;
let env: Record<string, string>;
const gateways: GatewayProcess[] = [];
let clock: Date | undefined;

const { buy, customerOf, connectedAccountOf } = paymentsFixture(http, () => stripe);

/** `YYYY-MM` of `monthsAgo` months before now, and a moment in its middle. */
function monthAgo(monthsAgo: number): { period: string; at: Date } {
  const now = new Date();
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo, 15, 12));
  return { period: at.toISOString().slice(0, 7), at };
}
const twoAgo = monthAgo(2);
const lastMonth = monthAgo(1);

const start = async (extra: Record<string, string>) => {
  const g = await startGateway({ env: { ...env, ...extra } });
  gateways.push(g);
  return g;
};

async function call(g: GatewayProcess, key: string, source: string, times = 1) {
  for (let i = 0; i < times; i++) {
    expectStatus(
      await http.request(g.url, 'POST', '/v1/query', { key, json: { source, params: {} } }),
      200,
      `call ${source}`,
    );
  }
}

/** Moves every served call made so far by `payers` (and not moved yet) to `month`. */
const moveCalls = async (payers: readonly TestAccount[], month: { period: string; at: Date }) => {
  await withPg((c) =>
    c.query(
      `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3
        WHERE account_id = ANY ($1::text[]) AND period = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')`,
      [payers.map((p) => p.id), month.period, month.at],
    ),
  );
  await rebuildLedgerRollups(store.schema);
};

// biome-ignore lint/suspicious/noExplicitAny: the tests read the answer's shape as documented.
const statement = async (g: GatewayProcess, key: string, period: string): Promise<any> =>
  expectStatus(
    await http.request(g.url, 'GET', `/v1/owner/statements?period=${period}`, { key }),
    200,
    'statement',
  ).body;

const ownerShares = (payer: TestAccount, owner: TestAccount, period: string) =>
  withPg(async (c) => {
    const { rows } = await c.query(
      `SELECT coalesce(sum(owner_musd), 0)::bigint AS musd FROM ${store.schema}.usage_events
        WHERE account_id = $1 AND owner_id = $2 AND period = $3 AND origin = 'paid'`,
      [payer.id, owner.id, period],
    );
    return Number(rows[0].musd);
  });

const transfersTo = (owner: TestAccount) =>
  stripe.transfers().filter((t) => t.destination === connectedAccountOf(owner.id).id);

describe.runIf(up)(
  'owners paid with Stripe Connect (real processes, real Postgres, the SDK against a fake)',
  () => {
    let a: TestAccount;
    let b: TestAccount;
    let c: TestAccount;
    let smb: TestAccount;
    let payg: TestAccount;
    let g1: GatewayProcess;

    beforeAll(async () => {
      stripe = await startFakeStripe({ now: () => clock ?? new Date() });
      store = await createControlPlaneSchema(`quarry_payouts_${suffix}`);
      env = {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        ...stripeEnv(stripe),
        QUARRY_ADMIN_TOKEN: ADMIN,
        QUARRY_BILLING_TICK_MS: '200',
        QUARRY_CLOSE_LEASE_MS: '3000',
      };
      g1 = await start({ QUARRY_AUTO_CLOSE: 'false' });
      stripe.setWebhookUrl(`${g1.url}/v1/billing/stripe-webhook`);
      [a, b, c, smb, payg] = (await Promise.all(
        ['owner-a', 'owner-b', 'owner-c', 'smb', 'payg'].map((label) => signUp(http, g1, label, suffix)),
      )) as [TestAccount, TestAccount, TestAccount, TestAccount, TestAccount];
      for (const [owner, name, price] of [
        [a, `a-${suffix}`, 50],
        [b, `b-${suffix}`, 10],
        [c, `c-${suffix}`, 1],
      ] as const) {
        await connectTestPostgres(http, g1, owner.key, 'pg');
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
      await Promise.allSettled(gateways.map((g) => g.stop()));
      await stripe?.close();
      await store?.drop();
    });

    it('onboards owners with Stripe Connect: an account link, then account.updated', async () => {
      for (const owner of [a, c]) {
        const res = expectStatus(
          await http.request(g1.url, 'POST', '/v1/owner/payouts/onboarding', { key: owner.key }),
          200,
          'onboarding',
        );
        expect(res.body.url).toMatch(new RegExp(`^${stripe.url}/connect/onboard/`));
        const pending = (await http.request(g1.url, 'GET', '/v1/owner/payouts/account', { key: owner.key }))
          .body;
        expect(pending).toMatchObject({ provider: 'stripe', status: 'pending', payouts_enabled: false });
        expect(pending.requirements.length).toBeGreaterThan(0);
        await stripe.completeOnboarding(connectedAccountOf(owner.id).id);
        await waitFor(
          async () =>
            (await http.request(g1.url, 'GET', '/v1/owner/payouts/account', { key: owner.key })).body,
          (v) => v.status === 'complete',
        );
      }
      // A second link reuses the owner's connected account.
      await http.request(g1.url, 'POST', '/v1/owner/payouts/onboarding', { key: a.key });
      expect(stripe.accounts().filter((x) => x.metadata?.quarry_account === a.id)).toHaveLength(1);
      expect(
        (await http.request(g1.url, 'GET', '/v1/owner/payouts/account', { key: b.key })).body.status,
      ).toBe('not_started');
    });

    it('pays what the frozen statement says, holds the rest with its reason', async () => {
      // Two months ago: the SMB caller paid then, and called A's 50-credit analytic twice and C's
      // 1-credit one three times; the Pay as you Go caller called A once and B once.
      clock = twoAgo.at;
      await buy(g1, smb.key, 'smb');
      await buy(g1, payg.key, 'payg');
      clock = undefined;
      await call(g1, smb.key, `a-${suffix}`, 2);
      await call(g1, smb.key, `c-${suffix}`, 3);
      await call(g1, payg.key, `a-${suffix}`);
      await call(g1, payg.key, `b-${suffix}`);
      await moveCalls([smb, payg], twoAgo);

      const closed = expectStatus(
        await http.request(g1.url, 'POST', `/v1/admin/periods/${twoAgo.period}/close`, { key: ADMIN }),
        200,
        'close',
      ).body;
      expect(closed.payouts).toMatchObject({ paid: 1, failed: 0, held: 2 });

      // A: 100 SMB credits (15.68 USD) + 50 Pay as you Go credits (20.00 USD): 35.68 USD, one transfer.
      const paid = (await statement(g1, a.key, twoAgo.period)).payout;
      expect(paid).toMatchObject({ earned_micro_usd: 35_680_000, payout_cents: 3_568, status: 'paid' });
      const [transfer] = transfersTo(a);
      expect(transfersTo(a)).toHaveLength(1);
      expect(transfer).toMatchObject({ id: paid.transfer_id, amount: 3_568, currency: 'usd' });
      expect(transfer!.metadata).toMatchObject({ quarry_owner: a.id, quarry_period: twoAgo.period });
      // B never onboarded: held whole. C: 0.4704 USD, under the minimum: held.
      expect((await statement(g1, b.key, twoAgo.period)).payout).toMatchObject({
        status: 'held',
        reason: 'not_onboarded',
        carried_out_micro_usd: 4_000_000,
      });
      expect((await statement(g1, c.key, twoAgo.period)).payout).toMatchObject({
        status: 'held',
        reason: 'below_minimum',
        carried_out_micro_usd: 470_400,
      });
      expect(transfersTo(c)).toHaveLength(0);
      // The Pay as you Go caller's month was invoiced by the same close.
      expect(closed.invoices).toMatchObject({ invoiced: 1, paid: 1, total_cents: 3_000 });
    });

    it('takes back the owners’ shares of a refunded payment, and nets them at the next close', async () => {
      const charge = stripe.charges().find((ch) => ch.customer === customerOf(smb.id).id)!;
      await stripe.refundCharge(charge.id);
      const pending = await statement(g1, a.key, lastMonth.period);
      const taken = await ownerShares(smb, a, twoAgo.period);
      expect(taken).toBe(15_680_000);
      expect(pending.adjustments).toEqual([
        {
          analytic: `a-${suffix}`,
          usage_period: twoAgo.period,
          reason: 'refund',
          owner_micro_usd: -taken,
          owner_usd: -15.68,
          platform_micro_usd: -3_920_000,
        },
      ]);

      // Last month: the Pay as you Go caller calls A twice more (100 credits: 40.00 USD for A).
      await call(g1, payg.key, `a-${suffix}`, 2);
      await moveCalls([payg], lastMonth);

      // The month closes by itself; the first instance to take it dies after Stripe made A's
      // transfer but before it heard so (every answer to it is lost, retries included).
      await g1.stop();
      stripe.failNextRequests(3, 'dropAfterProcessing', { method: 'POST', path: /^\/v1\/transfers$/ });
      const dying = await start({ QUARRY_CLOSE_GRACE_HOURS: '0' });
      stripe.setWebhookUrl(`${dying.url}/v1/billing/stripe-webhook`);
      // Killed while its SDK waits to retry (the transfer is made; no answer reached it).
      const deadline = Date.now() + 20_000;
      while (transfersTo(a).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      dying.child.kill('SIGKILL');
      expect(transfersTo(a)).toHaveLength(2);
      await dying.exited;
      const [g2, g3] = await Promise.all([
        start({ QUARRY_CLOSE_GRACE_HOURS: '0' }),
        start({ QUARRY_CLOSE_GRACE_HOURS: '0' }),
      ]);
      stripe.setWebhookUrl(`${g2!.url}/v1/billing/stripe-webhook`);

      const closedLast = await waitFor(
        () => statement(g2!, a.key, lastMonth.period),
        (s) => s.payout?.status === 'paid',
        30_000,
      );
      // Exactly one of the two that resumed closed it. Its "month closed" line comes after the
      // payout it made is visible (the close finishes its claim, then logs), so wait for the line.
      const closers = await waitFor(
        async () => [g2!, g3!].filter((g) => g.stdout().includes('"msg":"month closed"')),
        (found) => found.length > 0,
        10_000,
      );
      expect(closers).toHaveLength(1);

      // One transfer for last month, of exactly the payout: carried in + earned − taken back.
      const payout = closedLast.payout;
      const before = (await statement(g2!, a.key, twoAgo.period)).payout;
      expect(payout).toMatchObject({
        carried_in_micro_usd: before.carried_out_micro_usd,
        earned_micro_usd: 40_000_000,
        adjusted_micro_usd: taken,
      });
      const payable = payout.carried_in_micro_usd + 40_000_000 - taken;
      expect(payout.payout_cents).toBe(Math.floor(payable / 10_000));
      expect(payout.payout_cents).toBe(2_432);
      const transfers = transfersTo(a);
      expect(transfers).toHaveLength(2);
      expect(transfers.map((t) => t.amount).sort()).toEqual([2_432, 3_568]);
      expect(transfers.find((t) => t.metadata.quarry_period === lastMonth.period)?.id).toBe(
        payout.transfer_id,
      );
      expect(closedLast.adjustments).toHaveLength(1);

      // C's refund took back all it held: nothing to pay, nothing negative.
      expect((await statement(g3!, c.key, lastMonth.period)).payout).toMatchObject({
        carried_in_micro_usd: 470_400,
        adjusted_micro_usd: 470_400,
        payout_cents: 0,
        carried_out_micro_usd: 0,
        status: 'held',
      });
      // B is still held, its balance carried whole.
      const listed = expectStatus(
        await http.request(g3!.url, 'GET', `/v1/admin/payouts?period=${lastMonth.period}`, { key: ADMIN }),
        200,
        'admin payouts',
      ).body.payouts;
      expect(listed.find((p: { owner_id: string }) => p.owner_id === b.id)).toMatchObject({
        status: 'held',
        reason: 'not_onboarded',
        carried_out_micro_usd: 4_000_000,
      });
      expect(stripe.transfers()).toHaveLength(2);
    });
  },
);
