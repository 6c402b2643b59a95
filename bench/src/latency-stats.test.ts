// The bench's verdict rests on these statistics: a wrong median or p99 would misreport overhead.
import { describe, expect, it } from 'vitest';
import { median, quantile } from './latency-stats.js';

describe('median', () => {
  it('takes the middle value, or the mean of the two middle values, regardless of order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median(Float64Array.of(10))).toBe(10);
    expect(median([])).toBeNaN();
  });
});

describe('quantile', () => {
  it('returns the nearest-rank quantile', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile(values, 0.5)).toBe(50);
    expect(quantile(values, 1)).toBe(100);
    expect(quantile(values, 0)).toBe(1);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
