// Deleting an account (DELETE /v1/account; docs/money.md, "Deleting an account"), end to end on
// real processes: two gateway instances with QUARRY_PAYMENTS=stripe over one schema of the real
// PostgreSQL, the Stripe SDK against the protocol fake.
//   - an owner (with a console password) sells a 5-credit analytic; an SMB subscriber and a Pay as
//     you Go caller call it. The owner cannot delete without its email typed back and its password,
//     nor while its earnings could not reach it (payouts not set up);
//   - once onboarded it deletes, while the Pay as you Go caller keeps calling: every call answered
//     200 left exactly one usage event, the others were refused and charged nothing. Its keys, its
//     OAuth token and its try-token stop on both instances; its listing and analytic answer 404
//     to everyone, and its name stays reserved; its connection's credentials and its password are
//     gone; its email signs up again as a new account;
//   - the SMB subscriber (an API account without a password) deletes with a key: its Stripe
//     subscription is cancelled; the Pay as you Go caller deletes too;
//   - the month closes: the deleted Pay as you Go caller is invoiced and charged for every credit it
//     spent, and the deleted owner is paid its whole share by one transfer, though it is below the
//     minimum payout (its last payout).
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
  issueKey,
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
const SOURCE = `sold-${suffix}`;
const OWNER_EMAIL = `owner-${suffix}@deletion.quarry.test`;
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

const http = createHttpClient();
let store: ControlPlaneSchema;
let stripe: FakeStripe;
let g1: GatewayProcess;
let g2: GatewayProcess;

const { buy, customerOf, subscriptionOf, connectedAccountOf } = paymentsFixture(http, () => stripe);

const query = (g: GatewayProcess, key: string, source = SOURCE): Promise<HttpResponse> =>
  http.request(g.url, 'POST', '/v1/query', { key, json: { source, params: {} } });
const remove = (g: GatewayProcess, key: string, json: unknown): Promise<HttpResponse> =>
  http.request(g.url, 'DELETE', '/v1/account', { key, json });
const one = async <T>(sql: string, params: readonly unknown[]): Promise<T> =>
  withPg(async (c) => (await c.query(sql, [...params])).rows[0] as T);

describe.runIf(up)('deleting an account (two instances, real Postgres, Stripe through the fake)', () => {
  let owner: TestAccount;
  let ownerSecondKey: string;
  let oauthToken: string;
  let tryToken: string;
  let smb: TestAccount;
  let payg: TestAccount;
  let paygCalls = 0;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    store = await createControlPlaneSchema(`quarry_deletion_${suffix}`);
    [g1, g2] = (await startGateways(2, {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      ...stripeEnv(stripe),
      QUARRY_ADMIN_TOKEN: ADMIN,
      QUARRY_AUTO_CLOSE: 'false',
      QUARRY_BILLING_TICK_MS: '250',
      // Far above what the owner earns here: its last payout is paid below it.
      QUARRY_MIN_PAYOUT_CENTS: '100000',
    })) as [GatewayProcess, GatewayProcess];
    stripe.setWebhookUrl(`${g1.url}/v1/billing/stripe-webhook`);

    // The owner signs up in a browser's way: with a password.
    const signed = expectStatus(
      await http.request(g1.url, 'POST', '/v1/accounts', {
        json: { email: OWNER_EMAIL, name: 'Owner', password: PASSWORD },
        headers: { origin: g1.url },
      }),
      201,
      'owner sign-up',
    );
    owner = { id: signed.body.account.id, key: signed.body.key.secret, keyId: signed.body.key.id };
    ownerSecondKey = (await issueKey(http, g1, owner.key, 'second')).secret;
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: SOURCE,
      connection: 'pg',
      sql: 'SELECT 5 AS price',
      visibility: 'public',
      price: 5,
    });
    expectStatus(
      await http.request(g1.url, 'PUT', `/v1/owner/analytics/${SOURCE}/listing`, {
        key: owner.key,
        json: { category: 'test', description: 'Sold by an owner who leaves.' },
      }),
      200,
      'publish',
    );
    const client = expectStatus(
      await http.request(g1.url, 'POST', '/v1/oauth/clients', {
        key: owner.key,
        json: { name: 'robot', scopes: ['query'] },
      }),
      201,
      'oauth client',
    ).body;
    oauthToken = expectStatus(
      await http.request(g1.url, 'POST', '/oauth/token', {
        raw: 'grant_type=client_credentials',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
      }),
      200,
      'token',
    ).body.access_token;
    // A webhook endpoint (nothing listens there: its deliveries stay pending until the deletion).
    const hook = expectStatus(
      await http.request(g1.url, 'POST', '/v1/webhooks', {
        key: owner.key,
        json: { url: 'http://127.0.0.1:9/hook', description: 'ends with the account' },
      }),
      201,
      'webhook endpoint',
    ).body;
    expectStatus(
      await http.request(g1.url, 'POST', `/v1/webhooks/${hook.endpoint.id}/test`, { key: owner.key }),
      202,
      'webhook test event',
    );
    tryToken = expectStatus(
      await http.request(g1.url, 'POST', '/v1/marketplace/try-token', {
        key: owner.key,
        json: { source: SOURCE },
      }),
      201,
      'try-token',
    ).body.token;

    smb = await signUp(http, g1, 'smb', suffix);
    payg = await signUp(http, g1, 'payg', suffix);
    await buy(g1, smb.key, 'smb');
    await buy(g1, payg.key, 'payg');
    for (let i = 0; i < 2; i++) expectStatus(await query(g1, smb.key), 200, 'smb call');
    for (let i = 0; i < 2; i++) expectStatus(await query(g2, payg.key), 200, 'payg call');
    paygCalls = 2;
    expectStatus(await query(g1, oauthToken), 200, 'oauth call');
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled([g1?.stop(), g2?.stop()]);
    await stripe?.close();
    await store?.drop();
  });

  it('asks for the email typed back and the password, whatever the credential', async () => {
    const noConfirm = expectStatus(
      await remove(g1, owner.key, { confirm: 'someone@else.test' }),
      400,
      'bad confirm',
    );
    expect(noConfirm.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: [{ field: 'confirm' }] });
    const noPassword = expectStatus(
      await remove(g1, owner.key, { confirm: OWNER_EMAIL }),
      403,
      'no password',
    );
    expect(noPassword.body.error.details).toEqual([{ field: 'password', message: 'required' }]);
    expectStatus(
      await remove(g1, owner.key, { confirm: OWNER_EMAIL, password: 'not-the-password' }),
      403,
      'wrong password',
    );
    expectStatus(
      await remove(g1, tryToken, { confirm: OWNER_EMAIL, password: PASSWORD }),
      403,
      'a try-token deletes nothing',
    );
    // Nothing changed.
    expectStatus(await query(g2, owner.key), 200, 'owner still calls');
  });

  it('throttles wrong passwords like failed logins, so a stolen key cannot guess the password', async () => {
    const email = `guessed-${suffix}@deletion.quarry.test`;
    const victim = expectStatus(
      await http.request(g1.url, 'POST', '/v1/accounts', {
        json: { email, name: 'Guessed', password: PASSWORD },
        headers: { origin: g1.url },
      }),
      201,
      'sign-up',
    ).body;
    const key = victim.key.secret as string;
    // Ten wrong guesses (LOGIN_FAILURES_PER_ACCOUNT), through deletion and the email change alike.
    for (let i = 0; i < 5; i++) {
      expectStatus(await remove(g1, key, { confirm: email, password: `guess-${i}` }), 403, `guess ${i}`);
      expectStatus(
        await http.request(g1.url, 'PATCH', '/v1/account', {
          key,
          json: { email: `moved-${i}-${suffix}@deletion.quarry.test`, current_password: `other-${i}` },
        }),
        403,
        `email guess ${i}`,
      );
    }
    // Then even the right password waits: the guesses are over. (These gateways share no Redis, so
    // the count is this instance's; with Redis it holds across the fleet, as failed logins do.)
    const locked = expectStatus(await remove(g1, key, { confirm: email, password: PASSWORD }), 429, 'locked');
    expect(locked.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(locked.body.error.retry_after).toBeGreaterThan(0);
    expectStatus(await http.request(g1.url, 'GET', '/v1/account', { key }), 200, 'the account is whole');
  });

  it('refuses while the owner has earnings its payouts could not reach, then deletes once onboarded', async () => {
    const refused = expectStatus(
      await remove(g1, owner.key, { confirm: OWNER_EMAIL.toUpperCase(), password: PASSWORD }),
      409,
      'payouts not set up',
    );
    expect(refused.body.error.message).toMatch(
      /USD of earnings not paid out yet, and payouts are not set up/,
    );
    expectStatus(
      await http.request(g1.url, 'POST', '/v1/owner/payouts/onboarding', { key: owner.key }),
      200,
      'onboarding',
    );
    await stripe.completeOnboarding(connectedAccountOf(owner.id).id);
    await waitFor(
      async () => (await http.request(g1.url, 'GET', '/v1/owner/payouts/account', { key: owner.key })).body,
      (v) => v.status === 'complete',
    );

    // The Pay as you Go caller keeps calling while the owner deletes, on the other instance.
    let calling = true;
    const answers: HttpResponse[] = [];
    const caller = (async () => {
      // Paced, so the month's budget (100 USD: 40 calls) is never the reason for a refusal.
      while (calling) {
        answers.push(await query(g2, payg.key));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await new Promise((r) => setTimeout(r, 150));
    const deleted = expectStatus(
      await remove(g1, owner.key, { confirm: OWNER_EMAIL, password: PASSWORD }),
      200,
      'delete',
    ).body.deleted;
    await new Promise((r) => setTimeout(r, 2_500));
    calling = false;
    await caller;
    expect(deleted).toMatchObject({
      account_id: owner.id,
      keys_revoked: 2,
      oauth_clients_revoked: 1,
      listings_unpublished: [SOURCE],
      analytics_deleted: [SOURCE],
      connections_deleted: 1,
      subscription_cancelled: false,
    });
    // 2 SMB calls (4 µUSD-exact: 5 credits × 0.196 × 80%) + Pay as you Go calls so far (5 × 0.50 × 80%).
    expect(deleted.unpaid_earnings_usd).toBeGreaterThan(0);

    // Every call either served (and then in the ledger once) or refused as not found (never charged).
    const statuses = new Set(answers.map((a) => a.status));
    expect(
      [...statuses].every((s) => s === 200 || s === 404),
      JSON.stringify([...statuses]),
    ).toBe(true);
    expect(answers.at(-1)?.status).toBe(404);
    expect(answers.at(-1)?.body.error.code).toBe('SOURCE_NOT_FOUND');
    paygCalls += answers.filter((a) => a.status === 200).length;
    const events = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${store.schema}.usage_events WHERE account_id = $1 AND status = 'ok'`,
      [payg.id],
    );
    expect(events.n).toBe(paygCalls);
  });

  it('ends every credential of the deleted account on both instances, and its analytic for everyone', async () => {
    for (const g of [g1, g2]) {
      for (const credential of [owner.key, ownerSecondKey, oauthToken, tryToken]) {
        const res = await waitFor(
          () => http.request(g.url, 'GET', '/v1/account', { key: credential }),
          (r) => r.status === 401,
          5_000,
        );
        expect(res.body.error.code).toBe('UNAUTHENTICATED');
      }
      expectStatus(await query(g, smb.key), 404, 'the analytic answers no one');
      expectStatus(
        await http.request(g.url, 'GET', `/v1/marketplace/listings/${SOURCE}`),
        404,
        'the listing is gone',
      );
    }
    const listed = (await http.request(g1.url, 'GET', '/v1/marketplace/listings')).body;
    expect(JSON.stringify(listed)).not.toContain(SOURCE);
    // The owner's warehouse credentials and password are not kept.
    const connection = await one<{ secrets: Buffer | null; deleted: boolean }>(
      `SELECT secrets, deleted_at IS NOT NULL AS deleted FROM ${store.schema}.connections WHERE account_id = $1`,
      [owner.id],
    );
    expect(connection).toEqual({ secrets: null, deleted: true });
    const passwords = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${store.schema}.account_passwords WHERE account_id = $1`,
      [owner.id],
    );
    expect(passwords.n).toBe(0);
    // Nothing more is sent on its behalf: its webhook endpoints are deleted, none left pending.
    const hooks = await one<{ live: number; pending: number }>(
      `SELECT count(*) FILTER (WHERE w.deleted_at IS NULL)::int AS live,
              (SELECT count(*)::int FROM ${store.schema}.webhook_deliveries d
                 JOIN ${store.schema}.webhook_endpoints e ON e.id = d.endpoint_id
                WHERE e.account_id = $1 AND d.status = 'pending') AS pending
         FROM ${store.schema}.webhook_endpoints w WHERE w.account_id = $1`,
      [owner.id],
    );
    expect(hooks).toEqual({ live: 0, pending: 0 });
    // A console login with the old email and password is refused.
    expectStatus(
      await http.request(g2.url, 'POST', '/v1/session', {
        json: { email: OWNER_EMAIL, password: PASSWORD },
        headers: { origin: g2.url },
      }),
      401,
      'login',
    );
  });

  it('frees the email for a new account, which cannot take the deleted analytic name', async () => {
    const again = expectStatus(
      await http.request(g2.url, 'POST', '/v1/accounts', { json: { email: OWNER_EMAIL, name: 'Again' } }),
      201,
      'sign up again',
    ).body;
    expect(again.account.id).not.toBe(owner.id);
    await connectTestPostgres(http, g2, again.key.secret, 'pg');
    const taken = await http.request(g2.url, 'POST', '/v1/owner/analytics', {
      key: again.key.secret,
      json: { name: SOURCE, connection: 'pg', sql: 'SELECT 1 AS one', visibility: 'public', price: 1 },
    });
    expect(taken.status, taken.text).toBe(409);
    const kept = await one<{ closed_email: string; email: string; closed: boolean }>(
      `SELECT closed_email, email, closed_at IS NOT NULL AS closed FROM ${store.schema}.accounts WHERE id = $1`,
      [owner.id],
    );
    expect(kept).toEqual({ closed_email: OWNER_EMAIL, email: `closed:${owner.id}`, closed: true });
  });

  it('cancels a subscription at Stripe when an API account (no password) deletes with its key', async () => {
    expect(subscriptionOf(smb.id).status).toBe('active');
    const { email } = (await http.request(g1.url, 'GET', '/v1/account', { key: smb.key })).body.account;
    const deleted = expectStatus(await remove(g2, smb.key, { confirm: email }), 200, 'smb deletes').body
      .deleted;
    expect(deleted).toMatchObject({
      subscription_cancelled: true,
      keys_revoked: 1,
      listings_unpublished: [],
    });
    expect(subscriptionOf(smb.id).status).toBe('canceled');
    // The Pay as you Go caller deletes too: its card stays on file for the month's invoice.
    const paygEmail = (await http.request(g1.url, 'GET', '/v1/account', { key: payg.key })).body.account
      .email;
    expect(
      expectStatus(await remove(g1, payg.key, { confirm: paygEmail }), 200, 'payg deletes').body.deleted,
    ).toMatchObject({ subscription_cancelled: false, keys_revoked: 1 });
    expectStatus(await query(g1, payg.key), 401, 'the deleted caller is refused');
  });

  it('invoices the deleted Pay as you Go caller and pays the deleted owner at the close, below the minimum', async () => {
    const now = new Date();
    const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    const period = last.toISOString().slice(0, 7);
    await withPg((c) =>
      c.query(
        `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3
          WHERE account_id = ANY ($1::text[])`,
        [[smb.id, payg.id, owner.id], period, last],
      ),
    );
    await rebuildLedgerRollups(store.schema);
    const closed = expectStatus(
      await http.request(g2.url, 'POST', `/v1/admin/periods/${period}/close`, { key: ADMIN }),
      200,
      'close',
    ).body;
    // Pay as you Go: 5 credits a call at 0.50 USD, every served call.
    const dueCents = paygCalls * 250;
    expect(closed.invoices).toMatchObject({ invoiced: 1, paid: 1, total_cents: dueCents });
    const invoices = stripe.invoices().filter((i) => i.customer === customerOf(payg.id).id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: 'paid', amount_paid: dueCents });

    // The owner's share: 80% of every paid call's value, to the µUSD, paid whole though under the 1,000 USD minimum.
    const shares = await one<{ musd: string }>(
      `SELECT coalesce(sum(owner_musd), 0)::bigint AS musd FROM ${store.schema}.usage_events
        WHERE owner_id = $1 AND period = $2 AND origin = 'paid'`,
      [owner.id, period],
    );
    const earned = Number(shares.musd);
    expect(earned).toBeGreaterThan(0);
    expect(earned).toBeLessThan(100_000 * 10_000);
    const payout = await one<{ status: string; payout_cents: number; carried_out_musd: string }>(
      `SELECT status, payout_cents::int AS payout_cents, carried_out_musd FROM ${store.schema}.owner_payouts
        WHERE owner_id = $1 AND period = $2`,
      [owner.id, period],
    );
    expect(payout).toMatchObject({ status: 'paid', payout_cents: Math.floor(earned / 10_000) });
    expect(Number(payout.carried_out_musd)).toBe(earned % 10_000);
    const transfers = stripe.transfers().filter((t) => t.destination === connectedAccountOf(owner.id).id);
    expect(transfers.map((t) => t.amount)).toEqual([Math.floor(earned / 10_000)]);
  });
});
