// The objects the fake keeps and sends, shaped like API version 2026-10-28.endive: the fields of
// Stripe's published example objects (openapi/fixtures3.json) that the SDK and a payments
// integration read, plus the id/object/livemode/created/metadata envelope. Optional blocks an
// integration never reads (shipping, tax, custom text…) are left out rather than faked.
// Where Stripe embeds a full object (a subscription item's `price`, an invoice's `lines`), the
// state holds a reference to that object, so what is sent is always current.
import { randomBytes } from 'node:crypto';

export type Metadata = Record<string, string>;

export interface StripeObject {
  id: string;
  object: string;
  [field: string]: unknown;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix` + random base62, like Stripe's ids (`cus_` ids are 14 characters, most others 24). */
export function newId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

const ADDRESS = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };

export interface Customer extends StripeObject {
  object: 'customer';
  email: string | null;
  name: string | null;
  metadata: Metadata;
  invoice_prefix: string;
  next_invoice_sequence: number;
  invoice_settings: { default_payment_method: string | null; [field: string]: unknown };
}

export function customer(
  created: number,
  fields: { email: string | null; name: string | null; metadata: Metadata },
): Customer {
  return {
    id: newId('cus_', 14),
    object: 'customer',
    address: null,
    balance: 0,
    created,
    currency: null,
    customer_account: null,
    default_source: null,
    delinquent: false,
    description: null,
    discount: null,
    email: fields.email,
    invoice_prefix: newId('', 8).toUpperCase(),
    invoice_settings: {
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    },
    livemode: false,
    metadata: fields.metadata,
    name: fields.name,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

export interface Product extends StripeObject {
  object: 'product';
  name: string;
  metadata: Metadata;
  default_price: string | null;
}

export function product(created: number, fields: { id?: string; name: string; metadata: Metadata }): Product {
  return {
    id: fields.id ?? newId('prod_', 14),
    object: 'product',
    active: true,
    created,
    default_price: null,
    description: null,
    images: [],
    livemode: false,
    marketing_features: [],
    metadata: fields.metadata,
    name: fields.name,
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    type: 'service',
    unit_label: null,
    updated: created,
    url: null,
  };
}

export interface Price extends StripeObject {
  object: 'price';
  active: boolean;
  currency: string;
  lookup_key: string | null;
  metadata: Metadata;
  product: string;
  recurring: { interval: string; interval_count: number; [field: string]: unknown } | null;
  type: 'one_time' | 'recurring';
  unit_amount: number;
}

export function price(
  created: number,
  fields: {
    product: string;
    unitAmount: number;
    currency: string;
    interval: string | undefined;
    intervalCount: number;
    lookupKey: string | null;
    nickname: string | null;
    metadata: Metadata;
  },
): Price {
  return {
    id: newId('price_'),
    object: 'price',
    active: true,
    billing_scheme: 'per_unit',
    created,
    currency: fields.currency,
    custom_unit_amount: null,
    livemode: false,
    lookup_key: fields.lookupKey,
    metadata: fields.metadata,
    nickname: fields.nickname,
    product: fields.product,
    recurring: fields.interval
      ? {
          interval: fields.interval,
          interval_count: fields.intervalCount,
          meter: null,
          trial_period_days: null,
          usage_type: 'licensed',
        }
      : null,
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: fields.interval ? 'recurring' : 'one_time',
    unit_amount: fields.unitAmount,
    unit_amount_decimal: String(fields.unitAmount),
  };
}

export interface PaymentMethod extends StripeObject {
  object: 'payment_method';
  customer: string | null;
  card: { brand: string; last4: string; [field: string]: unknown };
}

export function cardPaymentMethod(created: number, customerId: string, email: string | null): PaymentMethod {
  return {
    id: newId('pm_'),
    object: 'payment_method',
    allow_redisplay: 'always',
    billing_details: { address: { ...ADDRESS }, email, name: null, phone: null, tax_id: null },
    card: {
      brand: 'visa',
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      display_brand: 'visa',
      exp_month: 12,
      exp_year: new Date(created * 1000).getUTCFullYear() + 3,
      fingerprint: newId('', 16),
      funding: 'credit',
      generated_from: null,
      last4: '4242',
      networks: { available: ['visa'], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created,
    customer: customerId,
    customer_account: null,
    livemode: false,
    metadata: {},
    type: 'card',
  };
}

export interface SetupIntent extends StripeObject {
  object: 'setup_intent';
  status: string;
  customer: string | null;
  payment_method: string | null;
}

export function setupIntent(created: number, customerId: string | null, metadata: Metadata): SetupIntent {
  const id = newId('seti_');
  return {
    id,
    object: 'setup_intent',
    application: null,
    automatic_payment_methods: null,
    cancellation_reason: null,
    client_secret: `${id}_secret_${newId('', 32)}`,
    created,
    customer: customerId,
    description: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_options: {},
    payment_method_types: ['card'],
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage: 'off_session',
  };
}

export interface CheckoutSession extends StripeObject {
  object: 'checkout.session';
  mode: 'payment' | 'setup' | 'subscription';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  customer: string | null;
  subscription: string | null;
  setup_intent: string | null;
  invoice: string | null;
  success_url: string | null;
  cancel_url: string | null;
  metadata: Metadata;
  amount_total: number | null;
  currency: string | null;
}

export function checkoutSession(
  created: number,
  fields: {
    mode: CheckoutSession['mode'];
    customer: string | null;
    customerEmail: string | null;
    clientReferenceId: string | null;
    successUrl: string | null;
    cancelUrl: string | null;
    metadata: Metadata;
    amountTotal: number | null;
    currency: string | null;
    paymentMethodTypes: string[];
    baseUrl: string;
  },
): CheckoutSession {
  const id = newId('cs_test_', 58);
  return {
    id,
    object: 'checkout.session',
    adaptive_pricing: null,
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: fields.amountTotal,
    amount_total: fields.amountTotal,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: fields.cancelUrl,
    client_reference_id: fields.clientReferenceId,
    client_secret: null,
    created,
    currency: fields.currency,
    customer: fields.customer,
    customer_account: null,
    customer_creation: fields.customer ? null : fields.mode === 'payment' ? 'if_required' : 'always',
    customer_details: null,
    customer_email: fields.customerEmail,
    discounts: [],
    expires_at: created + 24 * 3600,
    invoice: null,
    livemode: false,
    locale: null,
    metadata: fields.metadata,
    mode: fields.mode,
    payment_intent: null,
    payment_link: null,
    payment_method_collection: fields.mode === 'payment' ? null : 'always',
    payment_method_types: fields.paymentMethodTypes,
    payment_status: fields.mode === 'setup' ? 'no_payment_required' : 'unpaid',
    setup_intent: null,
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: fields.successUrl,
    total_details:
      fields.amountTotal === null ? null : { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: `${fields.baseUrl}/checkout/pay/${id}`,
  };
}

export interface SubscriptionItem extends StripeObject {
  object: 'subscription_item';
  price: Price;
  quantity: number;
  current_period_start: number;
  current_period_end: number;
}

export interface Subscription extends StripeObject {
  object: 'subscription';
  customer: string;
  status: 'incomplete' | 'active' | 'past_due' | 'canceled' | 'unpaid';
  metadata: Metadata;
  items: { object: 'list'; data: SubscriptionItem[]; has_more: false; total_count: number; url: string };
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  ended_at: number | null;
  cancellation_details: { comment: string | null; feedback: string | null; reason: string | null };
  default_payment_method: string | null;
  latest_invoice: string | null;
}

export function subscriptionItem(
  created: number,
  subscriptionId: string,
  forPrice: Price,
  quantity: number,
  periodEnd: number,
): SubscriptionItem {
  return {
    id: newId('si_', 14),
    object: 'subscription_item',
    billing_thresholds: null,
    created,
    current_period_end: periodEnd,
    current_period_start: created,
    discounts: [],
    metadata: {},
    plan: null,
    price: forPrice,
    quantity,
    subscription: subscriptionId,
    tax_rates: [],
  };
}

export function subscription(
  created: number,
  fields: {
    customer: string;
    lines: { price: Price; quantity: number }[];
    metadata: Metadata;
    paymentMethod: string | null;
  },
): Subscription {
  const id = newId('sub_');
  const data = fields.lines.map((line) =>
    subscriptionItem(created, id, line.price, line.quantity, periodEnd(created, line.price)),
  );
  return {
    id,
    object: 'subscription',
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: created,
    billing_cycle_anchor_config: null,
    billing_mode: { type: 'flexible', flexible: { proration_discounts: 'included' }, updated_at: created },
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created,
    currency: fields.lines[0]?.price.currency ?? 'usd',
    customer: fields.customer,
    customer_account: null,
    days_until_due: null,
    default_payment_method: fields.paymentMethod,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: {
      object: 'list',
      data,
      has_more: false,
      total_count: data.length,
      url: `/v1/subscription_items?subscription=${id}`,
    },
    latest_invoice: null,
    livemode: false,
    metadata: fields.metadata,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: {
      payment_method_options: null,
      payment_method_types: null,
      save_default_payment_method: 'off',
    },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: created,
    status: 'active',
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: null,
  };
}

export interface InvoiceLine extends StripeObject {
  object: 'line_item';
  amount: number;
  description: string | null;
  metadata: Metadata;
}

export interface InvoiceItem extends StripeObject {
  object: 'invoiceitem';
  amount: number;
  customer: string;
  invoice: string | null;
  description: string | null;
  metadata: Metadata;
  period: { start: number; end: number };
  currency: string;
}

export function invoiceItem(
  created: number,
  fields: {
    customer: string;
    amount: number;
    currency: string;
    description: string | null;
    metadata: Metadata;
    period: { start: number; end: number };
  },
): InvoiceItem {
  return {
    id: newId('ii_'),
    object: 'invoiceitem',
    amount: fields.amount,
    currency: fields.currency,
    customer: fields.customer,
    customer_account: null,
    date: created,
    description: fields.description,
    discountable: true,
    discounts: [],
    invoice: null,
    livemode: false,
    metadata: fields.metadata,
    net_amount: fields.amount,
    parent: null,
    period: fields.period,
    pricing: null,
    proration: false,
    quantity: 1,
    quantity_decimal: '1',
    tax_rates: [],
    test_clock: null,
  };
}

export function invoiceLine(
  invoiceId: string,
  fields: {
    amount: number;
    currency: string;
    description: string | null;
    metadata: Metadata;
    period: { start: number; end: number };
    quantity: number;
    invoiceItem?: string;
    subscription?: { id: string; item: string; price: Price };
  },
): InvoiceLine {
  const sub = fields.subscription;
  return {
    id: newId('il_'),
    object: 'line_item',
    amount: fields.amount,
    currency: fields.currency,
    description: fields.description,
    discount_amounts: [],
    discountable: true,
    discounts: [],
    invoice: invoiceId,
    livemode: false,
    metadata: fields.metadata,
    parent: sub
      ? {
          invoice_item_details: null,
          subscription_item_details: {
            invoice_item: null,
            proration: false,
            proration_details: { credited_items: null },
            subscription: sub.id,
            subscription_item: sub.item,
          },
          type: 'subscription_item_details',
        }
      : {
          invoice_item_details: {
            invoice_item: fields.invoiceItem ?? null,
            proration: false,
            proration_details: { credited_items: null },
            subscription: null,
          },
          subscription_item_details: null,
          type: 'invoice_item_details',
        },
    period: fields.period,
    pretax_credit_amounts: [],
    pricing: sub
      ? {
          price_details: { price: sub.price.id, product: sub.price.product },
          type: 'price_details',
          unit_amount_decimal: sub.price.unit_amount_decimal,
        }
      : null,
    quantity: fields.quantity,
    quantity_decimal: String(fields.quantity),
    subtotal: fields.amount,
    taxes: [],
  };
}

export interface Invoice extends StripeObject {
  object: 'invoice';
  customer: string;
  status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
  number: string | null;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  subtotal: number;
  total: number;
  attempt_count: number;
  attempted: boolean;
  metadata: Metadata;
  currency: string;
  default_payment_method: string | null;
  lines: { object: 'list'; data: InvoiceLine[]; has_more: false; total_count: number; url: string };
  parent: {
    type: 'subscription_details';
    quote_details: null;
    subscription_details: { metadata: Metadata; subscription: string };
  } | null;
  status_transitions: {
    finalized_at: number | null;
    marked_uncollectible_at: number | null;
    paid_at: number | null;
    voided_at: number | null;
  };
  next_payment_attempt: number | null;
  period_start: number;
  period_end: number;
}

export function invoice(
  created: number,
  fields: {
    customer: Customer;
    currency: string;
    description: string | null;
    metadata: Metadata;
    autoAdvance: boolean;
    billingReason: string;
    subscription: Subscription | null;
  },
): Invoice {
  const id = newId('in_');
  return {
    id,
    object: 'invoice',
    account_country: 'US',
    account_name: 'Quarry (fake Stripe)',
    account_tax_ids: null,
    amount_due: 0,
    amount_overpaid: 0,
    amount_paid: 0,
    amount_remaining: 0,
    amount_shipping: 0,
    application: null,
    attempt_count: 0,
    attempted: false,
    auto_advance: fields.autoAdvance,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: null,
    billing_reason: fields.billingReason,
    collection_method: 'charge_automatically',
    created,
    currency: fields.currency,
    custom_fields: null,
    customer: fields.customer.id,
    customer_account: null,
    customer_address: null,
    customer_email: fields.customer.email,
    customer_name: fields.customer.name,
    customer_phone: null,
    customer_shipping: null,
    customer_tax_exempt: 'none',
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: fields.description,
    discounts: [],
    due_date: null,
    effective_at: null,
    ending_balance: null,
    footer: null,
    from_invoice: null,
    hosted_invoice_url: null,
    invoice_pdf: null,
    issuer: { type: 'self' },
    last_finalization_error: null,
    latest_revision: null,
    lines: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/invoices/${id}/lines` },
    livemode: false,
    metadata: fields.metadata,
    next_payment_attempt: null,
    number: null,
    on_behalf_of: null,
    parent: fields.subscription
      ? {
          quote_details: null,
          subscription_details: {
            metadata: { ...fields.subscription.metadata },
            subscription: fields.subscription.id,
          },
          type: 'subscription_details',
        }
      : null,
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: created,
    period_start: created,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: 'draft',
    status_transitions: { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null },
    subtotal: 0,
    subtotal_excluding_tax: 0,
    test_clock: null,
    total: 0,
    total_discount_amounts: [],
    total_excluding_tax: 0,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: null,
  };
}

export interface Charge extends StripeObject {
  object: 'charge';
  amount: number;
  amount_refunded: number;
  customer: string | null;
  refunded: boolean;
  disputed: boolean;
  status: 'succeeded' | 'failed';
  paid: boolean;
  currency: string;
  payment_method: string | null;
}

export function charge(
  created: number,
  fields: {
    amount: number;
    currency: string;
    customer: string | null;
    paymentMethod: PaymentMethod | null;
    description: string | null;
    declined: boolean;
  },
): Charge {
  const pm = fields.paymentMethod;
  return {
    id: newId('ch_'),
    object: 'charge',
    amount: fields.amount,
    amount_captured: fields.declined ? 0 : fields.amount,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: fields.declined ? null : newId('txn_'),
    billing_details: { address: { ...ADDRESS }, email: null, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: 'QUARRY',
    captured: !fields.declined,
    created,
    currency: fields.currency,
    customer: fields.customer,
    description: fields.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: fields.declined ? 'card_declined' : null,
    failure_message: fields.declined ? 'Your card was declined.' : null,
    fraud_details: {},
    livemode: false,
    metadata: {},
    on_behalf_of: null,
    outcome: fields.declined
      ? {
          network_status: 'declined_by_network',
          reason: 'generic_decline',
          risk_level: 'normal',
          seller_message: 'The bank did not return any further details with this decline.',
          type: 'issuer_declined',
        }
      : {
          network_status: 'approved_by_network',
          reason: null,
          risk_level: 'normal',
          seller_message: 'Payment complete.',
          type: 'authorized',
        },
    paid: !fields.declined,
    payment_intent: null,
    payment_method: pm?.id ?? null,
    payment_method_details: pm
      ? {
          card: {
            brand: pm.card.brand,
            country: 'US',
            exp_month: pm.card.exp_month,
            exp_year: pm.card.exp_year,
            funding: 'credit',
            last4: pm.card.last4,
            network: 'visa',
          },
          type: 'card',
        }
      : null,
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: false,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: fields.declined ? 'failed' : 'succeeded',
    transfer_data: null,
    transfer_group: null,
  };
}

export function refund(
  created: number,
  fields: { charge: Charge; amount: number; reason: string | null; metadata: Metadata },
): StripeObject {
  return {
    id: newId('re_'),
    object: 'refund',
    amount: fields.amount,
    balance_transaction: newId('txn_'),
    charge: fields.charge.id,
    created,
    currency: fields.charge.currency,
    destination_details: {
      card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' },
      type: 'card',
    },
    metadata: fields.metadata,
    payment_intent: fields.charge.payment_intent,
    reason: fields.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
}

export function dispute(created: number, forCharge: Charge): StripeObject {
  return {
    id: newId('dp_'),
    object: 'dispute',
    amount: forCharge.amount,
    balance_transactions: [],
    charge: forCharge.id,
    created,
    currency: forCharge.currency,
    evidence_details: {
      due_by: created + 7 * 86400,
      has_evidence: false,
      past_due: false,
      submission_count: 0,
    },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: forCharge.payment_intent,
    payment_method_details: {
      card: { brand: 'visa', case_type: 'chargeback', network_reason_code: '10.4' },
      type: 'card',
    },
    reason: 'fraudulent',
    status: 'needs_response',
  };
}

export function invoicePayment(created: number, paid: Invoice, paidBy: Charge): StripeObject {
  return {
    id: newId('inpay_'),
    object: 'invoice_payment',
    amount_paid: paidBy.amount,
    amount_requested: paidBy.amount,
    created,
    currency: paidBy.currency,
    invoice: paid.id,
    is_default: true,
    livemode: false,
    payment: { charge: paidBy.id, type: 'charge' },
    status: 'paid',
    status_transitions: { canceled_at: null, paid_at: created },
  };
}

export function portalSession(
  created: number,
  fields: { customer: string; returnUrl: string | null; baseUrl: string },
): StripeObject {
  const id = newId('bps_');
  return {
    id,
    object: 'billing_portal.session',
    configuration: 'bpc_fake_default',
    created,
    customer: fields.customer,
    customer_account: null,
    flow: null,
    livemode: false,
    locale: null,
    on_behalf_of: null,
    return_url: fields.returnUrl,
    url: `${fields.baseUrl}/portal/${id}`,
  };
}

/** Adds `months` calendar months to a Unix time, clamping the day as Stripe does (Jan 31 → Feb 28). */
export function addMonths(unix: number, months: number): number {
  const date = new Date(unix * 1000);
  const day = date.getUTCDate();
  const target = new Date(date);
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(day, last));
  return Math.floor(target.getTime() / 1000);
}

/**
 * The end of the billing period that starts at `start` for a recurring price, on the cycle of
 * `anchor` (the billing cycle anchor): a subscription anchored on Jan 31 bills Feb 28, then Mar 31.
 */
export function periodEnd(start: number, forPrice: Price, anchor = start): number {
  const count = forPrice.recurring?.interval_count ?? 1;
  const interval = forPrice.recurring?.interval ?? 'month';
  if (interval === 'day' || interval === 'week') return start + count * (interval === 'day' ? 1 : 7) * 86400;
  const months = interval === 'year' ? 12 * count : count;
  for (let n = 1; ; n++) {
    const end = addMonths(anchor, n * months);
    if (end > start) return end;
  }
}

// ---- Connect ------------------------------------------------------------------------------

export interface Requirements {
  alternatives: unknown[];
  current_deadline: number | null;
  currently_due: string[];
  disabled_reason: string | null;
  errors: unknown[];
  eventually_due: string[];
  past_due: string[];
  pending_verification: string[];
}

export interface Account extends StripeObject {
  object: 'account';
  type: 'express' | 'standard' | 'none';
  email: string | null;
  business_type: string | null;
  capabilities: Record<string, 'active' | 'inactive' | 'pending'>;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  requirements: Requirements;
  future_requirements: Requirements;
  metadata: Metadata;
  tos_acceptance: { date: number | null; ip: string | null; user_agent: string | null };
  controller: {
    fees: { payer: string };
    is_controller: boolean;
    losses: { payments: string };
    requirement_collection: string;
    stripe_dashboard: { type: string };
    type: 'application' | 'account';
  };
  external_accounts: {
    object: 'list';
    data: StripeObject[];
    has_more: false;
    total_count: number;
    url: string;
  };
}

export function requirements(due: string[], disabledReason: string | null): Requirements {
  return {
    alternatives: [],
    current_deadline: null,
    currently_due: [...due],
    disabled_reason: disabledReason,
    errors: [],
    eventually_due: [...due],
    past_due: [...due],
    pending_verification: [],
  };
}

export function account(
  created: number,
  fields: {
    type: Account['type'];
    controller: Account['controller'];
    email: string | null;
    country: string;
    businessType: string | null;
    capabilities: string[];
    metadata: Metadata;
  },
): Account {
  const id = newId('acct_', 16);
  // What Stripe asks of a new account before it can be paid out (the fake's fixed list).
  const due = [
    ...(fields.businessType ? [] : ['business_type']),
    'external_account',
    'tos_acceptance.date',
    'tos_acceptance.ip',
  ];
  return {
    id,
    object: 'account',
    business_profile: {
      annual_revenue: null,
      estimated_worker_count: null,
      mcc: null,
      name: null,
      product_description: null,
      support_address: null,
      support_email: null,
      support_phone: null,
      support_url: null,
      url: null,
    },
    business_type: fields.businessType,
    capabilities: Object.fromEntries(fields.capabilities.map((name) => [name, 'inactive' as const])),
    charges_enabled: false,
    controller: fields.controller,
    country: fields.country,
    created,
    default_currency: fields.country === 'US' ? 'usd' : 'eur',
    details_submitted: false,
    email: fields.email,
    external_accounts: {
      object: 'list',
      data: [],
      has_more: false,
      total_count: 0,
      url: `/v1/accounts/${id}/external_accounts`,
    },
    future_requirements: requirements([], null),
    livemode: false,
    metadata: fields.metadata,
    payouts_enabled: false,
    requirements: requirements(due, 'requirements.past_due'),
    settings: {
      dashboard: { display_name: null, timezone: 'Etc/UTC' },
      payouts: {
        debit_negative_balances: true,
        schedule: { delay_days: 2, interval: 'daily' },
        statement_descriptor: null,
      },
    },
    tos_acceptance: { date: null, ip: null, user_agent: null },
    type: fields.type,
  };
}

/** The bank account Stripe's hosted onboarding attaches (Stripe's test routing and account numbers). */
export function bankAccount(accountId: string, currency: string, country: string): StripeObject {
  return {
    id: newId('ba_'),
    object: 'bank_account',
    account: accountId,
    account_holder_name: null,
    account_holder_type: null,
    account_type: null,
    available_payout_methods: ['standard'],
    bank_name: 'STRIPE TEST BANK',
    country,
    currency,
    default_for_currency: true,
    fingerprint: newId('', 16),
    last4: '6789',
    metadata: {},
    routing_number: '110000000',
    status: 'new',
  };
}

export interface AccountLink {
  object: 'account_link';
  created: number;
  expires_at: number;
  url: string;
}

export interface TransferReversal extends StripeObject {
  object: 'transfer_reversal';
  amount: number;
  currency: string;
  transfer: string;
  metadata: Metadata;
}

export interface Transfer extends StripeObject {
  object: 'transfer';
  amount: number;
  amount_reversed: number;
  currency: string;
  description: string | null;
  destination: string;
  metadata: Metadata;
  reversed: boolean;
  reversals: { object: 'list'; data: TransferReversal[]; has_more: false; total_count: number; url: string };
  transfer_group: string | null;
}

export function transfer(
  created: number,
  fields: {
    amount: number;
    currency: string;
    destination: string;
    description: string | null;
    transferGroup: string | null;
    metadata: Metadata;
  },
): Transfer {
  const id = newId('tr_');
  return {
    id,
    object: 'transfer',
    amount: fields.amount,
    amount_reversed: 0,
    balance_transaction: newId('txn_'),
    created,
    currency: fields.currency,
    description: fields.description,
    destination: fields.destination,
    destination_payment: newId('py_', 14),
    livemode: false,
    metadata: fields.metadata,
    reversals: {
      object: 'list',
      data: [],
      has_more: false,
      total_count: 0,
      url: `/v1/transfers/${id}/reversals`,
    },
    reversed: false,
    source_transaction: null,
    source_type: 'card',
    transfer_group: fields.transferGroup,
  };
}

export function transferReversal(
  created: number,
  fields: { transfer: Transfer; amount: number; metadata: Metadata },
): TransferReversal {
  return {
    id: newId('trr_'),
    object: 'transfer_reversal',
    amount: fields.amount,
    balance_transaction: newId('txn_'),
    created,
    currency: fields.transfer.currency,
    destination_payment_refund: newId('pyr_'),
    metadata: fields.metadata,
    source_refund: null,
    transfer: fields.transfer.id,
  };
}
