import { describe, expect, it } from 'vitest';
import { createPlanPolicies, RateLimitOverrideSchema } from './plan-policies.js';

describe('plan rate-limit policies', () => {
  it('gives each plan its default and unknown plans the free one', () => {
    const plans = createPlanPolicies();
    expect(plans.forPlan('free')).toEqual({ limit: 10, windowSeconds: 60, burst: 5 });
    expect(plans.forPlan('smb')).toEqual({ limit: 60, windowSeconds: 60, burst: 20 });
    expect(plans.forPlan('enterprise')).toEqual({ limit: 600, windowSeconds: 60, burst: 100 });
    expect(plans.forPlan('payg')).toEqual({ limit: 300, windowSeconds: 60, burst: 50 });
    expect(plans.forPlan('no-such-plan')).toEqual({ limit: 10, windowSeconds: 60, burst: 5 });
  });

  it('lets configuration replace a plan and add new ones, validating them', () => {
    const plans = createPlanPolicies({
      smb: { limit: 120, windowSeconds: 60, burst: 0 },
      partner: { limit: 5, windowSeconds: 1, burst: 5 },
    });
    expect(plans.forPlan('smb')).toEqual({ limit: 120, windowSeconds: 60, burst: 0 });
    expect(plans.forPlan('partner')).toEqual({ limit: 5, windowSeconds: 1, burst: 5 });
    expect(plans.forPlan('free').limit).toBe(10);
    expect(() => createPlanPolicies({ free: { limit: 0, windowSeconds: 60, burst: 1 } })).toThrow();
  });

  it('applies a per-key override over the plan default, field by field', () => {
    const plans = createPlanPolicies();
    expect(plans.resolve('smb', null)).toEqual({
      unlimited: false,
      policy: { limit: 60, windowSeconds: 60, burst: 20 },
    });
    expect(plans.resolve('smb', { limit: 5 })).toEqual({
      unlimited: false,
      policy: { limit: 5, windowSeconds: 60, burst: 20 },
    });
    expect(plans.resolve('free', { limit: 1000, window_seconds: 3600, burst: 0 })).toEqual({
      unlimited: false,
      policy: { limit: 1000, windowSeconds: 3600, burst: 0 },
    });
    expect(plans.resolve('free', { unlimited: true })).toEqual({ unlimited: true });
  });

  it('never turns a malformed override into an unlimited key', () => {
    const plans = createPlanPolicies();
    for (const bad of [{ unlimited: false }, { limit: -1 }, { limit: 'many' }, {}, 'unlimited', { foo: 1 }]) {
      const resolved = plans.resolve('free', bad);
      expect(resolved.unlimited).toBe(false);
      if (!resolved.unlimited) {
        expect(resolved.policy).toEqual({ limit: 10, windowSeconds: 60, burst: 5 });
        expect(resolved.invalidOverride).toBeTruthy();
      }
    }
    expect(RateLimitOverrideSchema.safeParse({ unlimited: true, limit: 3 }).success).toBe(false);
  });
});
