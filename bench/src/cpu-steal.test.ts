// Windows are dropped on steal; the fraction must be stolen time over all CPU time in between.
import { describe, expect, it } from 'vitest';
import { readCpuTimes, stealFraction } from './cpu-steal.js';

describe('stealFraction', () => {
  it('divides the steal delta by the total delta', () => {
    expect(stealFraction({ steal: 10, total: 1_000 }, { steal: 30, total: 1_400 })).toBeCloseTo(0.05);
    expect(stealFraction({ steal: 10, total: 1_000 }, { steal: 10, total: 1_000 })).toBe(0);
    expect(stealFraction(undefined, { steal: 1, total: 2 })).toBe(0);
  });

  it('reads cumulative counters from /proc/stat on Linux', () => {
    const before = readCpuTimes();
    if (process.platform !== 'linux') {
      expect(before).toBeUndefined();
      return;
    }
    expect(before?.total).toBeGreaterThan(0);
    let spin = 0;
    const until = Date.now() + 30;
    while (Date.now() < until) spin++;
    const after = readCpuTimes();
    expect(after!.total).toBeGreaterThanOrEqual(before!.total);
    expect(after!.steal).toBeGreaterThanOrEqual(before!.steal);
    expect(spin).toBeGreaterThan(0);
  });
});
