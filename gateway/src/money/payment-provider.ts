// How callers pay (docs/money.md, "Paying for a plan"): the interface every payment provider
// implements, and the facts it reports. A provider turns its own objects (Stripe's events,
// the sandbox's pages) into `PaymentFact`s that carry the *current* state of what they name,
// read from the provider when they are applied, so the payments service can apply facts in any
// order and any number of times and end in the same state.
import type { BillingAccount } from './billing-account.js';
import type { Plan } from './plan-catalog.js';
import type { Cents } from './units.js';

/** QUARRY_PAYMENTS: who takes callers' money. `none`: the operator sets plans by hand. */
export type PaymentsKind = 'none' | 'sandbox' | 'stripe';

/** A provider's subscription as it stands now. */
export interface SubscriptionState {
  readonly id: string;
  readonly customerId: string;
  /** The plan it pays for (its price's plan); undefined when the price is none of ours. */
  readonly planId: string | undefined;
  /** Stripe's statuses, as they are: active, trialing, past_due, unpaid, canceled, incomplete… */
  readonly status: string;
  readonly currentPeriodEnd: Date;
  readonly cancelAtPeriodEnd: boolean;
}

/** What happened at the provider, with the current state of what it names. */
export type PaymentFact =
  | {
      /** A checkout finished: the customer is the account's; a subscription started or a card was saved. */
      readonly type: 'checkout_completed';
      readonly accountId: string;
      readonly customerId: string;
      readonly subscription: SubscriptionState | null;
      /** A card saved (setup mode) or paid with. */
      readonly cardOnFile: boolean;
    }
  | {
      /** A subscription changed (created, renewed, updated, deleted, paid or not): its state now. */
      readonly type: 'subscription';
      readonly customerId: string;
      /** null: the provider no longer knows it (treated as canceled). */
      readonly subscription: SubscriptionState | null;
      readonly subscriptionId: string;
    }
  | {
      /** A payment that is not a subscription's (a Pay as you Go invoice) failed or succeeded. */
      readonly type: 'invoice';
      readonly customerId: string;
      readonly invoiceId: string;
      readonly paid: boolean;
    }
  | {
      /** A payment was refunded or disputed. */
      readonly type: 'reversal';
      readonly kind: 'refund' | 'dispute';
      readonly customerId: string;
      /** The refund's or dispute's own id: recorded once. */
      readonly reference: string;
      readonly chargeId: string;
      readonly invoiceId: string | null;
      /** Whether it reverses a subscription's payment (the account then moves to Free at once). */
      readonly subscriptionId: string | null;
      readonly amountCents: Cents;
      /** What the reversed payment paid, and the period of the calls it paid for. */
      readonly paidCents: Cents;
      readonly usagePeriod: string;
    }
  | {
      /** An owner's connected account changed (onboarding progressed, or the provider needs more). */
      readonly type: 'payout_account';
      readonly connectedAccountId: string;
      readonly state: ConnectedAccountState;
    }
  | {
      /** A card was saved or removed outside a checkout (the customer portal). */
      readonly type: 'card';
      readonly customerId: string;
      readonly cardOnFile: boolean;
    };

/** Where an owner is paid, as the provider says. */
export interface ConnectedAccountState {
  readonly detailsSubmitted: boolean;
  readonly payoutsEnabled: boolean;
  /** What the provider still needs (its field names). */
  readonly requirements: readonly string[];
}

export interface TransferRequest {
  readonly connectedAccountId: string;
  readonly cents: Cents;
  readonly ownerId: string;
  readonly period: string;
  /** One transfer per owner and period, whoever asks and how often. */
  readonly idempotencyKey: string;
}

/** A transfer the provider refused (no capability, no balance…): the payout fails and is carried. */
export class TransferFailure extends Error {
  override readonly name = 'TransferFailure';
}

/** A provider event, verified, with what it means for us (none: nothing to do). */
export interface ProviderEvent {
  readonly id: string;
  readonly type: string;
  /** Reads what the event names from the provider; empty when it concerns nothing of ours. */
  facts(): Promise<readonly PaymentFact[]>;
}

/** One line of a Pay as you Go invoice. */
export interface InvoiceLine {
  readonly description: string;
  readonly cents: Cents;
  /** The analytic it is for, or null (the carried rest). */
  readonly analytic: string | null;
}

export interface CheckoutRequest {
  readonly account: { readonly id: string; readonly email: string; readonly name: string };
  /** The account's customer at the provider, once it has one. */
  readonly customerId: string | null;
  readonly plan: Plan;
  /** `subscription`: pay for a plan; `setup`: save a card (Pay as you Go). */
  readonly mode: 'subscription' | 'setup';
  readonly successUrl: string;
  readonly cancelUrl: string;
}

export interface Checkout {
  readonly id: string;
  readonly url: string;
  /** The account's customer at the provider (created for this checkout if it had none). */
  readonly customerId: string;
}

export interface InvoiceRequest {
  readonly customerId: string;
  readonly accountId: string;
  readonly period: string;
  readonly lines: readonly InvoiceLine[];
  /** Derives every idempotency key of the provider calls: one invoice, whoever asks and how often. */
  readonly idempotencyKey: string;
}

export interface InvoiceOutcome {
  readonly invoiceId: string;
  readonly paid: boolean;
}

/** A payment provider: `sandbox` or `stripe` (`none` has no provider). */
export interface PaymentProvider {
  readonly kind: Exclude<PaymentsKind, 'none'>;
  /** A page where the account pays for `plan` or saves a card. */
  createCheckout(request: CheckoutRequest): Promise<Checkout>;
  /**
   * Moves a paying subscription to a dearer plan now (the difference is charged at once): its
   * state after. Cheaper plans and cancels go through the portal, at the period's end.
   */
  changeSubscription(billing: BillingAccount, plan: Plan): Promise<SubscriptionState>;
  /** A page where the customer manages its card, invoices and subscription. */
  createPortal(customerId: string, returnUrl: string): Promise<{ readonly url: string }>;
  /** Verifies a webhook delivery (raw body, signature header); throws a PaymentSignatureError. */
  verifyWebhook?(rawBody: string, signature: string | undefined): ProviderEvent;
  /** Invoices and charges a Pay as you Go period to the card on file, once per idempotency key. */
  chargeInvoice(request: InvoiceRequest): Promise<InvoiceOutcome>;
  /** Ends a subscription now (a refund, or a grace period that ran out). Idempotent. */
  cancelSubscription(subscriptionId: string): Promise<void>;
  /** A connected account for an owner to be paid on (made once per owner). */
  createConnectedAccount(owner: { readonly id: string; readonly email: string }): Promise<string>;
  /** A page where the owner says where to be paid; `refreshUrl` when the link has expired. */
  onboardingLink(
    connectedAccountId: string,
    returnUrl: string,
    refreshUrl: string,
  ): Promise<{ readonly url: string }>;
  connectedAccountState(connectedAccountId: string): Promise<ConnectedAccountState>;
  /** Pays an owner's payout to its connected account; TransferFailure when the provider refuses. */
  transfer(request: TransferRequest): Promise<{ readonly transferId: string }>;
}

/** A webhook whose signature does not verify: answered 400, nothing changed. */
export class PaymentSignatureError extends Error {
  override readonly name = 'PaymentSignatureError';
}
