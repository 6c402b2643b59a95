// What a payment means for an account's plan (docs/money.md, "Paying for a plan"), one function
// per rule, pure: given what the gateway knows of the account and what the provider reports now,
// the plan the account is on from now and the standing to record. Applying the same state twice,
// or states in any order, ends where the latest state says.

import type { SubscriptionState } from './payment-provider.js';
import type { BillingAccount, StandingChange } from './payment-repository.js';
import type { PlanCatalog } from './plan-catalog.js';

/** The plan every account falls back to. */
export const FREE_PLAN = 'free';

/** A rule's verdict: the plan to move to now (undefined: keep it) and the standing to record. */
export interface Verdict {
  readonly plan?: string;
  readonly change: StandingChange;
}

/** Subscription statuses that pay for their plan. */
const PAYING = new Set(['active', 'trialing']);
/** Statuses that still owe a payment: the account keeps its plan for the grace period. */
const OWING = new Set(['past_due', 'unpaid']);
/** Statuses of a subscription that is over. */
const ENDED = new Set(['canceled', 'incomplete_expired']);

/**
 * Whether moving from `from` to `to` is an upgrade, applied at once: any subscription taken from
 * a plan without one (Free, Pay as you Go), or a dearer one. A move to a cheaper plan waits for
 * the end of the period already paid for.
 */
export function isUpgrade(plans: PlanCatalog, from: string, to: string): boolean {
  const current = plans.resolve(from);
  const next = plans.resolve(to);
  if (current.monthly_price_cents === 0) return true;
  return next.monthly_price_cents > current.monthly_price_cents;
}

const ended: StandingChange = {
  subscriptionId: null,
  subscriptionPlan: null,
  status: 'canceled',
  cancelAtPeriodEnd: false,
  pendingPlan: null,
  pendingAt: null,
  pastDueSince: null,
};

/**
 * A subscription as it stands now. Paying: its plan (an upgrade at once, a downgrade or a cancel at
 * the period's end). Owing: past due, keeping the plan until the grace period ends. Over: Free at
 * once. A state of another subscription than the account's current one changes nothing (a late
 * event of a subscription since replaced); an incomplete one (its first payment not made) neither.
 */
export function subscriptionVerdict(
  plans: PlanCatalog,
  accountPlan: string,
  billing: BillingAccount,
  subscriptionId: string,
  sub: SubscriptionState | null,
  now: Date,
): Verdict {
  const current = billing.subscriptionId;
  const status = sub?.status ?? 'canceled';
  if (current !== null && current !== subscriptionId && !PAYING.has(status)) return { change: {} };
  if (ENDED.has(status)) {
    if (current !== subscriptionId) return { change: {} };
    // Whatever subscription plan the account is on (a downgrade may be pending) ends with it.
    const subscribed = plans.resolve(accountPlan).monthly_price_cents > 0;
    return { ...(subscribed ? { plan: FREE_PLAN } : {}), change: ended };
  }
  if (sub === null || sub.planId === undefined || plans.get(sub.planId) === undefined) return { change: {} };
  const base: StandingChange = {
    subscriptionId: sub.id,
    subscriptionPlan: sub.planId,
    currentPeriodEnd: sub.currentPeriodEnd,
    cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
  };
  if (OWING.has(status)) {
    return { change: { ...base, status: 'past_due', pastDueSince: billing.pastDueSince ?? now } };
  }
  if (!PAYING.has(status)) return { change: {} };
  const paying: StandingChange = { ...base, status: 'active', pastDueSince: null };
  if (sub.cancelAtPeriodEnd) {
    const plan =
      accountPlan === sub.planId || isUpgrade(plans, accountPlan, sub.planId) ? sub.planId : undefined;
    return {
      ...(plan !== undefined && plan !== accountPlan ? { plan } : {}),
      change: { ...paying, pendingPlan: FREE_PLAN, pendingAt: sub.currentPeriodEnd },
    };
  }
  if (accountPlan === sub.planId) return { change: { ...paying, pendingPlan: null, pendingAt: null } };
  if (isUpgrade(plans, accountPlan, sub.planId)) {
    return { plan: sub.planId, change: { ...paying, pendingPlan: null, pendingAt: null } };
  }
  return { change: { ...paying, pendingPlan: sub.planId, pendingAt: sub.currentPeriodEnd } };
}

/** A plan change that was waiting for the period's end, now due: applied. */
export function pendingVerdict(billing: BillingAccount, now: Date): Verdict {
  if (billing.pendingPlan === null || billing.pendingAt === null || billing.pendingAt > now)
    return { change: {} };
  const toFree = billing.pendingPlan === FREE_PLAN;
  return {
    plan: billing.pendingPlan,
    change: {
      pendingPlan: null,
      pendingAt: null,
      ...(toFree ? { subscriptionPlan: null, cancelAtPeriodEnd: false } : {}),
    },
  };
}

/** A payment still failed when the grace period ran out: Free, and the subscription ended. */
export function graceVerdict(billing: BillingAccount, now: Date, graceMs: number): Verdict {
  if (billing.status !== 'past_due' || billing.pastDueSince === null) return { change: {} };
  if (billing.pastDueSince.getTime() + graceMs > now.getTime()) return { change: {} };
  return { plan: FREE_PLAN, change: ended };
}

/** A subscription's payment refunded or disputed: Free at once, the subscription ended. */
export function reversalVerdict(billing: BillingAccount, subscriptionId: string | null): Verdict {
  if (subscriptionId === null) return { change: {} };
  return { plan: FREE_PLAN, change: billing.subscriptionId === subscriptionId ? ended : {} };
}

/**
 * A Pay as you Go invoice paid or failed. Failed: past due (Free after the grace period, as a
 * failed renewal). Paid: no longer past due, unless a subscription still owes.
 */
export function invoiceVerdict(billing: BillingAccount, paid: boolean, now: Date): Verdict {
  if (!paid) return { change: { status: 'past_due', pastDueSince: billing.pastDueSince ?? now } };
  if (billing.status !== 'past_due' || billing.subscriptionId !== null) return { change: {} };
  return { change: { status: 'none', pastDueSince: null } };
}
