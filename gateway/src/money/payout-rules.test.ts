import { describe, expect, it } from 'vitest';
import { decidePayout } from './payout-rules.js';

const stripe = { provider: 'stripe', minimumCents: 1_000 } as const;
const earned = (micro: number) => ({ carriedInMicroUsd: 0, earnedMicroUsd: micro, adjustedMicroUsd: 0 });

describe('a deleted (closed) owner’s last payouts', () => {
  it('are paid below the minimum, the sub-cent rest carried', () => {
    expect(decidePayout(earned(5_567_999), stripe, true)).toMatchObject({
      status: 'held',
      reason: 'below_minimum',
    });
    expect(decidePayout(earned(5_567_999), stripe, true, true)).toEqual({
      status: 'pending',
      reason: null,
      payoutCents: 556,
      carriedOutMicroUsd: 7_999,
    });
  });

  it('still hold what cannot be paid: under a cent, a negative balance, no payout account', () => {
    expect(decidePayout(earned(9_999), stripe, true, true)).toMatchObject({ status: 'held', payoutCents: 0 });
    expect(
      decidePayout(
        { carriedInMicroUsd: -50_000, earnedMicroUsd: 10_000, adjustedMicroUsd: 0 },
        stripe,
        true,
        true,
      ),
    ).toMatchObject({ status: 'held', reason: 'negative_balance' });
    expect(decidePayout(earned(5_000_000), stripe, false, true)).toMatchObject({ reason: 'not_onboarded' });
  });
});
