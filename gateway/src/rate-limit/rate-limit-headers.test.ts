import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from './memory-rate-limiter.js';
import {
  formatQuotaPolicyItem,
  formatServiceLimitItem,
  formatSfString,
  rateLimitHeaders,
  secondsToNextRequest,
} from './rate-limit-headers.js';
import type { RateLimitDecision, RateLimitPolicy } from './rate-limiter.js';

const policy: RateLimitPolicy = { limit: 60, windowSeconds: 60, burst: 80 };

describe('rate-limit headers', () => {
  it('writes the draft structured-field form on an admitted request, without Retry-After', () => {
    // T = 1 s; the bucket holds 80. 17 left and full in 62.5 s: the next slot frees in 0.5 s.
    const allowed: RateLimitDecision = {
      allowed: true,
      limit: 60,
      remaining: 17,
      resetSeconds: 62.5,
      retryAfterSeconds: 0,
    };
    expect(rateLimitHeaders(policy, allowed)).toEqual({
      'RateLimit-Policy': '"default";q=60;w=60',
      RateLimit: '"default";r=17;t=1',
    });
  });

  it('gives t as the time until the next request frees up, matching the limiter', () => {
    let now = 0;
    const limiter = createMemoryRateLimiter({ clock: () => now });
    const free: RateLimitPolicy = { limit: 10, windowSeconds: 60, burst: 15 }; // T = 6 s
    let last = limiter.check('k', free);
    expect(rateLimitHeaders(free, last).RateLimit).toBe('"default";r=14;t=6');
    for (let i = 0; i < 14; i++) last = limiter.check('k', free);
    expect(last.resetSeconds).toBe(90);
    expect(rateLimitHeaders(free, last).RateLimit).toBe('"default";r=0;t=6');
    now = 4_000;
    expect(secondsToNextRequest(free, limiter.check('k', free))).toBe(2);
    now = 10_000; // one slot came back at 6 s; the next at 12 s
    last = limiter.check('k', free);
    expect(last).toMatchObject({ allowed: true, remaining: 0 });
    expect(secondsToNextRequest(free, last)).toBe(2);
  });

  it('adds Retry-After in whole seconds rounded up on a denied request', () => {
    const denied: RateLimitDecision = {
      allowed: false,
      limit: 60,
      remaining: 0,
      resetSeconds: 1.5,
      retryAfterSeconds: 1.5,
    };
    expect(rateLimitHeaders(policy, denied, 'per-key')).toEqual({
      'RateLimit-Policy': '"per-key";q=60;w=60',
      RateLimit: '"per-key";r=0;t=2',
      'Retry-After': '2',
    });
    const barely = { ...denied, retryAfterSeconds: 0.000001, resetSeconds: 0.000001 };
    expect(rateLimitHeaders(policy, barely)['Retry-After']).toBe('1');
    expect(rateLimitHeaders(policy, { ...denied, retryAfterSeconds: 6 })['Retry-After']).toBe('6');
  });

  it('keeps every value a valid structured-field Integer or String', () => {
    expect(formatQuotaPolicyItem('monthly', 30)).toBe('"monthly";q=30');
    expect(formatServiceLimitItem('monthly', 12)).toBe('"monthly";r=12');
    expect(formatServiceLimitItem('x', -3, 0)).toBe('"x";r=0;t=0');
    expect(formatQuotaPolicyItem('x', 10.9, 0.5)).toBe('"x";q=10;w=1');
    expect(formatSfString('a "quoted" \\ name')).toBe('"a \\"quoted\\" \\\\ name"');
    expect(() => formatSfString('naïve')).toThrow(/structured-field/);
  });
});
