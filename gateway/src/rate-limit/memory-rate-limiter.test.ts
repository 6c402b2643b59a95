import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimitPolicy } from './rate-limiter.js';

function fakeClock(startMs = 1_000_000) {
  let now = startMs;
  return {
    clock: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('memory rate limiter (GCRA)', () => {
  const policy: RateLimitPolicy = { limit: 10, windowSeconds: 60, burst: 15 }; // T = 6 s

  it('admits exactly burst at once, then one per emission interval', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock });
    const remaining: number[] = [];
    for (let i = 0; i < 15; i++) {
      const d = limiter.check('k', policy);
      expect(d.allowed).toBe(true);
      expect(d.retryAfterSeconds).toBe(0);
      remaining.push(d.remaining);
    }
    expect(remaining).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

    const denied = limiter.check('k', policy);
    expect(denied).toMatchObject({ allowed: false, limit: 10, remaining: 0, retryAfterSeconds: 6 });

    for (let i = 0; i < 5; i++) {
      time.advance(5_999);
      expect(limiter.check('k', policy).allowed).toBe(false);
      time.advance(1);
      expect(limiter.check('k', policy)).toMatchObject({ allowed: true, remaining: 0 });
      expect(limiter.check('k', policy).allowed).toBe(false);
    }
  });

  it('reports a fractional retry-after equal to the time until the next admission', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock });
    const odd: RateLimitPolicy = { limit: 3, windowSeconds: 10, burst: 3 }; // T = 3.333334 s
    for (let i = 0; i < 3; i++) expect(limiter.check('k', odd).allowed).toBe(true);
    time.advance(1_000);
    const denied = limiter.check('k', odd);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterSeconds).toBeCloseTo(2.333334, 6);
    expect(denied.resetSeconds).toBe(denied.retryAfterSeconds);

    time.advance(denied.retryAfterSeconds * 1000 - 1);
    expect(limiter.check('k', odd).allowed).toBe(false);
    time.advance(1);
    expect(limiter.check('k', odd).allowed).toBe(true);
  });

  it('reports the time until the bucket is full again, and refills completely when idle', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock });
    limiter.check('k', policy);
    limiter.check('k', policy);
    expect(limiter.check('k', policy).resetSeconds).toBe(18);
    time.advance(9_000);
    // 1.5 intervals later: one and a half requests back, so the reset is 4.5 s + T away.
    expect(limiter.check('k', policy)).toMatchObject({ remaining: 12, resetSeconds: 15 });
    time.advance(90_000);
    expect(limiter.check('k', policy)).toMatchObject({ remaining: 14, resetSeconds: 6 });
  });

  it('never lets a denied request push the key further out', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock });
    for (let i = 0; i < 15; i++) limiter.check('k', policy);
    for (let i = 0; i < 1000; i++) expect(limiter.check('k', policy).allowed).toBe(false);
    time.advance(6_000);
    expect(limiter.check('k', policy).allowed).toBe(true);
  });

  it('keeps keys apart and honours a cost', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock });
    expect(limiter.check('a', policy, 15)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.check('b', policy).remaining).toBe(14);
    expect(limiter.check('b', policy, 14)).toMatchObject({ allowed: true, remaining: 0 });
    const c = limiter.check('c', policy, 3);
    expect(c.remaining).toBe(12);
    const tooBig = limiter.check('c', policy, 13);
    expect(tooBig).toMatchObject({ allowed: false, remaining: 12, retryAfterSeconds: 6 });
  });

  it('stays within maxKeys, and an evicted key is only ever less limited', () => {
    const time = fakeClock();
    const limiter = createMemoryRateLimiter({ clock: time.clock, maxKeys: 100 });
    for (let i = 0; i < 15; i++) limiter.check('hot', policy);
    expect(limiter.check('hot', policy).allowed).toBe(false);
    for (let i = 0; i < 5_000; i++) limiter.check(`key-${i}`, policy);
    expect(limiter.size).toBe(100);
    // 'hot' was evicted: it starts over with a full bucket rather than being blocked wrongly.
    expect(limiter.check('hot', policy)).toMatchObject({ allowed: true, remaining: 14 });
  });
});
