// The sandbox payment provider (QUARRY_PAYMENTS=sandbox, the embedded default): checkout and
// portal pages served by the gateway itself, marked "Sandbox: no money moves", where a person
// pays or declines with one click, so the whole upgrade journey runs offline. Its sessions live
// in this process for an hour (one instance: the embedded setup); what a payment changed is in
// the store like any provider's. Every invoice it is asked to charge is paid.
import { randomBytes } from 'node:crypto';
import type {
  Checkout,
  CheckoutRequest,
  InvoiceOutcome,
  InvoiceRequest,
  PaymentFact,
  PaymentProvider,
  SubscriptionState,
} from './payment-provider.js';
import type { BillingAccount } from './payment-repository.js';
import type { Plan } from './plan-catalog.js';

const SESSION_MS = 60 * 60_000;

/** A sandbox checkout, as its page shows it. */
export interface SandboxCheckout {
  readonly id: string;
  readonly accountId: string;
  readonly customerId: string;
  readonly plan: Plan;
  readonly mode: 'subscription' | 'setup';
  readonly successUrl: string;
  readonly cancelUrl: string;
  readonly expiresAt: number;
}

/** A sandbox portal session. */
export interface SandboxPortal {
  readonly id: string;
  readonly customerId: string;
  readonly returnUrl: string;
  readonly expiresAt: number;
}

export type SandboxPortalAction = 'cancel' | 'resume' | 'remove_card';

/** A sandbox onboarding link (where an owner is paid). */
export interface SandboxOnboarding {
  readonly id: string;
  readonly connectedAccountId: string;
  readonly returnUrl: string;
  readonly expiresAt: number;
}

export interface SandboxProvider extends PaymentProvider {
  readonly kind: 'sandbox';
  /** An open checkout, or undefined (unknown, finished or expired). */
  checkoutSession(id: string): SandboxCheckout | undefined;
  /** Pays (or declines) a checkout: where the browser goes next, and what it changed. */
  finishCheckout(
    id: string,
    pay: boolean,
  ): { readonly redirect: string; readonly facts: readonly PaymentFact[] } | undefined;
  portalSession(id: string): SandboxPortal | undefined;
  /** A portal action on the account's current standing: what it changed. */
  portalAction(id: string, action: SandboxPortalAction, billing: BillingAccount): readonly PaymentFact[];
  onboardingSession(id: string): SandboxOnboarding | undefined;
  /** Completes an owner's onboarding at once: where the browser goes next, and what it changed. */
  finishOnboarding(
    id: string,
  ): { readonly redirect: string; readonly facts: readonly PaymentFact[] } | undefined;
}

/** The end of the current calendar month (UTC): a sandbox subscription's period. */
function monthEnd(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 1);
}

const token = (prefix: string) => `${prefix}_sandbox_${randomBytes(18).toString('base64url')}`;

export function createSandboxProvider(options: { readonly now?: () => Date } = {}): SandboxProvider {
  const now = options.now ?? (() => new Date());
  const checkouts = new Map<string, SandboxCheckout>();
  const portals = new Map<string, SandboxPortal>();
  const onboardings = new Map<string, SandboxOnboarding>();
  // Connected accounts onboarded in this process (the store keeps what they said: payout_accounts).
  const onboarded = new Set<string>();
  const live = <T extends { expiresAt: number }>(map: Map<string, T>, id: string): T | undefined => {
    const found = map.get(id);
    if (found === undefined) return undefined;
    if (found.expiresAt > now().getTime()) return found;
    map.delete(id);
    return undefined;
  };
  const sweep = () => {
    const at = now().getTime();
    for (const map of [checkouts, portals, onboardings] as Map<string, { expiresAt: number }>[]) {
      for (const [id, entry] of map) if (entry.expiresAt <= at) map.delete(id);
    }
  };

  return {
    kind: 'sandbox',
    async createCheckout(request: CheckoutRequest): Promise<Checkout> {
      sweep();
      const id = token('cs');
      const customerId = request.customerId ?? `cus_sandbox_${request.account.id}`;
      checkouts.set(id, {
        id,
        accountId: request.account.id,
        customerId,
        plan: request.plan,
        mode: request.mode,
        successUrl: request.successUrl,
        cancelUrl: request.cancelUrl,
        expiresAt: now().getTime() + SESSION_MS,
      });
      return { id, url: `/billing/sandbox/checkout/${id}`, customerId };
    },
    async changeSubscription(billing, plan) {
      return {
        id: billing.subscriptionId ?? token('sub'),
        customerId: billing.customerId,
        planId: plan.id,
        status: 'active',
        currentPeriodEnd: billing.currentPeriodEnd ?? monthEnd(now()),
        cancelAtPeriodEnd: false,
      };
    },
    async createPortal(customerId, returnUrl) {
      sweep();
      const id = token('bps');
      portals.set(id, { id, customerId, returnUrl, expiresAt: now().getTime() + SESSION_MS });
      return { url: `/billing/sandbox/portal/${id}` };
    },
    checkoutSession: (id) => live(checkouts, id),
    finishCheckout(id, pay) {
      const session = live(checkouts, id);
      if (session === undefined) return undefined;
      checkouts.delete(id);
      if (!pay) return { redirect: session.cancelUrl, facts: [] };
      const subscription: SubscriptionState | null =
        session.mode === 'subscription'
          ? {
              id: token('sub'),
              customerId: session.customerId,
              planId: session.plan.id,
              status: 'active',
              currentPeriodEnd: monthEnd(now()),
              cancelAtPeriodEnd: false,
            }
          : null;
      return {
        redirect: session.successUrl,
        facts: [
          {
            type: 'checkout_completed',
            accountId: session.accountId,
            customerId: session.customerId,
            subscription,
            cardOnFile: true,
          },
        ],
      };
    },
    portalSession: (id) => live(portals, id),
    portalAction(id, action, billing) {
      const session = live(portals, id);
      if (session === undefined || session.customerId !== billing.customerId) return [];
      if (action === 'remove_card')
        return [{ type: 'card', customerId: billing.customerId, cardOnFile: false }];
      if (billing.subscriptionId === null || billing.subscriptionPlan === null) return [];
      return [
        {
          type: 'subscription',
          customerId: billing.customerId,
          subscriptionId: billing.subscriptionId,
          subscription: {
            id: billing.subscriptionId,
            customerId: billing.customerId,
            planId: billing.subscriptionPlan,
            status: 'active',
            currentPeriodEnd: billing.currentPeriodEnd ?? monthEnd(now()),
            cancelAtPeriodEnd: action === 'cancel',
          },
        },
      ];
    },
    async chargeInvoice(request: InvoiceRequest): Promise<InvoiceOutcome> {
      return { invoiceId: `in_sandbox_${request.accountId}_${request.period}`, paid: true };
    },
    async cancelSubscription() {},
    async createConnectedAccount(owner) {
      return `acct_sandbox_${owner.id}`;
    },
    async onboardingLink(connectedAccountId, returnUrl) {
      sweep();
      const id = token('acctlink');
      onboardings.set(id, { id, connectedAccountId, returnUrl, expiresAt: now().getTime() + SESSION_MS });
      return { url: `/billing/sandbox/onboarding/${id}` };
    },
    async connectedAccountState(connectedAccountId) {
      return onboarded.has(connectedAccountId)
        ? { detailsSubmitted: true, payoutsEnabled: true, requirements: [] }
        : {
            detailsSubmitted: false,
            payoutsEnabled: false,
            requirements: ['external_account', 'tos_acceptance'],
          };
    },
    async transfer(request) {
      return { transferId: `tr_sandbox_${request.ownerId}_${request.period}` };
    },
    onboardingSession: (id) => live(onboardings, id),
    finishOnboarding(id) {
      const session = live(onboardings, id);
      if (session === undefined) return undefined;
      onboardings.delete(id);
      onboarded.add(session.connectedAccountId);
      return {
        redirect: session.returnUrl,
        facts: [
          {
            type: 'payout_account',
            connectedAccountId: session.connectedAccountId,
            state: { detailsSubmitted: true, payoutsEnabled: true, requirements: [] },
          },
        ],
      };
    },
  };
}
