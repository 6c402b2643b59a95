// The rules that turn a provider's state into a plan, with the clock given: upgrades at once,
// downgrades and cancels at the period's end, past due kept for the grace period then Free,
// refunds Free at once, stale and incomplete subscriptions ignored, and the same state applied
// twice changing nothing the second time. Plus the Pay as you Go invoice lines in whole cents.
import { describe, expect, it } from 'vitest';
import type { SubscriptionState } from './payment-provider.js';
import type { BillingAccount } from './payment-repository.js';
import { paygLines } from './payments-service.js';
import { createPlanCatalog, defaultPlans } from './plan-catalog.js';
import {
  graceVerdict,
  invoiceVerdict,
  isUpgrade,
  pendingVerdict,
  reversalVerdict,
  subscriptionVerdict,
} from './subscription-rules.js';

const plans = createPlanCatalog(defaultPlans());
const now = new Date('2026-11-15T12:00:00Z');
const periodEnd = new Date('2026-12-15T12:00:00Z');
const DAY = 86_400_000;

const billing = (over: Partial<BillingAccount> = {}): BillingAccount => ({
  accountId: 'acc_1',
  provider: 'stripe',
  customerId: 'cus_1',
  subscriptionId: null,
  subscriptionPlan: null,
  status: 'none',
  currentPeriodEnd: null,
  cancelAtPeriodEnd: false,
  pendingPlan: null,
  pendingAt: null,
  pastDueSince: null,
  cardOnFile: false,
  ...over,
});

const sub = (over: Partial<SubscriptionState> = {}): SubscriptionState => ({
  id: 'sub_1',
  customerId: 'cus_1',
  planId: 'smb',
  status: 'active',
  currentPeriodEnd: periodEnd,
  cancelAtPeriodEnd: false,
  ...over,
});

/** The billing account after a verdict's change. */
const after = (b: BillingAccount, change: Partial<BillingAccount>): BillingAccount => ({ ...b, ...change });

describe('subscription rules', () => {
  it('ranks plans: any subscription from Free or Pay as you Go, or a dearer one, is an upgrade', () => {
    expect(isUpgrade(plans, 'free', 'smb')).toBe(true);
    expect(isUpgrade(plans, 'payg', 'smb')).toBe(true);
    expect(isUpgrade(plans, 'smb', 'enterprise')).toBe(true);
    expect(isUpgrade(plans, 'enterprise', 'smb')).toBe(false);
  });

  it('upgrades at once, and applying the same state again changes nothing more', () => {
    const b = billing();
    const first = subscriptionVerdict(plans, 'free', b, 'sub_1', sub(), now);
    expect(first.plan).toBe('smb');
    expect(first.change).toMatchObject({
      subscriptionId: 'sub_1',
      status: 'active',
      currentPeriodEnd: periodEnd,
    });
    const again = subscriptionVerdict(plans, 'smb', after(b, first.change), 'sub_1', sub(), now);
    expect(again.plan).toBeUndefined();
  });

  it('downgrades at the end of the period already paid for', () => {
    const b = billing({ subscriptionId: 'sub_1', subscriptionPlan: 'enterprise', status: 'active' });
    const v = subscriptionVerdict(plans, 'enterprise', b, 'sub_1', sub({ planId: 'smb' }), now);
    expect(v.plan).toBeUndefined();
    expect(v.change).toMatchObject({ pendingPlan: 'smb', pendingAt: periodEnd });
    const pending = after(b, v.change);
    expect(pendingVerdict(pending, new Date(periodEnd.getTime() - 1)).plan).toBeUndefined();
    expect(pendingVerdict(pending, periodEnd)).toMatchObject({ plan: 'smb', change: { pendingPlan: null } });
  });

  it('cancels at the period’s end: Free then, the plan until then', () => {
    const b = billing({ subscriptionId: 'sub_1', subscriptionPlan: 'smb', status: 'active' });
    const v = subscriptionVerdict(plans, 'smb', b, 'sub_1', sub({ cancelAtPeriodEnd: true }), now);
    expect(v.plan).toBeUndefined();
    expect(v.change).toMatchObject({ pendingPlan: 'free', pendingAt: periodEnd, cancelAtPeriodEnd: true });
    expect(pendingVerdict(after(b, v.change), periodEnd).plan).toBe('free');
  });

  it('ends a subscription at once when the provider says it is over, even with a downgrade pending', () => {
    const b = billing({
      subscriptionId: 'sub_1',
      subscriptionPlan: 'smb',
      pendingPlan: 'smb',
      pendingAt: periodEnd,
    });
    const v = subscriptionVerdict(plans, 'enterprise', b, 'sub_1', sub({ status: 'canceled' }), now);
    expect(v).toMatchObject({
      plan: 'free',
      change: { status: 'canceled', subscriptionId: null, pendingPlan: null },
    });
    expect(subscriptionVerdict(plans, 'smb', b, 'sub_1', null, now).plan).toBe('free');
  });

  it('ignores a stale subscription’s end, and an incomplete one', () => {
    const b = billing({ subscriptionId: 'sub_2', subscriptionPlan: 'enterprise', status: 'active' });
    expect(subscriptionVerdict(plans, 'enterprise', b, 'sub_1', sub({ status: 'canceled' }), now)).toEqual({
      change: {},
    });
    expect(
      subscriptionVerdict(plans, 'free', billing(), 'sub_1', sub({ status: 'incomplete' }), now),
    ).toEqual({
      change: {},
    });
    expect(subscriptionVerdict(plans, 'free', billing(), 'sub_1', sub({ planId: 'gold' }), now)).toEqual({
      change: {},
    });
  });

  it('keeps a past-due account on its plan for the grace period, then Free', () => {
    const b = billing({ subscriptionId: 'sub_1', subscriptionPlan: 'smb', status: 'active' });
    const v = subscriptionVerdict(plans, 'smb', b, 'sub_1', sub({ status: 'past_due' }), now);
    expect(v.plan).toBeUndefined();
    expect(v.change).toMatchObject({ status: 'past_due', pastDueSince: now });
    const owing = after(b, v.change);
    // A later event keeps the first failure's time: the grace period does not restart.
    const later = new Date(now.getTime() + 3 * DAY);
    expect(
      subscriptionVerdict(plans, 'smb', owing, 'sub_1', sub({ status: 'past_due' }), later).change,
    ).toMatchObject({
      pastDueSince: now,
    });
    expect(graceVerdict(owing, new Date(now.getTime() + 7 * DAY - 1), 7 * DAY).plan).toBeUndefined();
    expect(graceVerdict(owing, new Date(now.getTime() + 7 * DAY), 7 * DAY)).toMatchObject({
      plan: 'free',
      change: { status: 'canceled', subscriptionId: null },
    });
    // Paid in time: active again, no grace running.
    const paid = subscriptionVerdict(plans, 'smb', owing, 'sub_1', sub(), later);
    expect(paid.change).toMatchObject({ status: 'active', pastDueSince: null });
    expect(
      graceVerdict(after(owing, paid.change), new Date(now.getTime() + 30 * DAY), 7 * DAY).plan,
    ).toBeUndefined();
  });

  it('moves to Free at once when a subscription payment is refunded or disputed, not a Pay as you Go one', () => {
    const b = billing({ subscriptionId: 'sub_1', subscriptionPlan: 'smb', status: 'active' });
    expect(reversalVerdict(b, 'sub_1')).toMatchObject({ plan: 'free', change: { status: 'canceled' } });
    expect(reversalVerdict(b, null)).toEqual({ change: {} });
  });

  it('makes a failed Pay as you Go invoice past due, and a paid one clears it', () => {
    const failed = invoiceVerdict(billing({ cardOnFile: true }), false, now);
    expect(failed.change).toEqual({ status: 'past_due', pastDueSince: now });
    const owing = after(billing(), failed.change);
    expect(invoiceVerdict(owing, true, now).change).toEqual({ status: 'none', pastDueSince: null });
  });
});

describe('Pay as you Go invoice lines', () => {
  it('bills whole cents per analytic and carries the rest', () => {
    // 37 calls of a 3-credit analytic at 0.50 USD a credit: 55.50 USD.
    const one = paygLines(
      [{ analytic: 'top-products', calls: 37, millicredits: 111_000, valueMicroUsd: 55_500_000 }],
      0,
    );
    expect(one).toEqual({
      lines: [{ description: 'top-products: 37 calls, 111 credits', cents: 5_550, analytic: 'top-products' }],
      amountMicroUsd: 55_500_000,
      cents: 5_550,
      carryOut: 0,
    });
    // Sub-cent values: two lines of 1.2345 cents each and 0.7 cents carried in.
    const split = paygLines(
      [
        { analytic: 'a', calls: 1, millicredits: 1_000, valueMicroUsd: 12_345 },
        { analytic: 'b', calls: 1, millicredits: 1_000, valueMicroUsd: 12_345 },
      ],
      7_000,
    );
    expect(split.amountMicroUsd).toBe(31_690);
    expect(split.cents).toBe(3);
    expect(split.carryOut).toBe(1_690);
    expect(split.lines.map((l) => l.cents)).toEqual([1, 1, 1]);
    expect(split.lines.reduce((sum, l) => sum + l.cents, 0) * 10_000 + split.carryOut).toBe(
      split.amountMicroUsd,
    );
  });
});
