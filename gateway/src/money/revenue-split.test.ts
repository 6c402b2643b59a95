import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { priceCall, splitCredits } from './revenue-split.js';

describe('splitCredits', () => {
  it('gives the owner 80% rounded down and the platform the rest', () => {
    expect(splitCredits(0)).toEqual({ ownerShare: 0, platformShare: 0 });
    expect(splitCredits(1)).toEqual({ ownerShare: 0, platformShare: 1 });
    expect(splitCredits(5)).toEqual({ ownerShare: 4, platformShare: 1 });
    expect(splitCredits(7)).toEqual({ ownerShare: 5, platformShare: 2 });
    expect(splitCredits(100)).toEqual({ ownerShare: 80, platformShare: 20 });
    expect(splitCredits(7, 50)).toEqual({ ownerShare: 3, platformShare: 4 });
  });

  it('is exact for any amount up to 2^53 and any percentage (compared with bigint math)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: 100 }),
        (credits, percent) => {
          const { ownerShare, platformShare } = splitCredits(credits, percent);
          const expected = (BigInt(credits) * BigInt(percent)) / 100n;
          expect(BigInt(ownerShare)).toBe(expected);
          expect(ownerShare + platformShare).toBe(credits);
          expect(ownerShare).toBeGreaterThanOrEqual(0);
          expect(platformShare).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses fractional, negative or unsafe amounts and bad percentages', () => {
    expect(() => splitCredits(1.5)).toThrow(RangeError);
    expect(() => splitCredits(-1)).toThrow(RangeError);
    expect(() => splitCredits(2 ** 53)).toThrow(RangeError);
    expect(() => splitCredits(Number.NaN)).toThrow(RangeError);
    expect(() => splitCredits(10, 101)).toThrow(RangeError);
    expect(() => splitCredits(10, 12.5)).toThrow(RangeError);
  });
});

describe('priceCall', () => {
  it('a 1-credit call on SMB (196,000 µUSD a credit): the owner gets 800 millicredits and 156,800 µUSD', () => {
    expect(priceCall('paid', 1, 196_000)).toEqual({
      millicredits: 1_000,
      ownerMillicredits: 800,
      platformMillicredits: 200,
      valueMicroUsd: 196_000,
      ownerMicroUsd: 156_800,
      platformMicroUsd: 39_200,
    });
  });

  it('free-plan credits are worth nothing; previews and owners’ own calls cost and earn nothing', () => {
    expect(priceCall('free', 5, 196_000)).toMatchObject({
      millicredits: 5_000,
      ownerMillicredits: 4_000,
      valueMicroUsd: 0,
      ownerMicroUsd: 0,
    });
    for (const origin of ['marketplace', 'owner'] as const) {
      expect(Object.values(priceCall(origin, 100, 500_000)).every((v) => v === 0)).toBe(true);
    }
  });

  it('for any price and credit value: both splits sum, the owner gets 80% of the credits and at most 80% of the money', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('paid', 'free', 'marketplace', 'owner' as const),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (origin, credits, rate) => {
          const a = priceCall(origin, credits, rate);
          expect(a.ownerMillicredits + a.platformMillicredits).toBe(a.millicredits);
          expect(a.ownerMicroUsd + a.platformMicroUsd).toBe(a.valueMicroUsd);
          expect(a.ownerMicroUsd * 100).toBeLessThanOrEqual(a.valueMicroUsd * 80);
          if (origin === 'paid' || origin === 'free') expect(a.ownerMillicredits).toBe(credits * 800);
          if (origin !== 'paid') expect(a.valueMicroUsd).toBe(0);
        },
      ),
    );
  });

  it('refuses fractional or negative inputs', () => {
    expect(() => priceCall('paid', 1.5, 1)).toThrow(RangeError);
    expect(() => priceCall('paid', 1, -1)).toThrow(RangeError);
  });
});
