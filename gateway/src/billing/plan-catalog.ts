// The plan catalog (docs/money.md): credits included per calendar month (UTC) and the monthly
// price, or for Pay as you Go the price of a credit. With the default analytic price of 1 credit
// a call, a plan's credits are the price list's "calls a month", hence the field names
// (`included_calls`, `per_call_cents`), kept for QUARRY_PLANS. Prices are integer US cents here;
// what one credit is worth to the payer (`creditValueMicroUsd`) is integer micro-USD. The
// defaults follow the price list; the operator overrides them through configuration.
import { z } from 'zod';

export const PlanSchema = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/),
    name: z.string().min(1),
    /** Credits included per month; null means none included (Pay as you Go: billed per credit). */
    included_calls: z.number().int().min(0).nullable(),
    /** Subscription price per month, in cents. */
    monthly_price_cents: z.number().int().min(0),
    /** Price of a credit, in cents (Pay as you Go). */
    per_call_cents: z.number().int().min(0),
  })
  .strict();

export type Plan = z.infer<typeof PlanSchema>;

/** Millicredits in a credit: credits are stored as integer millicredits. */
export const MILLICREDITS = 1_000;
/** Micro-USD in a cent. */
export const MICRO_USD_PER_CENT = 10_000;

/**
 * What one credit is worth to a payer on `plan`, in micro-USD: the plan's price ÷ its included
 * credits, rounded down (SMB 49 USD / 250 = 196,000; Enterprise 199 USD / 2,000 = 99,500), the
 * Pay as you Go price of a credit (0.50 USD = 500,000), 0 for a plan that costs nothing (Free).
 * Rounded down, a credit is never worth more than its payer paid for it.
 */
export function creditValueMicroUsd(plan: Plan): number {
  if (plan.included_calls === null) return plan.per_call_cents * MICRO_USD_PER_CENT;
  if (plan.included_calls === 0) return 0;
  return Math.floor((plan.monthly_price_cents * MICRO_USD_PER_CENT) / plan.included_calls);
}

/** Whether a plan's calls stop at a monthly budget instead of its included credits (Pay as you Go). */
export const isBudgeted = (plan: Plan): boolean => plan.included_calls === null;

export interface PlanCatalog {
  get(id: string): Plan | undefined;
  /** The plan of an account, falling back to `free` for an unknown id (never unlimited by accident). */
  resolve(id: string): Plan;
  list(): readonly Plan[];
}

export function defaultPlans(freeCalls = 30): Plan[] {
  return [
    {
      id: 'free',
      name: 'Forever Free',
      included_calls: freeCalls,
      monthly_price_cents: 0,
      per_call_cents: 0,
    },
    { id: 'smb', name: 'SMB', included_calls: 250, monthly_price_cents: 4_900, per_call_cents: 0 },
    {
      id: 'enterprise',
      name: 'Enterprise',
      included_calls: 2_000,
      monthly_price_cents: 19_900,
      per_call_cents: 0,
    },
    { id: 'payg', name: 'Pay as you Go', included_calls: null, monthly_price_cents: 0, per_call_cents: 50 },
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
export function parsePlans(value: unknown, freeCalls: number): Plan[] {
  const defaults = defaultPlans(freeCalls);
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
