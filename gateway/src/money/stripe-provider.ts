// The Stripe payment provider (QUARRY_PAYMENTS=stripe), on the official SDK with a pinned API
// version: Checkout in subscription mode for a plan and in setup mode for a card (Pay as you Go),
// the customer portal, verified webhooks read back from the API (so events apply in any order),
// and Pay as you Go invoices charged to the card on file. Every write carries an idempotency key
// derived from what it is for, so a retry, a second close or a second instance never pays twice.
// Prices are found by lookup key (`quarry_<plan>_<cents>_usd_month`) or created once, unless
// QUARRY_STRIPE_PRICES names them.
import Stripe from 'stripe';
import type {
  Checkout,
  CheckoutRequest,
  InvoiceOutcome,
  InvoiceRequest,
  PaymentFact,
  PaymentProvider,
  ProviderEvent,
  SubscriptionState,
} from './payment-provider.js';
import { type ConnectedAccountState, PaymentSignatureError, TransferFailure } from './payment-provider.js';
import type { Plan, PlanCatalog } from './plan-catalog.js';

/** The API version every request is sent with (the SDK's own, pinned with the SDK's version). */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export interface StripeProviderOptions {
  readonly secretKey: string;
  readonly webhookSecret: string;
  /**
   * STRIPE_CONNECT_WEBHOOK_SECRET: the signing secret of a Connect endpoint (events of connected
   * accounts, `account.updated`) at the same URL, which Stripe signs with a secret of its own.
   */
  readonly connectWebhookSecret?: string;
  /** QUARRY_STRIPE_API_BASE: another API address (a protocol fake in tests). */
  readonly apiBase?: string;
  /** QUARRY_STRIPE_PRICES: plan id → Stripe price id, instead of lookup keys. */
  readonly prices?: Readonly<Record<string, string>>;
  readonly plans: PlanCatalog;
}

/** The lookup key of a plan's monthly price: a new one when the plan's price changes. */
export const priceLookupKey = (plan: Plan): string =>
  `quarry_${plan.id}_${plan.monthly_price_cents}_usd_month`;

const LOOKUP_KEY = /^quarry_([a-z][a-z0-9_-]{0,31})_\d+_usd_month$/;

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : value.id;

function isMissing(error: unknown): boolean {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404;
}

export function createStripeProvider(options: StripeProviderOptions): PaymentProvider {
  const base = options.apiBase === undefined ? undefined : new URL(options.apiBase);
  const stripe = new Stripe(options.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'Quarry' },
    ...(base === undefined
      ? {}
      : {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }),
  });
  const planOfPrice = new Map(Object.entries(options.prices ?? {}).map(([plan, price]) => [price, plan]));
  const priceIds = new Map<string, Promise<string>>();

  /** The price of `plan`: named by configuration, found by lookup key, or created once. */
  function priceFor(plan: Plan): Promise<string> {
    const named = options.prices?.[plan.id];
    if (named !== undefined) return Promise.resolve(named);
    const key = priceLookupKey(plan);
    let found = priceIds.get(key);
    if (found === undefined) {
      found = (async () => {
        const existing = await stripe.prices.list({ lookup_keys: [key], active: true, limit: 1 });
        const price = existing.data[0];
        if (price !== undefined) return price.id;
        const product = await stripe.products.create(
          { name: `Quarry ${plan.name}`, metadata: { quarry_plan: plan.id } },
          { idempotencyKey: `quarry-product-${key}` },
        );
        const created = await stripe.prices.create(
          {
            product: product.id,
            unit_amount: plan.monthly_price_cents,
            currency: 'usd',
            recurring: { interval: 'month' },
            lookup_key: key,
            metadata: { quarry_plan: plan.id },
          },
          { idempotencyKey: `quarry-price-${key}` },
        );
        return created.id;
      })();
      priceIds.set(key, found);
      // A failure is not remembered: the next checkout asks again.
      found.catch(() => priceIds.delete(key));
    }
    return found;
  }

  function planOf(price: Stripe.Price | undefined): string | undefined {
    if (price === undefined) return undefined;
    const byConfig = planOfPrice.get(price.id);
    if (byConfig !== undefined) return byConfig;
    const match = price.lookup_key === null ? null : LOOKUP_KEY.exec(price.lookup_key);
    return match?.[1] ?? price.metadata?.quarry_plan;
  }

  function stateOf(sub: Stripe.Subscription): SubscriptionState {
    const item = sub.items.data[0];
    return {
      id: sub.id,
      customerId: idOf(sub.customer) ?? '',
      planId: planOf(item?.price),
      status: sub.status,
      currentPeriodEnd: new Date((item?.current_period_end ?? sub.created) * 1000),
      cancelAtPeriodEnd: sub.cancel_at_period_end,
    };
  }

  /** The subscription as it is now; null when Stripe no longer has it. */
  async function subscription(id: string): Promise<SubscriptionState | null> {
    try {
      return stateOf(await stripe.subscriptions.retrieve(id));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** The subscription an invoice is for, if any. */
  function subscriptionOfInvoice(invoice: Stripe.Invoice): string | null {
    const legacy = (invoice as { subscription?: string | { id: string } | null }).subscription;
    return idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(legacy);
  }

  /**
   * The invoice a charge paid, if any. The API's charges no longer name it: a card payment's
   * PaymentIntent finds its invoice payment; a charge without one is looked for among the
   * customer's latest invoices' payments.
   */
  async function invoiceOfCharge(charge: Stripe.Charge): Promise<Stripe.Invoice | null> {
    const intent = idOf(charge.payment_intent);
    if (intent !== null) {
      const payments = await stripe.invoicePayments.list({
        payment: { type: 'payment_intent', payment_intent: intent },
        limit: 1,
      });
      const invoiceId = idOf(payments.data[0]?.invoice as string | { id: string } | undefined);
      return invoiceId === null ? null : stripe.invoices.retrieve(invoiceId);
    }
    const customer = idOf(charge.customer);
    if (customer === null) return null;
    const invoices = await stripe.invoices.list({ customer, limit: 12 });
    for (const invoice of invoices.data) {
      if (invoice.id === undefined) continue;
      const payments = await stripe.invoicePayments.list({ invoice: invoice.id, limit: 10 });
      if (payments.data.some((p) => idOf(p.payment.charge) === charge.id)) return invoice;
    }
    return null;
  }

  async function reversal(
    kind: 'refund' | 'dispute',
    reference: string,
    chargeOrId: string | Stripe.Charge,
    amountCents: number,
  ): Promise<PaymentFact[]> {
    const charge = typeof chargeOrId === 'string' ? await stripe.charges.retrieve(chargeOrId) : chargeOrId;
    const customerId = idOf(charge.customer);
    if (customerId === null) return [];
    const invoice = await invoiceOfCharge(charge);
    // The calls it paid for: a Pay as you Go invoice names its period; a subscription's payment
    // pays for the month it was made in.
    const usagePeriod =
      invoice?.metadata?.quarry_period ?? new Date(charge.created * 1000).toISOString().slice(0, 7);
    return [
      {
        type: 'reversal',
        kind,
        customerId,
        reference,
        chargeId: charge.id,
        invoiceId: invoice?.id ?? null,
        subscriptionId: invoice === null ? null : subscriptionOfInvoice(invoice),
        amountCents,
        paidCents: charge.amount,
        usagePeriod,
      },
    ];
  }

  /** Where a connected account stands now. */
  async function connectedAccountState(id: string): Promise<ConnectedAccountState> {
    const account = await stripe.accounts.retrieve(id);
    return {
      detailsSubmitted: account.details_submitted ?? false,
      payoutsEnabled: account.payouts_enabled ?? false,
      requirements: [
        ...(account.requirements?.currently_due ?? []),
        ...(account.requirements?.past_due ?? []),
      ].filter((field, i, all) => all.indexOf(field) === i),
    };
  }

  /** What an event means now: the objects it names, read again from the API. */
  async function factsOf(event: Stripe.Event): Promise<PaymentFact[]> {
    switch (event.type) {
      case 'checkout.session.completed': {
        const session = event.data.object;
        const accountId = session.client_reference_id ?? session.metadata?.quarry_account;
        const customerId = idOf(session.customer);
        if (accountId === undefined || accountId === null || customerId === null) return [];
        if (session.mode === 'subscription') {
          const subId = idOf(session.subscription);
          return [
            {
              type: 'checkout_completed',
              accountId,
              customerId,
              subscription: subId === null ? null : await subscription(subId),
              cardOnFile: true,
            },
          ];
        }
        if (session.mode === 'setup') {
          const intentId = idOf(session.setup_intent);
          if (intentId === null) return [];
          const intent = await stripe.setupIntents.retrieve(intentId);
          const method = idOf(intent.payment_method);
          if (intent.status !== 'succeeded' || method === null) return [];
          // The card saved becomes the one Pay as you Go invoices charge.
          await stripe.customers.update(
            customerId,
            { invoice_settings: { default_payment_method: method } },
            { idempotencyKey: `quarry-default-card-${intentId}` },
          );
          return [
            { type: 'checkout_completed', accountId, customerId, subscription: null, cardOnFile: true },
          ];
        }
        return [];
      }
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted':
      case 'customer.subscription.paused':
      case 'customer.subscription.resumed': {
        const sub = event.data.object;
        const customerId = idOf(sub.customer);
        if (customerId === null) return [];
        return [
          {
            type: 'subscription',
            customerId,
            subscriptionId: sub.id,
            subscription: await subscription(sub.id),
          },
        ];
      }
      case 'invoice.paid':
      case 'invoice.payment_failed': {
        const invoice = event.data.object;
        const customerId = idOf(invoice.customer);
        if (customerId === null) return [];
        const subId = subscriptionOfInvoice(invoice);
        if (subId !== null) {
          return [
            {
              type: 'subscription',
              customerId,
              subscriptionId: subId,
              subscription: await subscription(subId),
            },
          ];
        }
        if (invoice.metadata?.quarry_kind !== 'payg' || invoice.id === undefined) return [];
        const current = await stripe.invoices.retrieve(invoice.id);
        return [{ type: 'invoice', customerId, invoiceId: invoice.id, paid: current.status === 'paid' }];
      }
      case 'account.updated': {
        const account = event.data.object;
        return [
          {
            type: 'payout_account',
            connectedAccountId: account.id,
            state: await connectedAccountState(account.id),
          },
        ];
      }
      case 'charge.refunded': {
        const charge = event.data.object;
        const refund = charge.refunds?.data[0]?.id ?? `${charge.id}:refund`;
        return reversal('refund', refund, charge, charge.amount_refunded);
      }
      case 'charge.dispute.created': {
        const dispute = event.data.object;
        const chargeId = idOf(dispute.charge);
        return chargeId === null ? [] : reversal('dispute', dispute.id, chargeId, dispute.amount);
      }
      default:
        return [];
    }
  }

  return {
    kind: 'stripe',
    async createCheckout(request: CheckoutRequest): Promise<Checkout> {
      const customerId =
        request.customerId ??
        (
          await stripe.customers.create(
            {
              email: request.account.email,
              name: request.account.name,
              metadata: { quarry_account: request.account.id },
            },
            { idempotencyKey: `quarry-customer-${request.account.id}` },
          )
        ).id;
      const metadata = { quarry_account: request.account.id, quarry_plan: request.plan.id };
      const common = {
        customer: customerId,
        client_reference_id: request.account.id,
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        metadata,
      };
      const session =
        request.mode === 'subscription'
          ? await stripe.checkout.sessions.create({
              ...common,
              mode: 'subscription',
              line_items: [{ price: await priceFor(request.plan), quantity: 1 }],
              subscription_data: { metadata },
            })
          : await stripe.checkout.sessions.create({
              ...common,
              mode: 'setup',
              currency: 'usd',
            });
      if (session.url === null)
        throw new Error(`Stripe returned checkout session ${session.id} without a URL`);
      return { id: session.id, url: session.url, customerId };
    },
    async changeSubscription(billing, plan) {
      if (billing.subscriptionId === null)
        throw new Error(`account ${billing.accountId} has no subscription to change`);
      const current = await stripe.subscriptions.retrieve(billing.subscriptionId);
      const item = current.items.data[0];
      if (item === undefined) throw new Error(`subscription ${current.id} has no item`);
      const price = await priceFor(plan);
      const updated = await stripe.subscriptions.update(
        current.id,
        {
          items: [{ id: item.id, price }],
          // The difference for the rest of the period is invoiced and charged now.
          proration_behavior: 'always_invoice',
          metadata: { quarry_account: billing.accountId, quarry_plan: plan.id },
        },
        { idempotencyKey: `quarry-change-${current.id}-${item.price.id}-${price}` },
      );
      return stateOf(updated);
    },
    async createPortal(customerId, returnUrl) {
      const session = await stripe.billingPortal.sessions.create({
        customer: customerId,
        return_url: returnUrl,
      });
      return { url: session.url };
    },
    verifyWebhook(rawBody, signature): ProviderEvent {
      if (signature === undefined) throw new PaymentSignatureError('no Stripe-Signature header');
      // The platform endpoint's secret, else the Connect endpoint's: one URL serves both.
      const secrets = [options.webhookSecret, options.connectWebhookSecret].filter(
        (s): s is string => s !== undefined,
      );
      let failure: unknown;
      for (const secret of secrets) {
        try {
          const event = stripe.webhooks.constructEvent(rawBody, signature, secret);
          return { id: event.id, type: event.type, facts: () => factsOf(event) };
        } catch (error) {
          failure = error;
        }
      }
      throw new PaymentSignatureError(
        failure instanceof Error ? failure.message : 'the signature does not match',
      );
    },
    async chargeInvoice(request: InvoiceRequest): Promise<InvoiceOutcome> {
      const key = request.idempotencyKey;
      const metadata = {
        quarry_kind: 'payg',
        quarry_account: request.accountId,
        quarry_period: request.period,
      };
      let invoice = await stripe.invoices.create(
        {
          customer: request.customerId,
          collection_method: 'charge_automatically',
          auto_advance: false,
          pending_invoice_items_behavior: 'exclude',
          currency: 'usd',
          description: `Quarry Pay as you Go, ${request.period}`,
          metadata,
        },
        { idempotencyKey: `${key}-invoice` },
      );
      const id = invoice.id as string;
      if (invoice.status === 'draft') {
        for (const [i, line] of request.lines.entries()) {
          if (line.cents === 0) continue;
          await stripe.invoiceItems.create(
            {
              customer: request.customerId,
              invoice: id,
              amount: line.cents,
              currency: 'usd',
              description: line.description,
              metadata: { ...metadata, quarry_analytic: line.analytic ?? '' },
            },
            { idempotencyKey: `${key}-line-${i}` },
          );
        }
        invoice = await stripe.invoices.finalizeInvoice(id, {}, { idempotencyKey: `${key}-finalize` });
      }
      if (invoice.status === 'paid') return { invoiceId: id, paid: true };
      try {
        invoice = await stripe.invoices.pay(id, {}, { idempotencyKey: `${key}-pay` });
        return { invoiceId: id, paid: invoice.status === 'paid' };
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError) return { invoiceId: id, paid: false };
        throw error;
      }
    },
    async createConnectedAccount(owner) {
      // Express-style: Stripe collects what it needs and the owner gets the Express dashboard;
      // the platform pays Stripe's fees and carries the losses (the controller properties the
      // current API prefers to `type: 'express'`).
      const account = await stripe.accounts.create(
        {
          email: owner.email,
          controller: {
            fees: { payer: 'application' },
            losses: { payments: 'application' },
            stripe_dashboard: { type: 'express' },
            requirement_collection: 'stripe',
          },
          capabilities: { transfers: { requested: true } },
          metadata: { quarry_account: owner.id },
        },
        { idempotencyKey: `quarry-connect-${owner.id}` },
      );
      return account.id;
    },
    async onboardingLink(connectedAccountId, returnUrl, refreshUrl) {
      const link = await stripe.accountLinks.create({
        account: connectedAccountId,
        type: 'account_onboarding',
        return_url: returnUrl,
        refresh_url: refreshUrl,
      });
      return { url: link.url };
    },
    connectedAccountState,
    async transfer(request) {
      // A transfer made by an earlier attempt whose answer was lost is found by its group and
      // metadata first: the idempotency key alone lasts only a day.
      const group = `quarry-payout-${request.period}`;
      const earlier = await stripe.transfers.list({
        destination: request.connectedAccountId,
        transfer_group: group,
        limit: 10,
      });
      const made = earlier.data.find((t) => t.metadata?.quarry_owner === request.ownerId);
      if (made !== undefined) return { transferId: made.id };
      try {
        const transfer = await stripe.transfers.create(
          {
            amount: request.cents,
            currency: 'usd',
            destination: request.connectedAccountId,
            transfer_group: group,
            description: `Quarry earnings, ${request.period}`,
            metadata: { quarry_owner: request.ownerId, quarry_period: request.period },
          },
          { idempotencyKey: request.idempotencyKey },
        );
        return { transferId: transfer.id };
      } catch (error) {
        // Stripe refused it (no transfers capability, no balance…): the payout fails and is
        // carried; anything else (the network) is thrown, and the next close tries again.
        if (error instanceof Stripe.errors.StripeInvalidRequestError)
          throw new TransferFailure(error.message);
        throw error;
      }
    },
    async cancelSubscription(subscriptionId) {
      try {
        await stripe.subscriptions.cancel(
          subscriptionId,
          {},
          { idempotencyKey: `quarry-cancel-${subscriptionId}` },
        );
      } catch (error) {
        // Gone or already canceled: what was asked is so.
        if (isMissing(error)) return;
        if (error instanceof Stripe.errors.StripeInvalidRequestError && /cancel/i.test(error.message)) return;
        throw error;
      }
    },
  };
}
