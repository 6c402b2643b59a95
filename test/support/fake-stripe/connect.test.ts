// Stripe Connect in the fake, driven by the real `stripe` SDK: Express-style connected accounts
// (legacy `type=express` and controller properties), account links and their onboarding page,
// `account.updated` webhooks the SDK verifies, transfers (idempotent), reversals, the balance.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';

const received: { body: string; signature: string }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({
      body: Buffer.concat(chunks).toString('utf8'),
      signature: String(req.headers['stripe-signature']),
    });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"received":true}');
  });
});
let receiverUrl = '';

let fake: FakeStripe;
let stripe: Stripe;
/** The fake's clock, moved by the tests (Unix seconds). */
let clock = Date.parse('2026-11-02T10:00:00Z') / 1000;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/stripe/webhook`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});
afterEach(async () => {
  await fake?.close();
});

async function start(webhooks = true): Promise<void> {
  clock = Date.parse('2026-11-02T10:00:00Z') / 1000;
  fake = await startFakeStripe({
    now: () => new Date(clock * 1000),
    ...(webhooks ? { webhookUrl: receiverUrl } : {}),
  });
  stripe = new Stripe('sk_test_fake_connect_1', {
    host: '127.0.0.1',
    port: fake.port,
    protocol: 'http',
    apiVersion: '2026-10-28.endive',
    maxNetworkRetries: 0,
  });
  received.length = 0;
}

/** A data owner's connected account, made the current way (controller properties). */
function owner(email = 'owner@example.com'): Promise<Stripe.Account> {
  return stripe.accounts.create({
    email,
    country: 'US',
    controller: {
      fees: { payer: 'application' },
      losses: { payments: 'application' },
      stripe_dashboard: { type: 'express' },
      requirement_collection: 'stripe',
    },
    capabilities: { transfers: { requested: true } },
    metadata: { owner_id: 'own_1' },
  });
}

function link(account: string): Promise<Stripe.AccountLink> {
  return stripe.accountLinks.create({
    account,
    type: 'account_onboarding',
    refresh_url: 'https://quarry.test/owners/onboarding/refresh',
    return_url: 'https://quarry.test/owners/onboarding/done',
    collection_options: { fields: 'eventually_due' },
  });
}

async function onboardedOwner(): Promise<Stripe.Account> {
  const made = await owner();
  await fake.completeOnboarding(made.id);
  return made;
}

describe('fake Stripe Connect through the real SDK', () => {
  it('creates Express accounts with type=express and with controller properties, not yet onboarded', async () => {
    await start(false);
    const legacy = await stripe.accounts.create({
      type: 'express',
      email: 'legacy@example.com',
      country: 'US',
      business_type: 'individual',
      capabilities: { transfers: { requested: true } },
    });
    expect(legacy).toMatchObject({
      object: 'account',
      type: 'express',
      controller: {
        fees: { payer: 'application_express' },
        losses: { payments: 'application' },
        requirement_collection: 'stripe',
        stripe_dashboard: { type: 'express' },
        type: 'application',
        is_controller: true,
      },
      business_type: 'individual',
      details_submitted: false,
      charges_enabled: false,
      payouts_enabled: false,
      capabilities: { transfers: 'inactive' },
    });
    expect(legacy.id).toMatch(/^acct_/);
    expect(legacy.requirements?.currently_due).toEqual([
      'external_account',
      'tos_acceptance.date',
      'tos_acceptance.ip',
    ]);

    const current = await owner();
    expect(current).toMatchObject({
      type: 'none',
      email: 'owner@example.com',
      country: 'US',
      metadata: { owner_id: 'own_1' },
      controller: {
        fees: { payer: 'application' },
        losses: { payments: 'application' },
        stripe_dashboard: { type: 'express' },
        requirement_collection: 'stripe',
      },
      details_submitted: false,
      payouts_enabled: false,
      capabilities: { transfers: 'inactive' },
    });
    expect(current.requirements).toMatchObject({
      currently_due: ['business_type', 'external_account', 'tos_acceptance.date', 'tos_acceptance.ip'],
      disabled_reason: 'requirements.past_due',
    });
    expect(fake.events()).toEqual([]);

    await expect(
      stripe.accounts.create({ type: 'express', controller: { stripe_dashboard: { type: 'express' } } }),
    ).rejects.toMatchObject({ statusCode: 400, param: 'controller' });
    await expect(
      stripe.accounts.create({
        controller: { stripe_dashboard: { type: 'express' }, losses: { payments: 'stripe' } },
      }),
    ).rejects.toMatchObject({ statusCode: 400, type: 'StripeInvalidRequestError' });

    const updated = await stripe.accounts.update(current.id, { metadata: { tier: 'gold' } });
    expect(updated.metadata).toEqual({ owner_id: 'own_1', tier: 'gold' });
    expect(fake.events().map((e) => [e.type, e.account, e.data.previous_attributes])).toEqual([
      ['account.updated', current.id, { metadata: { owner_id: 'own_1' } }],
    ]);
    expect((await stripe.accounts.retrieve(legacy.id)).email).toBe('legacy@example.com');
    expect((await stripe.accounts.list({ limit: 10 })).data.map((a) => a.id)).toEqual(
      expect.arrayContaining([legacy.id, current.id]),
    );
    expect(fake.accounts()).toHaveLength(2);
    await expect(stripe.accounts.retrieve('acct_nope')).rejects.toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
    });
  });

  it('onboards through the account link page: complete → return_url and a signed account.updated', async () => {
    await start();
    const made = await owner();
    const made_link = await link(made.id);
    expect(made_link).toMatchObject({ object: 'account_link', created: clock, expires_at: clock + 300 });
    expect(made_link.url).toMatch(new RegExp(`^${fake.url}/connect/onboard/[\\w-]+$`));
    expect(fake.accountLinks()).toMatchObject([
      { account: made.id, type: 'account_onboarding', collect: 'eventually_due', state: 'new' },
    ]);

    const page = await fetch(made_link.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('id="complete"');
    expect(html).toContain('tos_acceptance.date');
    const done = await fetch(`${made_link.url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('https://quarry.test/owners/onboarding/done');
    await fake.idle();

    const onboarded = await stripe.accounts.retrieve(made.id);
    expect(onboarded).toMatchObject({
      details_submitted: true,
      payouts_enabled: true,
      charges_enabled: false, // only `transfers` was requested
      capabilities: { transfers: 'active' },
      requirements: { currently_due: [], past_due: [], disabled_reason: null },
    });
    expect(onboarded.external_accounts?.data).toHaveLength(1);

    expect(received).toHaveLength(1);
    const event = stripe.webhooks.constructEvent(
      received[0]!.body,
      received[0]!.signature,
      fake.webhookSecret,
    );
    expect(event.type).toBe('account.updated');
    expect(event.account).toBe(made.id);
    expect(event.request).toEqual({ id: null, idempotency_key: null });
    if (event.type !== 'account.updated') throw new Error('unreachable');
    expect(event.data.object.payouts_enabled).toBe(true);
    expect(event.data.previous_attributes).toMatchObject({
      details_submitted: false,
      payouts_enabled: false,
      capabilities: { transfers: 'inactive' },
    });

    // Used once: opening it again sends the owner to refresh_url, as Stripe does.
    const again = await fetch(made_link.url, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('https://quarry.test/owners/onboarding/refresh');
  });

  it('sends an expired link to refresh_url, and Leave to refresh_url without onboarding', async () => {
    await start(false);
    const made = await owner();
    const first = await link(made.id);
    clock += 301;
    const expired = await fetch(first.url, { redirect: 'manual' });
    expect(expired.status).toBe(303);
    expect(expired.headers.get('location')).toBe('https://quarry.test/owners/onboarding/refresh');

    const second = await link(made.id);
    expect((await fetch(second.url)).status).toBe(200);
    const left = await fetch(`${second.url}/leave`, { method: 'POST', redirect: 'manual' });
    expect(left.headers.get('location')).toBe('https://quarry.test/owners/onboarding/refresh');
    expect((await stripe.accounts.retrieve(made.id)).details_submitted).toBe(false);
    expect(fake.events()).toEqual([]);

    await expect(
      stripe.accountLinks.create({ account: 'acct_nope', type: 'account_onboarding' }),
    ).rejects.toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'account' });
    await expect(
      stripe.accountLinks.create({ account: made.id, type: 'account_update' }),
    ).rejects.toMatchObject({ statusCode: 400, param: 'type' });
  });

  it('transfers to an onboarded account once per idempotency key; another body is refused', async () => {
    await start();
    const made = await onboardedOwner();
    const params: Stripe.TransferCreateParams = {
      amount: 12_345,
      currency: 'usd',
      destination: made.id,
      transfer_group: 'payout_2026_10',
      description: 'October earnings',
      metadata: { statement_id: 'st_1' },
    };
    const one = await stripe.transfers.create(params, { idempotencyKey: 'payout-st_1' });
    expect(one).toMatchObject({
      object: 'transfer',
      amount: 12_345,
      amount_reversed: 0,
      currency: 'usd',
      destination: made.id,
      reversed: false,
      transfer_group: 'payout_2026_10',
      metadata: { statement_id: 'st_1' },
      reversals: { object: 'list', data: [] },
    });
    expect(one.id).toMatch(/^tr_/);
    expect(one.destination_payment).toMatch(/^py_/);
    expect(one.balance_transaction).toMatch(/^txn_/);

    const two = await stripe.transfers.create(params, { idempotencyKey: 'payout-st_1' });
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    expect(two.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(fake.transfers()).toHaveLength(1);
    await expect(
      stripe.transfers.create({ ...params, amount: 1 }, { idempotencyKey: 'payout-st_1' }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);

    const balance = await stripe.balance.retrieve();
    expect(balance.available).toEqual([
      { amount: 10_000_000 - 12_345, currency: 'usd', source_types: { card: 10_000_000 - 12_345 } },
    ]);
    expect(fake.balance()).toEqual({ usd: 10_000_000 - 12_345 });

    const listed = await stripe.transfers.list({ destination: made.id, transfer_group: 'payout_2026_10' });
    expect(listed.data.map((t) => t.id)).toEqual([one.id]);
    expect((await stripe.transfers.list({ transfer_group: 'other' })).data).toEqual([]);
    const expanded = await stripe.transfers.retrieve(one.id, { expand: ['destination'] });
    expect((expanded.destination as Stripe.Account).email).toBe('owner@example.com');

    await fake.idle();
    const created = received
      .map((r) => stripe.webhooks.constructEvent(r.body, r.signature, fake.webhookSecret))
      .filter((e) => e.type === 'transfer.created');
    expect(created).toHaveLength(1);
    expect(created[0]!.account).toBeUndefined();
    expect(created[0]!.request).toEqual({ id: one.lastResponse.requestId, idempotency_key: 'payout-st_1' });
  });

  it('refuses transfers to unknown, not onboarded or restricted accounts, below 1 and past the balance', async () => {
    await start(false);
    const fresh = await owner('fresh@example.com');
    const refused = await stripe.transfers
      .create({ amount: 500, currency: 'usd', destination: fresh.id })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).toMatchObject({
      statusCode: 400,
      code: 'insufficient_capabilities_for_transfer',
      param: 'destination',
    });
    expect((refused as Error).message).toContain(
      'needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments',
    );
    await expect(
      stripe.transfers.create({ amount: 500, currency: 'usd', destination: 'acct_nope' }),
    ).rejects.toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'destination' });

    const made = await onboardedOwner();
    await expect(
      stripe.transfers.create({ amount: 0, currency: 'usd', destination: made.id }),
    ).rejects.toMatchObject({ statusCode: 400, param: 'amount' });

    fake.setBalance(999);
    const poor = await stripe.transfers
      .create({ amount: 1000, currency: 'usd', destination: made.id })
      .catch((e: unknown) => e);
    expect(poor).toMatchObject({
      statusCode: 400,
      type: 'StripeInvalidRequestError',
      code: 'balance_insufficient',
    });
    await expect(
      stripe.transfers.create({ amount: 100, currency: 'eur', destination: made.id }),
    ).rejects.toMatchObject({ code: 'balance_insufficient' });
    expect(
      (await stripe.transfers.create({ amount: 999, currency: 'usd', destination: made.id })).amount,
    ).toBe(999);

    fake.setBalance(1_000_000);
    fake.failNextTransfers(1);
    await expect(
      stripe.transfers.create({ amount: 100, currency: 'usd', destination: made.id }),
    ).rejects.toMatchObject({ statusCode: 400, code: 'transfers_not_allowed' });
    expect(
      (await stripe.transfers.create({ amount: 100, currency: 'usd', destination: made.id })).amount,
    ).toBe(100);

    await fake.requireMore(made.id, ['individual.verification.document']);
    const restricted = await stripe.accounts.retrieve(made.id);
    expect(restricted).toMatchObject({
      payouts_enabled: false,
      capabilities: { transfers: 'inactive' },
      requirements: {
        currently_due: ['individual.verification.document'],
        disabled_reason: 'requirements.past_due',
      },
    });
    expect(fake.events().at(-1)).toMatchObject({
      type: 'account.updated',
      account: made.id,
      data: { previous_attributes: { payouts_enabled: true } },
    });
    await expect(
      stripe.transfers.create({ amount: 100, currency: 'usd', destination: made.id }),
    ).rejects.toMatchObject({ code: 'insufficient_capabilities_for_transfer' });
    expect(fake.transfers()).toHaveLength(2);
  });

  it('reverses a transfer in part and in full, crediting the balance; emits transfer.reversed', async () => {
    await start(false);
    const made = await onboardedOwner();
    const sent = await stripe.transfers.create({ amount: 1000, currency: 'usd', destination: made.id });
    const part = await stripe.transfers.createReversal(sent.id, { amount: 300, metadata: { why: 'refund' } });
    expect(part).toMatchObject({
      object: 'transfer_reversal',
      amount: 300,
      currency: 'usd',
      transfer: sent.id,
      metadata: { why: 'refund' },
    });
    expect(part.id).toMatch(/^trr_/);
    expect(await stripe.transfers.retrieve(sent.id)).toMatchObject({ amount_reversed: 300, reversed: false });
    const rest = await stripe.transfers.createReversal(sent.id);
    expect(rest.amount).toBe(700);
    const after = await stripe.transfers.retrieve(sent.id);
    expect(after).toMatchObject({ amount_reversed: 1000, reversed: true });
    expect(after.reversals.data.map((r) => r.id)).toEqual([rest.id, part.id]);
    expect((await stripe.transfers.listReversals(sent.id)).data.map((r) => r.amount)).toEqual([700, 300]);
    expect((await stripe.transfers.retrieveReversal(sent.id, part.id)).amount).toBe(300);
    await expect(stripe.transfers.createReversal(sent.id, { amount: 1 })).rejects.toMatchObject({
      statusCode: 400,
      param: 'amount',
    });
    expect(fake.balance()).toEqual({ usd: 10_000_000 });
    expect(
      fake
        .events()
        .filter((e) => e.type.startsWith('transfer.'))
        .map((e) => [e.type, e.data.object.amount_reversed]),
    ).toEqual([
      ['transfer.created', 0],
      ['transfer.reversed', 300],
      ['transfer.reversed', 1000],
    ]);
  });
});
