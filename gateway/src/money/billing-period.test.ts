import { describe, expect, it } from 'vitest';
import { createPeriodClock, periodOf, secondsToPeriodEnd } from './billing-period.js';

describe('createPeriodClock', () => {
  it('agrees with periodOf and secondsToPeriodEnd on every reading, across month and year ends', () => {
    const clock = createPeriodClock();
    const moments = [
      '2026-11-30T23:59:59.400Z',
      '2026-12-01T00:00:00.000Z',
      '2026-11-15T12:00:00.000Z', // back in time: worked out again
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.001Z',
      '2028-02-29T08:00:00.000Z',
    ];
    for (const text of moments) {
      const at = new Date(text);
      expect(clock.period(at.getTime()), text).toBe(periodOf(at));
      expect(clock.secondsToEnd(at.getTime()), text).toBe(secondsToPeriodEnd(at));
    }
  });
});
