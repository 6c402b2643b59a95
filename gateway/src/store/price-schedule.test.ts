import { describe, expect, it } from 'vitest';
import { pendingRise, priceAt, schedulePrice } from './price-schedule.js';

const HOUR = 3_600_000;
const WEEK = 168 * HOUR;
const T = Date.UTC(2026, 10, 27);

describe('price schedule', () => {
  it("a new analytic's first price applies at once", () => {
    expect(schedulePrice(undefined, 50, T, WEEK)).toEqual({ price: 50 });
  });

  it('a rise waits for the notice; calls pay the old price until then, the new one from then', () => {
    const s = schedulePrice({ price: 1 }, 100, T, WEEK);
    expect(s).toEqual({ price: 1, nextPrice: 100, nextPriceAt: T + WEEK });
    expect(priceAt(s, T + WEEK - 1)).toBe(1);
    expect(pendingRise(s, T)).toEqual({ price: 100, at: T + WEEK });
    expect(priceAt(s, T + WEEK)).toBe(100);
    expect(pendingRise(s, T + WEEK)).toBeUndefined();
  });

  it('a decrease or an equal price applies at once and cancels a scheduled rise', () => {
    const rising = schedulePrice({ price: 5 }, 9, T, WEEK);
    expect(schedulePrice(rising, 4, T + HOUR, WEEK)).toEqual({ price: 4 });
    expect(schedulePrice(rising, 5, T + HOUR, WEEK)).toEqual({ price: 5 });
  });

  it('a smaller rise keeps the date callers were told of; a larger one starts a new notice', () => {
    const rising = schedulePrice({ price: 5 }, 9, T, WEEK);
    expect(schedulePrice(rising, 7, T + HOUR, WEEK)).toEqual({
      price: 5,
      nextPrice: 7,
      nextPriceAt: T + WEEK,
    });
    expect(schedulePrice(rising, 12, T + HOUR, WEEK)).toEqual({
      price: 5,
      nextPrice: 12,
      nextPriceAt: T + HOUR + WEEK,
    });
  });

  it('a rise that has taken effect is the price the next deploy starts from', () => {
    const risen = schedulePrice({ price: 5 }, 9, T, WEEK);
    expect(schedulePrice(risen, 8, T + WEEK + 1, WEEK)).toEqual({ price: 8 });
    expect(schedulePrice(risen, 10, T + WEEK + 1, WEEK)).toEqual({
      price: 9,
      nextPrice: 10,
      nextPriceAt: T + 2 * WEEK + 1,
    });
  });

  it('with no notice a rise applies at once', () => {
    expect(schedulePrice({ price: 1 }, 100, T, 0)).toEqual({ price: 1 * 100 });
  });
});
