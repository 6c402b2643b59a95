// The fake Stripe driven by the real `stripe` SDK over HTTP on loopback, and its webhooks checked
// with the SDK's own signature verification.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeStripe, startFakeStripe } from './fake-stripe.js';
import { parseForm } from './form.js';

interface Received {
  body: string;
  signature: string;
  contentType: string;
  userAgent: string;
}

/** A webhook endpoint on loopback that keeps what it got and answers `status`. */
async function startReceiver(
  status = 200,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['stripe-signature']),
        contentType: String(req.headers['content-type']),
        userAgent: String(req.headers['user-agent']),
      });
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stripe/webhook`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function sdk(fake: FakeStripe, key = 'sk_test_fake_123456789'): Stripe {
  return new Stripe(key, {
    host: '127.0.0.1',
    port: fake.port,
    protocol: 'http',
    apiVersion: '2026-10-28.endive',
    maxNetworkRetries: 2,
  });
}

/** Find-or-create by lookup key, the way the gateway sets up its prices. */
async function monthlyPrice(stripe: Stripe, lookupKey: string, unitAmount = 2900): Promise<Stripe.Price> {
  const found = await stripe.prices.list({
    lookup_keys: [lookupKey],
    active: true,
    expand: ['data.product'],
  });
  if (found.data[0]) return found.data[0];
  return stripe.prices.create({
    product_data: { name: `Quarry ${lookupKey}` },
    unit_amount: unitAmount,
    currency: 'usd',
    recurring: { interval: 'month' },
    lookup_key: lookupKey,
  });
}

let fake: FakeStripe;
let stripe: Stripe;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});
afterEach(async () => {
  await fake?.close();
});

async function start(options: Parameters<typeof startFakeStripe>[0] = {}): Promise<void> {
  fake = await startFakeStripe(options);
  stripe = sdk(fake);
  receiver.received.length = 0;
}

/** A subscribed customer: checkout in subscription mode, completed. */
async function subscribe(lookupKey = 'pro_monthly') {
  const customer = await stripe.customers.create({
    email: 'ada@example.com',
    metadata: { account_id: 'acct_1' },
  });
  const price = await monthlyPrice(stripe, lookupKey);
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    customer: customer.id,
    client_reference_id: 'acct_1',
    line_items: [{ price: price.id, quantity: 1 }],
    success_url: 'https://quarry.test/billing/done?session={CHECKOUT_SESSION_ID}',
    cancel_url: 'https://quarry.test/billing',
    subscription_data: { metadata: { account_id: 'acct_1' } },
  });
  await fake.completeCheckout(session.id);
  const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['subscription'] });
  const subscription = done.subscription as Stripe.Subscription;
  return { customer, price, session: done, subscription };
}

describe('fake Stripe through the real SDK', () => {
  it('parses Stripe form encoding: brackets, indices and empty brackets', () => {
    expect(
      parseForm(
        'metadata[account_id]=a%201&line_items[0][price]=p&line_items[0][quantity]=2&expand[]=x&expand[]=y&b=true',
      ),
    ).toEqual({
      metadata: { account_id: 'a 1' },
      line_items: [{ price: 'p', quantity: '2' }],
      expand: ['x', 'y'],
      b: 'true',
    });
  });

  it('creates customers and finds-or-creates prices by lookup key', async () => {
    await start();
    const customer = await stripe.customers.create({
      email: 'ada@example.com',
      name: 'Ada',
      metadata: { account_id: 'acct_1' },
    });
    expect(customer).toMatchObject({
      object: 'customer',
      email: 'ada@example.com',
      livemode: false,
      metadata: { account_id: 'acct_1' },
    });
    expect(customer.id).toMatch(/^cus_/);
    expect(customer.lastResponse.requestId).toMatch(/^req_/);

    const first = await monthlyPrice(stripe, 'pro_monthly');
    const again = await monthlyPrice(stripe, 'pro_monthly');
    expect(again.id).toBe(first.id);
    expect(typeof again.product === 'object' && 'name' in again.product ? again.product.name : '').toBe(
      'Quarry pro_monthly',
    );
    expect(fake.prices()).toHaveLength(1);

    const duplicate = stripe.prices.create({
      product: String(first.product),
      unit_amount: 1,
      currency: 'usd',
      lookup_key: 'pro_monthly',
    });
    await expect(duplicate).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      param: 'lookup_key',
    });
    const moved = await stripe.prices.create({
      product: String(first.product),
      unit_amount: 3900,
      currency: 'usd',
      recurring: { interval: 'month' },
      lookup_key: 'pro_monthly',
      transfer_lookup_key: true,
    });
    expect((await stripe.prices.list({ lookup_keys: ['pro_monthly'] })).data.map((p) => p.id)).toEqual([
      moved.id,
    ]);
    expect((await stripe.prices.retrieve(first.id)).lookup_key).toBeNull();

    await expect(
      stripe.customers.create({ emial: 'typo' } as Stripe.CustomerCreateParams),
    ).rejects.toMatchObject({
      statusCode: 400,
      code: 'parameter_unknown',
      param: 'emial',
    });
  });

  it('completes a subscription checkout and delivers signed webhooks the SDK verifies', async () => {
    await start({ webhookUrl: receiver.url });
    const { customer, price, session, subscription } = await subscribe();
    expect(session).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      customer: customer.id,
      client_reference_id: 'acct_1',
    });
    expect(subscription.status).toBe('active');
    expect(subscription.metadata).toEqual({ account_id: 'acct_1' });

    const retrieved = await stripe.subscriptions.retrieve(subscription.id);
    const item = retrieved.items.data[0]!;
    expect(item.price.lookup_key).toBe('pro_monthly');
    expect(item.price.id).toBe(price.id);
    expect(item.current_period_end - item.current_period_start).toBeGreaterThanOrEqual(28 * 86400);
    const invoice = await stripe.invoices.retrieve(String(retrieved.latest_invoice));
    expect(invoice).toMatchObject({
      status: 'paid',
      amount_paid: 2900,
      billing_reason: 'subscription_create',
    });
    expect(invoice.parent?.subscription_details?.subscription).toBe(subscription.id);

    const types = receiver.received.map((r) => JSON.parse(r.body).type as string);
    expect(types).toEqual([
      'customer.created',
      'product.created',
      'price.created',
      'payment_method.attached',
      'customer.subscription.created',
      'invoice.created',
      'invoice.finalized',
      'charge.succeeded',
      'invoice.paid',
      'invoice.payment_succeeded',
      'checkout.session.completed',
    ]);
    expect(fake.pendingEvents()).toEqual([]);
    expect(fake.deliveries().every((d) => d.status === 200)).toBe(true);
    for (const delivery of receiver.received) {
      expect(delivery.contentType).toBe('application/json; charset=utf-8');
      expect(delivery.userAgent).toBe('Stripe/1.0 (+https://stripe.com/docs/webhooks)');
      const event = stripe.webhooks.constructEvent(delivery.body, delivery.signature, fake.webhookSecret);
      expect(event).toMatchObject({ object: 'event', api_version: '2026-10-28.endive', livemode: false });
    }
    const completed = receiver.received.at(-1)!;
    const event = stripe.webhooks.constructEvent(completed.body, completed.signature, fake.webhookSecret);
    expect(event.type === 'checkout.session.completed' && event.data.object.subscription).toBe(
      subscription.id,
    );
    expect(() =>
      stripe.webhooks.constructEvent(
        completed.body.replace('"complete"', '"open"'),
        completed.signature,
        fake.webhookSecret,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() => stripe.webhooks.constructEvent(completed.body, completed.signature, 'whsec_other')).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect((await stripe.events.retrieve(event.id)).type).toBe('checkout.session.completed');
  });

  it('replays an idempotent POST byte for byte and refuses the key with another body', async () => {
    await start();
    const one = await stripe.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'signup-1' });
    const two = await stripe.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'signup-1' });
    expect(two.id).toBe(one.id);
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    expect(two.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(fake.customers()).toHaveLength(1);
    expect(
      fake
        .requests()
        .filter((r) => r.idempotencyKey === 'signup-1')
        .map((r) => r.replayed),
    ).toEqual([false, true]);
    await expect(
      stripe.customers.create({ email: 'b@example.com' }, { idempotencyKey: 'signup-1' }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it('answers unknown ids with 404 resource_missing and bad keys with 401', async () => {
    await start();
    const error = await stripe.customers.retrieve('cus_nope').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'id' });
    expect((error as Stripe.errors.StripeError).requestId).toMatch(/^req_/);
    await expect(sdk(fake, 'pk_test_wrong').customers.list()).rejects.toBeInstanceOf(
      Stripe.errors.StripeAuthenticationError,
    );
  });

  it('invoices items, finalizes and charges once; a declining card is a 402 and invoice.payment_failed', async () => {
    await start();
    const customer = await stripe.customers.create({ email: 'b@example.com' });
    const setup = await stripe.checkout.sessions.create({
      mode: 'setup',
      customer: customer.id,
      currency: 'usd',
      success_url: 'https://quarry.test/ok',
    });
    await fake.completeCheckout(setup.id);
    const done = await stripe.checkout.sessions.retrieve(setup.id, { expand: ['setup_intent'] });
    const intent = done.setup_intent as Stripe.SetupIntent;
    expect(done.payment_status).toBe('no_payment_required');
    expect(intent.status).toBe('succeeded');
    const methods = await stripe.customers.listPaymentMethods(customer.id, { type: 'card' });
    expect(methods.data.map((m) => m.id)).toEqual([intent.payment_method]);
    await stripe.customers.update(customer.id, {
      invoice_settings: { default_payment_method: String(intent.payment_method) },
    });

    const draft = await stripe.invoices.create({
      customer: customer.id,
      collection_method: 'charge_automatically',
      auto_advance: false,
      pending_invoice_items_behavior: 'exclude',
      metadata: { statement: '2026-11' },
    });
    await stripe.invoiceItems.create({
      customer: customer.id,
      invoice: draft.id,
      amount: 1250,
      currency: 'usd',
      description: 'Queries',
      metadata: { kind: 'usage' },
    });
    await stripe.invoiceItems.create({
      customer: customer.id,
      invoice: draft.id,
      amount: 750,
      currency: 'usd',
      description: 'Data',
    });
    const open = await stripe.invoices.finalizeInvoice(draft.id);
    expect(open).toMatchObject({ status: 'open', amount_due: 2000 });
    expect(open.number).toMatch(/^[A-Z0-9]{8}-0001$/);
    expect(open.lines.data.map((l) => [l.amount, l.description])).toEqual([
      [1250, 'Queries'],
      [750, 'Data'],
    ]);
    const paid = await stripe.invoices.pay(open.id);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 2000, amount_remaining: 0 });
    await expect(stripe.invoices.pay(open.id)).rejects.toMatchObject({ statusCode: 400 });
    expect(fake.charges().filter((c) => c.status === 'succeeded')).toHaveLength(1);
    const payments = await stripe.invoicePayments.list({ invoice: open.id });
    const charge = await stripe.charges.retrieve(String(payments.data[0]!.payment.charge));
    expect(charge).toMatchObject({
      amount: 2000,
      customer: customer.id,
      amount_refunded: 0,
      refunded: false,
    });

    fake.setCardDeclines(customer.id, true);
    const second = await stripe.invoices.create({ customer: customer.id });
    await stripe.invoiceItems.create({
      customer: customer.id,
      invoice: second.id,
      amount: 500,
      currency: 'usd',
    });
    await stripe.invoices.finalizeInvoice(second.id);
    const declined = await stripe.invoices.pay(second.id).catch((e: unknown) => e);
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(declined).toMatchObject({
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'generic_decline',
    });
    expect((await stripe.invoices.retrieve(second.id)).status).toBe('open');
    expect(
      fake
        .events()
        .filter((e) => e.type === 'invoice.payment_failed')
        .map((e) => e.data.object.id),
    ).toEqual([second.id]);
    expect(fake.events().find((e) => e.type === 'invoice.payment_failed')?.request.id).toMatch(/^req_/);
  });

  it('renews a subscription paid or failed (past_due), cancels, changes price, refunds and disputes', async () => {
    const unix = (iso: string) => Date.parse(iso) / 1000;
    await start({ now: () => new Date('2026-01-31T12:00:00Z') });
    const { subscription } = await subscribe();
    expect(subscription.created).toBe(unix('2026-01-31T12:00:00Z'));
    const before = subscription.items.data[0]!.current_period_end;
    expect(before).toBe(unix('2026-02-28T12:00:00Z'));
    await fake.renewSubscription(subscription.id, 'paid');
    const renewed = await stripe.subscriptions.retrieve(subscription.id);
    expect(renewed.items.data[0]!.current_period_start).toBe(before);
    expect(renewed.items.data[0]!.current_period_end).toBe(unix('2026-03-31T12:00:00Z'));
    expect(renewed.status).toBe('active');

    await fake.renewSubscription(subscription.id, 'failed');
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('past_due');
    const updated = fake
      .events()
      .filter((e) => e.type === 'customer.subscription.updated')
      .at(-1)!;
    expect(updated.data.previous_attributes).toMatchObject({ status: 'active' });
    expect(fake.events().filter((e) => e.type === 'invoice.payment_failed')).toHaveLength(1);

    const team = await monthlyPrice(stripe, 'team_monthly', 9900);
    await fake.changeSubscriptionPrice(subscription.id, team.id);
    expect((await stripe.subscriptions.retrieve(subscription.id)).items.data[0]!.price.lookup_key).toBe(
      'team_monthly',
    );
    await fake.cancelSubscription(subscription.id, { atPeriodEnd: true });
    expect((await stripe.subscriptions.retrieve(subscription.id)).cancel_at_period_end).toBe(true);
    const canceled = await stripe.subscriptions.cancel(subscription.id);
    expect(canceled.status).toBe('canceled');
    expect(fake.events().at(-1)!.type).toBe('customer.subscription.deleted');
    expect(
      (await stripe.subscriptions.list({ customer: subscription.customer as string, status: 'all' })).data,
    ).toHaveLength(1);

    const charge = fake.charges().find((c) => c.status === 'succeeded')!;
    await fake.refundCharge(charge.id);
    expect(await stripe.charges.retrieve(charge.id)).toMatchObject({ refunded: true, amount_refunded: 2900 });
    expect(
      fake
        .events()
        .filter((e) => e.type === 'charge.refunded')
        .map((e) => e.data.object.id),
    ).toEqual([charge.id]);
    await expect(stripe.refunds.create({ charge: charge.id })).rejects.toMatchObject({
      code: 'charge_already_refunded',
    });
    const other = fake.charges().filter((c) => c.status === 'succeeded')[1]!;
    const partial = await stripe.refunds.create({ charge: other.id, amount: 100 });
    expect(partial).toMatchObject({ object: 'refund', amount: 100, status: 'succeeded' });
    await fake.disputeCharge(other.id);
    expect(fake.events().at(-1)!.type).toBe('charge.dispute.created');
  });

  it('updates subscriptions through the API as Stripe does: items by id, additions, cancellation', async () => {
    await start();
    const { subscription } = await subscribe();
    const created = fake.events().find((e) => e.type === 'customer.subscription.created')!;
    expect(created.data.object.latest_invoice).toMatch(/^in_/);
    expect(created.data.previous_attributes).toBeUndefined();
    const team = await monthlyPrice(stripe, 'team_monthly', 9900);
    const item = subscription.items.data[0]!;
    const changed = await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item.id, price: team.id }],
      proration_behavior: 'none',
      metadata: { plan: 'team' },
    });
    expect(changed.items.data.map((i) => [i.id, i.price.lookup_key])).toEqual([[item.id, 'team_monthly']]);
    expect(changed.metadata).toEqual({ account_id: 'acct_1', plan: 'team' });
    const event = fake.events().at(-1)!;
    expect(event.type).toBe('customer.subscription.updated');
    expect(event.request.id).toBe(changed.lastResponse.requestId);
    expect(Object.keys(event.data.previous_attributes ?? {}).sort()).toEqual(['items', 'metadata']);
    await expect(
      stripe.subscriptions.update(subscription.id, { items: [{ price: team.id }] }),
    ).rejects.toMatchObject({
      statusCode: 400,
    });
    await expect(stripe.subscriptions.retrieve(subscription.id, { expand: ['nope'] })).rejects.toMatchObject({
      statusCode: 400,
    });
    const ending = await stripe.subscriptions.update(subscription.id, { cancel_at_period_end: true });
    expect(ending.cancel_at).toBe(item.current_period_end);
    await stripe.subscriptions.cancel(subscription.id);
    await expect(stripe.subscriptions.cancel(subscription.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('holds events for delivery in any order and redelivers with the same id', async () => {
    await start();
    const customer = await stripe.customers.create({ email: 'c@example.com' });
    const price = await monthlyPrice(stripe, 'pro_monthly');
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer: customer.id,
      line_items: [{ price: price.id, quantity: 1 }],
      success_url: 'https://quarry.test/ok',
    });
    await fake.declineCheckout(session.id);
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe('open');
    await fake.expireCheckout(session.id);
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe('expired');
    expect(fake.subscriptions()).toEqual([]);

    const held = fake.pendingEvents();
    expect(held.map((e) => e.type)).toEqual([
      'customer.created',
      'product.created',
      'price.created',
      'checkout.session.expired',
    ]);
    fake.setWebhookUrl(receiver.url);
    const ids = held.map((e) => e.id).reverse();
    const responses = await fake.deliver(ids);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(receiver.received.map((r) => JSON.parse(r.body).id)).toEqual(ids);
    expect(fake.pendingEvents()).toEqual([]);

    const again = await fake.redeliver(ids[0]!);
    expect(again.status).toBe(200);
    const last = receiver.received.at(-1)!;
    expect(stripe.webhooks.constructEvent(last.body, last.signature, fake.webhookSecret).id).toBe(ids[0]);
  });

  it('delivers events caused by API calls after the call, records what the endpoint answered', async () => {
    const failing = await startReceiver(500);
    try {
      await start({ webhookUrl: failing.url });
      const customer = await stripe.customers.create({ email: 'f@example.com' }, { idempotencyKey: 'k-f' });
      await fake.idle();
      const [delivery] = fake.deliveries();
      expect(delivery).toMatchObject({ status: 500 });
      const event = fake.events().find((e) => e.id === delivery!.eventId)!;
      expect(event).toMatchObject({
        type: 'customer.created',
        pending_webhooks: 1,
        request: { idempotency_key: 'k-f' },
      });
      expect(event.data.object.id).toBe(customer.id);
      expect(failing.received).toHaveLength(1);

      const invoice = await stripe.invoices.create({ customer: customer.id });
      await stripe.invoiceItems.create({
        customer: customer.id,
        invoice: invoice.id,
        amount: 100,
        currency: 'usd',
      });
      await expect(stripe.invoices.pay(invoice.id)).rejects.toMatchObject({ statusCode: 400 });
      expect((await stripe.paymentMethods.list({ customer: customer.id, type: 'card' })).data).toEqual([]);

      const price = await stripe.prices.create({
        product_data: { name: 'Dataset' },
        unit_amount: 5000,
        currency: 'usd',
      });
      const session = await stripe.checkout.sessions.create({
        mode: 'payment',
        customer: customer.id,
        line_items: [{ price: price.id, quantity: 2 }],
        success_url: 'https://quarry.test/ok',
      });
      expect(session.amount_total).toBe(10000);
      await fake.completeCheckout(session.id);
      expect((await stripe.checkout.sessions.retrieve(session.id)).payment_status).toBe('paid');
      expect(fake.charges().map((c) => [c.amount, c.status])).toEqual([[10000, 'succeeded']]);
      expect(fake.pendingEvents()).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  it('serves a checkout page whose Pay button redirects to success_url with the session id', async () => {
    await start();
    const price = await monthlyPrice(stripe, 'pro_monthly');
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: price.id, quantity: 1 }],
      customer_email: 'd@example.com',
      success_url: 'https://quarry.test/done?session={CHECKOUT_SESSION_ID}',
    });
    expect(session.url).toBe(`${fake.url}/checkout/pay/${session.id}`);
    expect(await (await fetch(session.url!)).text()).toContain('id="pay"');
    const paid = await fetch(`${session.url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`https://quarry.test/done?session=${session.id}`);
    const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['customer'] });
    expect((done.customer as Stripe.Customer).email).toBe('d@example.com');
    const portal = await stripe.billingPortal.sessions.create({
      customer: (done.customer as Stripe.Customer).id,
      return_url: 'https://quarry.test/account',
    });
    expect(await (await fetch(portal.url)).text()).toContain('pro_monthly');
  });

  it('lets the SDK retry a 500 and a dropped answer; the retry replays the stored result', async () => {
    await start();
    fake.failNextRequests(1, 'error500');
    fake.failNextRequests(1, 'dropAfterProcessing');
    const customer = await stripe.customers.create({ email: 'e@example.com' });
    expect(fake.customers().map((c) => c.id)).toEqual([customer.id]);
    const attempts = fake.requests().filter((r) => r.path === '/v1/customers');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.idempotencyKey)).size).toBe(1);
    expect(attempts.map((a) => [a.status, a.replayed])).toEqual([
      [500, false],
      [200, false],
      [200, true],
    ]);
  });
});
