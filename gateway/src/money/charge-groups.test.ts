// A charge batch sends each group's amounts once with its count: two calls put in one group
// that differ in any field would be written with the other's account, analytic or price.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createGrouper, type GroupedCall, groupKeyOf, SCAN_GROUPS, sameGroup } from './charge-groups.js';

/** Calls drawn from few values per field, so that equal and nearly equal calls are common. */
const call: fc.Arbitrary<GroupedCall> = fc
  .record({
    accountId: fc.constantFrom('acc_a', 'acc_b'),
    keyId: fc.constantFrom(null, '', 'key_1'),
    period: fc.constantFrom('2026-11', '2026-12'),
    plan: fc.constantFrom('free', 'payg'),
    budget: fc.constantFrom(null, { defaultMicroUsd: 1, maxMicroUsd: 2 }),
    analyticId: fc.constantFrom('an_1', 'an_2'),
    analyticName: fc.constantFrom('sales', 'sales\0x'),
    version: fc.constantFrom(1, 2),
    ownerId: fc.constantFrom('acc_a', 'acc_o'),
    origin: fc.constantFrom('paid' as const, 'owner' as const, 'free' as const),
    served: fc.constantFrom(undefined, { latencyMs: 1 }, { latencyMs: 2 }),
    limitMc: fc.constantFrom(null, 0, 5000),
    millicredits: fc.constantFrom(0, 1000),
    valueMicroUsd: fc.constantFrom(0, 1000),
  })
  .map(({ limitMc, millicredits, valueMicroUsd, ...input }) => ({
    input,
    limitMc,
    money: { millicredits, valueMicroUsd },
  }));

describe('charge groups', () => {
  it('puts two calls in one group exactly when their text keys are equal', () => {
    fc.assert(
      fc.property(call, call, (a, b) => {
        expect(sameGroup(a, b)).toBe(groupKeyOf(a) === groupKeyOf(b));
      }),
      { numRuns: 5000 },
    );
  });

  it('numbers groups from 1 by first occurrence, by comparison and past SCAN_GROUPS by key alike', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 3 * SCAN_GROUPS * 4 }), (calls) => {
        const grouper = createGrouper();
        const numbers = calls.map((c) => grouper.groupOf(c));
        // The reference: a map from text key to the order of first occurrence.
        const expected = new Map<string, number>();
        const reference = calls.map((c) => {
          const key = groupKeyOf(c);
          if (!expected.has(key)) expected.set(key, expected.size + 1);
          return expected.get(key);
        });
        expect(numbers).toEqual(reference);
      }),
      { numRuns: 500 },
    );
  });

  it('switches to text keys only once a batch holds more than SCAN_GROUPS groups', () => {
    const grouper = createGrouper();
    const distinct = (i: number): GroupedCall => ({
      input: {
        accountId: `acc_${i}`,
        keyId: null,
        period: '2026-11',
        plan: 'free',
        budget: null,
        analyticId: 'an',
        analyticName: 'sales',
        version: 1,
        ownerId: 'acc_o',
        origin: 'paid',
      },
      limitMc: null,
      money: { millicredits: 1000, valueMicroUsd: 0 },
    });
    const numbers = Array.from({ length: 2 * SCAN_GROUPS + 2 }, (_, i) => grouper.groupOf(distinct(i)));
    expect(numbers).toEqual(Array.from({ length: 2 * SCAN_GROUPS + 2 }, (_, i) => i + 1));
    // An early group found again after the switch, by its key.
    expect(grouper.groupOf(distinct(0))).toBe(1);
    expect(grouper.groupOf(distinct(SCAN_GROUPS + 1))).toBe(SCAN_GROUPS + 2);
  });
});
