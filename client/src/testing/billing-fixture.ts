// `GET /v1/billing` answers for the client's and the CLI's tests: the default price list (Free 30
// credits, SMB 250 at 49 USD, Enterprise 2,000 at 199 USD, Pay as you Go at 0.50 USD a credit),
// with the account on `plan` and the actions the gateway's contract gives for it.
import type { Billing, BillingAction, BillingPlan, Plan } from '../types.js';

export const PLANS: readonly Plan[] = [
  {
    id: 'free',
    name: 'Forever Free',
    included_calls: 30,
    included_credits: 30,
    monthly_price_cents: 0,
    per_call_cents: 0,
    credit_price_cents: 0,
    credit_value_usd: 0,
  },
  {
    id: 'smb',
    name: 'SMB',
    included_calls: 250,
    included_credits: 250,
    monthly_price_cents: 4_900,
    per_call_cents: 0,
    credit_price_cents: 0,
    credit_value_usd: 0.196,
  },
  {
    id: 'enterprise',
    name: 'Enterprise',
    included_calls: 2_000,
    included_credits: 2_000,
    monthly_price_cents: 19_900,
    per_call_cents: 0,
    credit_price_cents: 0,
    credit_value_usd: 0.0995,
  },
  {
    id: 'payg',
    name: 'Pay as you Go',
    included_calls: null,
    included_credits: null,
    monthly_price_cents: 0,
    per_call_cents: 50,
    credit_price_cents: 50,
    credit_value_usd: 0.5,
  },
];

const RANK: Readonly<Record<string, number>> = { free: 0, payg: 1, smb: 2, enterprise: 3 };

function actionFor(plan: Plan, current: string, provider: Billing['provider']): BillingAction | null {
  if (plan.id === current) return 'current';
  if (provider === 'none') return null;
  if (plan.id === 'payg') return 'add_card';
  if (plan.id === 'free') return current === 'free' ? null : 'downgrade';
  return (RANK[plan.id] ?? 0) > (RANK[current] ?? 0) ? 'upgrade' : 'downgrade';
}

/** A billing answer for an account on `plan` (default Free, sandbox payments), with `overrides`. */
export function billingAnswer(plan = 'free', overrides: Partial<Billing> = {}): Billing {
  const provider = overrides.provider ?? 'sandbox';
  const current = PLANS.find((p) => p.id === plan) ?? (PLANS[0] as Plan);
  const plans: BillingPlan[] = PLANS.map((p) => ({
    ...p,
    current: p.id === plan,
    action: provider === 'none' && p.id === plan ? null : actionFor(p, plan, provider),
  }));
  const paid = plan !== 'free';
  return {
    provider,
    plan: current,
    status: paid ? 'active' : 'none',
    current_period_end: paid ? '2026-12-31T23:59:59.000Z' : null,
    cancel_at_period_end: false,
    pending_plan: null,
    pending_at: null,
    grace_ends_at: null,
    card_on_file: paid,
    portal: paid,
    budget:
      plan === 'payg'
        ? {
            budget_usd: 100,
            spent_usd: 1.5,
            left_usd: 98.5,
            budget_micro_usd: 100_000_000,
            spent_micro_usd: 1_500_000,
            left_micro_usd: 98_500_000,
          }
        : null,
    plans,
    invoices: [],
    ...overrides,
  };
}
