// The fake's state and the things that happen to it: what the API calls do and what a customer,
// the portal or the card network do. Every change runs synchronously and emits its events
// through `emit`, in the order Stripe would send them.
import {
  type Account,
  bankAccount,
  type Charge,
  type CheckoutSession,
  type Customer,
  cardPaymentMethod,
  charge,
  customer,
  dispute,
  type Invoice,
  type InvoiceItem,
  invoice,
  invoiceLine,
  invoicePayment,
  type PaymentMethod,
  type Price,
  periodEnd,
  refund,
  requirements,
  type SetupIntent,
  type StripeObject,
  type Subscription,
  subscription,
  type Transfer,
  type TransferReversal,
  transfer,
  transferReversal,
} from './objects.js';

/** An error the API answers with Stripe's envelope `{"error": {...}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code?: string,
    readonly param?: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }

  body(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { type: this.type, message: this.message };
    if (this.code) {
      error.code = this.code;
      error.doc_url = `https://stripe.com/docs/error-codes/${this.code.replace(/_/g, '-')}`;
    }
    if (this.param) error.param = this.param;
    return { error: { ...error, ...this.extra } };
  }
}

const NAMES: Record<string, string> = {
  cus: 'customer',
  prod: 'product',
  price: 'price',
  pm: 'payment_method',
  seti: 'setupintent',
  cs: 'checkout.session',
  sub: 'subscription',
  in: 'invoice',
  ii: 'invoiceitem',
  ch: 'charge',
  re: 'refund',
  dp: 'dispute',
  evt: 'event',
  bps: 'billing_portal.session',
  acct: 'account',
  tr: 'transfer',
  trr: 'transfer_reversal',
};

export function missing(id: string): ApiError {
  const prefix = id.split('_')[0] ?? '';
  return new ApiError(
    404,
    'invalid_request_error',
    `No such ${NAMES[prefix] ?? 'object'}: '${id}'`,
    'resource_missing',
    'id',
  );
}

export type TransferFailure = 'transfers_not_allowed' | 'balance_insufficient';

export interface AccountLinkRecord {
  readonly token: string;
  readonly account: string;
  readonly type: 'account_onboarding' | 'account_update';
  readonly collect: 'currently_due' | 'eventually_due';
  readonly refreshUrl: string | null;
  readonly returnUrl: string | null;
  readonly created: number;
  readonly expiresAt: number;
  readonly url: string;
  /** `new` until its page is opened, `visited` once it is, `done` once completed or left. */
  state: 'new' | 'visited' | 'done';
}

export type Emit = (type: string, object: StripeObject, previous?: StripeObject) => void;

export class Store {
  /** Every object by id, whatever its type (expansion looks ids up here). */
  readonly objects = new Map<string, StripeObject>();
  readonly declining = new Set<string>();
  /** What a checkout session was created with that Stripe does not send back on the session. */
  readonly checkoutInputs = new Map<
    string,
    { lines: { price: string; quantity: number }[]; subscriptionMetadata: Record<string, string> }
  >();
  private readonly paymentsByInvoice = new Map<string, StripeObject[]>();
  /** The platform's available balance by currency, in the currency's smallest unit. */
  readonly balance = new Map<string, number>([['usd', 10_000_000]]);
  /** Account links by the token in their URL (they have no id and cannot be retrieved). */
  readonly accountLinks = new Map<string, AccountLinkRecord>();
  /** The error codes the next `POST /v1/transfers` answer with, one each. */
  readonly transferFailures: TransferFailure[] = [];

  constructor(
    readonly nowSeconds: () => number,
    readonly emit: Emit,
  ) {}

  add<T extends StripeObject>(object: T): T {
    this.objects.set(object.id, object);
    return object;
  }

  all<T extends StripeObject>(type: T['object']): T[] {
    return [...this.objects.values()].filter((o): o is T => o.object === type);
  }

  get<T extends StripeObject>(type: T['object'], id: string): T {
    const found = this.objects.get(id);
    if (!found || found.object !== type) throw missing(id);
    return found as T;
  }

  /** Runs `change` on `object` and emits `<type>` with the fields it changed as `previous_attributes`. */
  update<T extends StripeObject>(type: string, object: T, change: (o: T) => void): void {
    const before = structuredClone(object);
    change(object);
    this.emit(type, object, before);
  }

  createCustomer(fields: {
    email: string | null;
    name: string | null;
    metadata: Record<string, string>;
  }): Customer {
    const created = this.add(customer(this.nowSeconds(), fields));
    this.emit('customer.created', created);
    return created;
  }

  paymentsOf(invoiceId: string): StripeObject[] {
    return this.paymentsByInvoice.get(invoiceId) ?? [];
  }

  // ---- checkout ---------------------------------------------------------------------------

  lineItemsOf(session: CheckoutSession): { price: Price; quantity: number }[] {
    return (this.checkoutInputs.get(session.id)?.lines ?? []).map((line) => ({
      price: this.get<Price>('price', line.price),
      quantity: line.quantity,
    }));
  }

  completeCheckout(session: CheckoutSession): void {
    if (session.status !== 'open') {
      throw new Error(`checkout session ${session.id} is ${session.status}, not open`);
    }
    const now = this.nowSeconds();
    const buyer = session.customer
      ? this.get<Customer>('customer', session.customer)
      : this.createCustomer({ email: session.customer_email as string | null, name: null, metadata: {} });
    const card = this.attachCard(buyer);
    const details = {
      address: null,
      email: buyer.email,
      name: buyer.name,
      phone: null,
      tax_exempt: 'none',
      tax_ids: [],
    };
    if (session.mode === 'setup') {
      const intent = this.get<SetupIntent>('setup_intent', String(session.setup_intent));
      this.update('setup_intent.succeeded', intent, (i) => {
        i.customer = buyer.id;
        i.payment_method = card.id;
        i.status = 'succeeded';
      });
      this.update('checkout.session.completed', session, (s) => {
        s.status = 'complete';
        s.customer = buyer.id;
        s.customer_details = details;
        s.url = null;
      });
      return;
    }
    const lines = this.lineItemsOf(session);
    if (session.mode === 'subscription') {
      const sub = this.add(
        subscription(now, {
          customer: buyer.id,
          lines,
          metadata: { ...this.checkoutInputs.get(session.id)?.subscriptionMetadata },
          paymentMethod: card.id,
        }),
      );
      const bill = this.subscriptionInvoice(sub, 'subscription_create');
      this.emit('customer.subscription.created', sub);
      this.emit('invoice.created', bill);
      this.finalize(bill);
      this.pay(bill, card);
      this.update('checkout.session.completed', session, (s) => {
        s.status = 'complete';
        s.payment_status = 'paid';
        s.customer = buyer.id;
        s.customer_details = details;
        s.subscription = sub.id;
        s.invoice = bill.id;
        s.url = null;
      });
      return;
    }
    const amount = lines.reduce((sum, line) => sum + line.price.unit_amount * line.quantity, 0);
    const paid = this.add(
      charge(now, {
        amount,
        currency: session.currency ?? 'usd',
        customer: buyer.id,
        paymentMethod: card,
        description: null,
        declined: false,
      }),
    );
    this.emit('charge.succeeded', paid);
    this.update('checkout.session.completed', session, (s) => {
      s.status = 'complete';
      s.payment_status = 'paid';
      s.customer = buyer.id;
      s.customer_details = details;
      s.url = null;
    });
  }

  private attachCard(owner: Customer): PaymentMethod {
    const card = this.add(cardPaymentMethod(this.nowSeconds(), owner.id, owner.email));
    this.emit('payment_method.attached', card);
    return card;
  }

  // ---- subscriptions ----------------------------------------------------------------------

  /** The invoice for the subscription's current period, created as a draft (invoice.created not yet emitted). */
  private subscriptionInvoice(sub: Subscription, reason: string): Invoice {
    const owner = this.get<Customer>('customer', sub.customer);
    const first = sub.items.data[0]!;
    const bill = this.add(
      invoice(this.nowSeconds(), {
        customer: owner,
        currency: first.price.currency,
        description: null,
        metadata: {},
        autoAdvance: true,
        billingReason: reason,
        subscription: sub,
      }),
    );
    for (const item of sub.items.data) {
      const each = (item.price.unit_amount / 100).toFixed(2);
      bill.lines.data.push(
        invoiceLine(bill.id, {
          amount: item.price.unit_amount * item.quantity,
          currency: item.price.currency,
          description: `${item.quantity} × ${this.productName(item.price)} (at $${each} / ${item.price.recurring?.interval ?? 'month'})`,
          metadata: {},
          period: { start: item.current_period_start, end: item.current_period_end },
          quantity: item.quantity,
          subscription: { id: sub.id, item: item.id, price: item.price },
        }),
      );
    }
    bill.period_start = first.current_period_start;
    bill.period_end = first.current_period_end;
    this.total(bill);
    sub.latest_invoice = bill.id;
    return bill;
  }

  private productName(p: Price): string {
    const found = this.objects.get(p.product);
    return found && typeof found.name === 'string' ? found.name : p.product;
  }

  renew(sub: Subscription, outcome: 'paid' | 'failed'): void {
    if (sub.status === 'canceled') throw new Error(`subscription ${sub.id} is canceled`);
    const before = structuredClone(sub);
    for (const item of sub.items.data) {
      item.current_period_start = item.current_period_end;
      item.current_period_end = periodEnd(
        item.current_period_start,
        item.price,
        sub.billing_cycle_anchor as number,
      );
    }
    if (sub.cancel_at_period_end) {
      sub.status = 'canceled';
      sub.ended_at = sub.items.data[0]!.current_period_start;
      this.emit('customer.subscription.deleted', sub, before);
      return;
    }
    const bill = this.subscriptionInvoice(sub, 'subscription_cycle');
    this.emit('invoice.created', bill);
    this.finalize(bill);
    const card = this.cardFor(bill);
    const wasDeclining = this.declining.has(sub.customer);
    if (outcome === 'failed') this.declining.add(sub.customer);
    else this.declining.delete(sub.customer);
    try {
      this.pay(bill, card);
      if (sub.status === 'past_due') sub.status = 'active';
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sub.status = 'past_due';
    } finally {
      if (wasDeclining) this.declining.add(sub.customer);
      else this.declining.delete(sub.customer);
    }
    this.emit('customer.subscription.updated', sub, before);
  }

  cancel(sub: Subscription, atPeriodEnd: boolean): void {
    // Stripe answers a second cancellation as if the subscription were gone.
    if (sub.status === 'canceled') throw missing(sub.id);
    const now = this.nowSeconds();
    if (atPeriodEnd) {
      this.update('customer.subscription.updated', sub, (s) => {
        s.cancel_at_period_end = true;
        s.cancel_at = s.items.data[0]!.current_period_end;
        s.canceled_at = now;
        s.cancellation_details = { comment: null, feedback: null, reason: 'cancellation_requested' };
      });
      return;
    }
    this.update('customer.subscription.deleted', sub, (s) => {
      s.status = 'canceled';
      s.canceled_at = now;
      s.ended_at = now;
      s.cancel_at = null;
      s.cancel_at_period_end = false;
      s.cancellation_details = { comment: null, feedback: null, reason: 'cancellation_requested' };
    });
  }

  // ---- invoices ---------------------------------------------------------------------------

  total(bill: Invoice): void {
    const sum = bill.lines.data.reduce((acc, line) => acc + line.amount, 0);
    bill.subtotal = sum;
    bill.subtotal_excluding_tax = sum;
    bill.total = sum;
    bill.total_excluding_tax = sum;
    bill.amount_due = sum;
    bill.amount_remaining = sum - bill.amount_paid;
    bill.lines.total_count = bill.lines.data.length;
  }

  addItemToInvoice(item: InvoiceItem, bill: Invoice): void {
    item.invoice = bill.id;
    bill.lines.data.push(
      invoiceLine(bill.id, {
        amount: item.amount,
        currency: item.currency,
        description: item.description,
        metadata: { ...item.metadata },
        period: item.period,
        quantity: 1,
        invoiceItem: item.id,
      }),
    );
    this.total(bill);
  }

  finalize(bill: Invoice): void {
    if (bill.status !== 'draft') {
      throw new ApiError(
        400,
        'invalid_request_error',
        "This invoice is already finalized, you can't re-finalize a non-draft invoice.",
        'invoice_not_editable',
      );
    }
    const owner = this.get<Customer>('customer', bill.customer);
    const now = this.nowSeconds();
    bill.status = 'open';
    bill.number = `${owner.invoice_prefix}-${String(owner.next_invoice_sequence++).padStart(4, '0')}`;
    bill.status_transitions.finalized_at = now;
    bill.effective_at = now;
    bill.hosted_invoice_url = `https://invoice.stripe.com/i/fake/${bill.id}`;
    bill.invoice_pdf = `https://pay.stripe.com/invoice/fake/${bill.id}/pdf`;
    this.total(bill);
    this.emit('invoice.finalized', bill);
    if (bill.amount_due === 0) this.markPaid(bill);
  }

  /** The card Stripe would charge for `bill`: the invoice's, the subscription's, then the customer's default. */
  cardFor(bill: Invoice): PaymentMethod | null {
    const sub = bill.parent
      ? (this.objects.get(bill.parent.subscription_details.subscription) as Subscription | undefined)
      : undefined;
    const owner = this.get<Customer>('customer', bill.customer);
    const id =
      bill.default_payment_method ??
      sub?.default_payment_method ??
      owner.invoice_settings.default_payment_method;
    return id ? this.get<PaymentMethod>('payment_method', id) : null;
  }

  /** Charges an open invoice: paid with a charge, or a card_error (402) and invoice.payment_failed. */
  pay(bill: Invoice, card: PaymentMethod | null): Invoice {
    if (bill.status === 'draft') this.finalize(bill);
    if (bill.status === 'paid') throw new ApiError(400, 'invalid_request_error', 'Invoice is already paid');
    if (bill.status !== 'open')
      throw new ApiError(
        400,
        'invalid_request_error',
        `This invoice can no longer be paid: it is ${bill.status}.`,
      );
    const now = this.nowSeconds();
    if (!card) {
      bill.attempted = true;
      bill.attempt_count += 1;
      this.emit('invoice.payment_failed', bill);
      throw new ApiError(
        400,
        'invalid_request_error',
        'This customer has no attached payment source or default payment method. Please consider adding a default payment method.',
        undefined,
        undefined,
      );
    }
    const declined = this.declining.has(bill.customer);
    const attempt = this.add(
      charge(now, {
        amount: bill.amount_remaining,
        currency: bill.currency,
        customer: bill.customer,
        paymentMethod: card,
        description:
          bill.billing_reason === 'manual'
            ? null
            : bill.billing_reason === 'subscription_create'
              ? 'Subscription creation'
              : 'Subscription update',
        declined,
      }),
    );
    bill.attempted = true;
    bill.attempt_count += 1;
    if (declined) {
      bill.next_payment_attempt = bill.parent ? now + 3 * 86400 : null;
      this.emit('charge.failed', attempt);
      this.emit('invoice.payment_failed', bill);
      throw new ApiError(402, 'card_error', 'Your card was declined.', 'card_declined', undefined, {
        decline_code: 'generic_decline',
        charge: attempt.id,
      });
    }
    this.emit('charge.succeeded', attempt);
    const payment = this.add(invoicePayment(now, bill, attempt));
    this.paymentsByInvoice.set(bill.id, [...this.paymentsOf(bill.id), payment]);
    this.markPaid(bill);
    return bill;
  }

  private markPaid(bill: Invoice): void {
    bill.amount_paid = bill.amount_due;
    bill.amount_remaining = 0;
    bill.status = 'paid';
    bill.next_payment_attempt = null;
    bill.status_transitions.paid_at = this.nowSeconds();
    this.emit('invoice.paid', bill);
    this.emit('invoice.payment_succeeded', bill);
  }

  // ---- charges ----------------------------------------------------------------------------

  refund(
    paid: Charge,
    amount: number | undefined,
    reason: string | null,
    metadata: Record<string, string>,
  ): StripeObject {
    const left = paid.amount - paid.amount_refunded;
    const value = amount ?? left;
    if (paid.status !== 'succeeded')
      throw new ApiError(
        400,
        'invalid_request_error',
        `Charge ${paid.id} has not succeeded.`,
        'charge_not_refundable',
      );
    if (left === 0) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Charge ${paid.id} has already been refunded.`,
        'charge_already_refunded',
      );
    }
    if (value <= 0 || value > left) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Refund amount ($${(value / 100).toFixed(2)}) is greater than unrefunded amount on charge ($${(left / 100).toFixed(2)})`,
        'amount_too_large',
        'amount',
      );
    }
    const made = this.add(refund(this.nowSeconds(), { charge: paid, amount: value, reason, metadata }));
    this.emit('refund.created', made);
    this.update('charge.refunded', paid, (c) => {
      c.amount_refunded += value;
      c.refunded = c.amount_refunded === c.amount;
    });
    return made;
  }

  dispute(paid: Charge): StripeObject {
    const made = this.add(dispute(this.nowSeconds(), paid));
    paid.disputed = true;
    this.emit('charge.dispute.created', made);
    return made;
  }

  // ---- Connect ----------------------------------------------------------------------------

  /** What the owner does in Stripe's hosted onboarding: everything due given, capabilities active. */
  completeOnboarding(acct: Account): void {
    const now = this.nowSeconds();
    this.changeAccount(acct, (a) => {
      a.details_submitted = true;
      a.business_type ??= 'individual';
      if (a.tos_acceptance.date === null) a.tos_acceptance = { date: now, ip: '127.0.0.1', user_agent: null };
      for (const name of Object.keys(a.capabilities)) a.capabilities[name] = 'active';
      a.charges_enabled = a.capabilities.card_payments === 'active';
      a.payouts_enabled = true;
      a.requirements = requirements([], null);
      if (a.external_accounts.data.length === 0) {
        a.external_accounts.data.push(bankAccount(a.id, String(a.default_currency), String(a.country)));
        a.external_accounts.total_count = 1;
      }
    });
  }

  /** Stripe asks for more: `fields` past due, payouts and the account's capabilities stopped. */
  requireMore(acct: Account, fields: string[]): void {
    this.changeAccount(acct, (a) => {
      a.requirements = requirements(fields, 'requirements.past_due');
      for (const name of Object.keys(a.capabilities)) a.capabilities[name] = 'inactive';
      a.charges_enabled = false;
      a.payouts_enabled = false;
    });
  }

  /** `account.updated` only when something changed, as Stripe sends it. */
  changeAccount(acct: Account, change: (a: Account) => void): void {
    const before = JSON.stringify(acct);
    const copy = structuredClone(acct);
    change(acct);
    if (JSON.stringify(acct) !== before) this.emit('account.updated', acct, copy);
  }

  createTransfer(fields: {
    amount: number;
    currency: string;
    destination: string;
    description: string | null;
    transferGroup: string | null;
    metadata: Record<string, string>;
  }): Transfer {
    const failure = this.transferFailures.shift();
    if (failure) throw transferFailure(failure);
    const found = this.objects.get(fields.destination);
    if (found?.object !== 'account') {
      throw new ApiError(
        400,
        'invalid_request_error',
        `No such destination: '${fields.destination}'`,
        'resource_missing',
        'destination',
      );
    }
    const caps = (found as Account).capabilities;
    if (!['transfers', 'crypto_transfers', 'legacy_payments'].some((name) => caps[name] === 'active')) {
      throw new ApiError(
        400,
        'invalid_request_error',
        'Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments',
        'insufficient_capabilities_for_transfer',
        'destination',
      );
    }
    const available = this.balance.get(fields.currency) ?? 0;
    if (available < fields.amount) throw transferFailure('balance_insufficient');
    this.balance.set(fields.currency, available - fields.amount);
    const made = this.add(transfer(this.nowSeconds(), fields));
    this.emit('transfer.created', made);
    return made;
  }

  reverseTransfer(
    sent: Transfer,
    amount: number | undefined,
    metadata: Record<string, string>,
  ): TransferReversal {
    const left = sent.amount - sent.amount_reversed;
    if (left === 0) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Transfer ${sent.id} has already been fully reversed.`,
        undefined,
        'amount',
      );
    }
    const value = amount ?? left;
    if (value < 1 || value > left) {
      throw new ApiError(
        400,
        'invalid_request_error',
        `Amount (${value}) must be between 1 and the amount not yet reversed on transfer ${sent.id} (${left}).`,
        undefined,
        'amount',
      );
    }
    const made = this.add(transferReversal(this.nowSeconds(), { transfer: sent, amount: value, metadata }));
    sent.amount_reversed += value;
    sent.reversed = sent.amount_reversed === sent.amount;
    sent.reversals.data.unshift(made);
    sent.reversals.total_count = sent.reversals.data.length;
    this.balance.set(sent.currency, (this.balance.get(sent.currency) ?? 0) + value);
    this.emit('transfer.reversed', sent);
    return made;
  }
}

function transferFailure(code: TransferFailure): ApiError {
  if (code === 'balance_insufficient') {
    return new ApiError(
      400,
      'invalid_request_error',
      'You have insufficient available funds in your Stripe account. Try adding funds directly to your available balance by creating Charges using the 4000000000000077 test card. See: https://stripe.com/docs/testing#available-balance',
      'balance_insufficient',
    );
  }
  return new ApiError(
    400,
    'invalid_request_error',
    'The requested transfer could not be created. Please contact us for more information.',
    'transfers_not_allowed',
  );
}
