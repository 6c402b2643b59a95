// Which rate limit applies to a key: its plan's default policy, overridden per key by the
// operator through `api_keys.rate_limit` (jsonb). An override may set any of
// {limit, window_seconds, burst} (the rest come from the plan), or `{unlimited: true}`, which
// only the operator API writes. A stored override that does not parse is ignored in favour of the
// plan default and reported: a bad row must never make a key unlimited, nor fail its requests.
import { z } from 'zod';
import type { RateLimitPolicy } from './rate-limiter.js';

export const RateLimitPolicySchema = z
  .object({
    limit: z.number().int().min(1),
    windowSeconds: z.number().int().min(1),
    burst: z.number().int().min(0),
  })
  .strict();

/** The shape of `api_keys.rate_limit`; validate with it before writing one. */
export const RateLimitOverrideSchema = z.union([
  z.object({ unlimited: z.literal(true) }).strict(),
  z
    .object({
      limit: z.number().int().min(1).optional(),
      window_seconds: z.number().int().min(1).optional(),
      burst: z.number().int().min(0).optional(),
    })
    .strict()
    .refine((o) => o.limit !== undefined || o.window_seconds !== undefined || o.burst !== undefined, {
      message: 'set at least one of limit, window_seconds, burst (or unlimited: true)',
    }),
]);

export type RateLimitOverride = z.infer<typeof RateLimitOverrideSchema>;

/** The defaults per plan id (docs/design.md §4, plans); `free` is also the fallback for unknown plans. */
export const DEFAULT_PLAN_RATE_LIMITS: Readonly<Record<string, RateLimitPolicy>> = {
  free: { limit: 10, windowSeconds: 60, burst: 5 },
  smb: { limit: 60, windowSeconds: 60, burst: 20 },
  enterprise: { limit: 600, windowSeconds: 60, burst: 100 },
  payg: { limit: 300, windowSeconds: 60, burst: 50 },
};

/** What applies to one key. */
export type ResolvedRateLimit =
  | { readonly unlimited: false; readonly policy: RateLimitPolicy; readonly invalidOverride?: string }
  | { readonly unlimited: true };

export interface PlanPolicies {
  /** The plan's default policy; an unknown plan gets `free`'s (never unlimited by accident). */
  forPlan(planId: string): RateLimitPolicy;
  /** The plan default with the key's override (`api_keys.rate_limit`, null when none) applied. */
  resolve(planId: string, override: unknown): ResolvedRateLimit;
}

/**
 * Builds the table: `overrides` (from configuration, validated with RateLimitPolicySchema)
 * replace the defaults plan by plan; plans not named keep theirs.
 */
export function createPlanPolicies(overrides: Readonly<Record<string, RateLimitPolicy>> = {}): PlanPolicies {
  const table = new Map<string, RateLimitPolicy>(Object.entries(DEFAULT_PLAN_RATE_LIMITS));
  for (const [plan, policy] of Object.entries(overrides)) {
    table.set(plan, RateLimitPolicySchema.parse(policy));
  }
  const free = table.get('free');
  if (!free) throw new Error('the rate-limit table needs a "free" plan');
  // Resolved results for keys without an override are shared, not rebuilt per request.
  const plain = new Map<string, ResolvedRateLimit>();

  function forPlan(planId: string): RateLimitPolicy {
    return table.get(planId) ?? free!;
  }

  return {
    forPlan,
    resolve(planId, override) {
      if (override === null || override === undefined) {
        let resolved = plain.get(planId);
        if (!resolved) {
          resolved = { unlimited: false, policy: forPlan(planId) };
          if (table.has(planId)) plain.set(planId, resolved);
        }
        return resolved;
      }
      const parsed = RateLimitOverrideSchema.safeParse(override);
      const base = forPlan(planId);
      if (!parsed.success) {
        const problem = parsed.error.issues
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ');
        return { unlimited: false, policy: base, invalidOverride: problem };
      }
      const o = parsed.data;
      if ('unlimited' in o) return { unlimited: true };
      return {
        unlimited: false,
        policy: {
          limit: o.limit ?? base.limit,
          windowSeconds: o.window_seconds ?? base.windowSeconds,
          burst: o.burst ?? base.burst,
        },
      };
    },
  };
}

/** QUARRY_RATE_LIMITS, parsed JSON (`{"free": {"limit": 10, "window_seconds": 60, "burst": 5}, …}`). */
export function parseRateLimitTable(value: unknown): Record<string, RateLimitPolicy> {
  if (value === undefined) return {};
  const Entry = z
    .object({
      limit: z.number().int().min(1),
      window_seconds: z.number().positive(),
      burst: z.number().int().min(0).default(0),
    })
    .strict();
  const parsed = z.record(z.string(), Entry).safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `QUARRY_RATE_LIMITS: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const out: Record<string, RateLimitPolicy> = {};
  for (const [plan, e] of Object.entries(parsed.data)) {
    out[plan] = { limit: e.limit, windowSeconds: e.window_seconds, burst: e.burst };
  }
  return out;
}
