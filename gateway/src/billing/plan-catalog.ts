// The plan catalog (DESIGN.md §4): calls included per calendar month (UTC), the monthly price,
// and for Pay as you Go the price per call. Money is integer minor units (US cents). The
// defaults follow the price list; the operator overrides them through configuration.
import { z } from 'zod';

export const PlanSchema = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/),
    name: z.string().min(1),
    /** Calls included per month; null means no cap (billed per call). */
    included_calls: z.number().int().min(0).nullable(),
    /** Subscription price per month, in cents. */
    monthly_price_cents: z.number().int().min(0),
    /** Price per call, in cents (Pay as you Go). */
    per_call_cents: z.number().int().min(0),
  })
  .strict();

export type Plan = z.infer<typeof PlanSchema>;

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
