import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCredits } from './revenue-split.js';

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
