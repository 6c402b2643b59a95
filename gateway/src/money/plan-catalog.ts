// The plan catalog (docs/money.md): credits included per calendar month (UTC) and the monthly
// price, or for Pay as you Go the price of a credit. With the default analytic price of 1 credit
// a call, a plan's credits are the price list's "calls a month". Prices are integer US cents here;
// what one credit is worth to the payer (`creditValueMicroUsd`) is integer micro-USD. The
// defaults follow the price list; the operator overrides them through configuration.

import { z } from 'zod';
import { centsToMicroUsd } from './units.js';

const includedCredits = z.number().int().min(0).nullable();
const creditPriceCents = z.number().int().min(0);

/**
 * A plan as QUARRY_PLANS gives it. `included_calls` and `per_call_cents` are the old names of
 * `included_credits` and `credit_price_cents` (from when a call always cost one credit), still
 * taken.
 */
export const PlanSchema = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/),
    name: z.string().min(1),
    /** Credits included per month; null means none included (Pay as you Go: billed per credit). */
    included_credits: includedCredits.optional(),
    /** Old name of `included_credits`. */
    included_calls: includedCredits.optional(),
    /** Subscription price per month, in cents. */
    monthly_price_cents: z.number().int().min(0),
    /** Price of a credit, in cents (Pay as you Go); 0 when absent. */
    credit_price_cents: creditPriceCents.optional(),
    /** Old name of `credit_price_cents`. */
    per_call_cents: creditPriceCents.optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.included_credits === undefined && p.included_calls === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['included_credits'],
        message: 'required (null for Pay as you Go)',
      });
    }
  })
  .transform(
    (p): Plan => ({
      id: p.id,
      name: p.name,
      included_credits: p.included_credits !== undefined ? p.included_credits : (p.included_calls ?? null),
      monthly_price_cents: p.monthly_price_cents,
      credit_price_cents: p.credit_price_cents ?? p.per_call_cents ?? 0,
    }),
  );

/** A plan: what a month of it includes and costs. */
export interface Plan {
  readonly id: string;
  readonly name: string;
  /** Credits included per month; null means none included (Pay as you Go: billed per credit). */
  readonly included_credits: number | null;
  /** Subscription price per month, in cents. */
  readonly monthly_price_cents: number;
  /** Price of a credit, in cents (Pay as you Go). */
  readonly credit_price_cents: number;
}

/**
 * What one credit is worth to a payer on `plan`, in micro-USD: the plan's price ÷ its included
 * credits, rounded down (SMB 49 USD / 250 = 196,000; Enterprise 199 USD / 2,000 = 99,500), the
 * Pay as you Go price of a credit (0.50 USD = 500,000), 0 for a plan that costs nothing (Free).
 * Rounded down, a credit is never worth more than its payer paid for it.
 */
export function creditValueMicroUsd(plan: Plan): number {
  if (plan.included_credits === null) return centsToMicroUsd(plan.credit_price_cents);
  if (plan.included_credits === 0) return 0;
  return Math.floor(centsToMicroUsd(plan.monthly_price_cents) / plan.included_credits);
}

/** Whether a plan's calls stop at a monthly budget instead of its included credits (Pay as you Go). */
export const isBudgeted = (plan: Plan): boolean => plan.included_credits === null;

export interface PlanCatalog {
  get(id: string): Plan | undefined;
  /** The plan of an account, falling back to `free` for an unknown id (never unlimited by accident). */
  resolve(id: string): Plan;
  list(): readonly Plan[];
}

export function defaultPlans(freeCredits = 30): Plan[] {
  return [
    {
      id: 'free',
      name: 'Forever Free',
      included_credits: freeCredits,
      monthly_price_cents: 0,
      credit_price_cents: 0,
    },
    { id: 'smb', name: 'SMB', included_credits: 250, monthly_price_cents: 4_900, credit_price_cents: 0 },
    {
      id: 'enterprise',
      name: 'Enterprise',
      included_credits: 2_000,
      monthly_price_cents: 19_900,
      credit_price_cents: 0,
    },
    {
      id: 'payg',
      name: 'Pay as you Go',
      included_credits: null,
      monthly_price_cents: 0,
      credit_price_cents: 50,
    },
  ];
}

export function createPlanCatalog(plans: readonly Plan[]): PlanCatalog {
  const byId = new Map(plans.map((p) => [p.id, p]));
  const free = byId.get('free');
  if (!free) throw new Error('the plan catalog needs a "free" plan');
  return {
    get: (id) => byId.get(id),
    resolve: (id) => byId.get(id) ?? free,
    list: () => plans,
  };
}

/** QUARRY_PLANS (a JSON array of plans, parsed) over the defaults; throws listing every problem. */
export function parsePlans(value: unknown, freeCredits: number): Plan[] {
  const defaults = defaultPlans(freeCredits);
  if (value === undefined) return defaults;
  const parsed = z.array(PlanSchema).min(1).safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `QUARRY_PLANS: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const merged = new Map(defaults.map((p) => [p.id, p]));
  for (const plan of parsed.data) merged.set(plan.id, plan);
  return [...merged.values()];
}
