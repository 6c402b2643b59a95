// What an owner is paid when a month closes (docs/money.md, "Owners' payouts"), pure: what it
// carried in, earned and had taken back decide a payout in whole cents, held (and carried whole)
// when it is under the minimum, the owner cannot be paid yet or the balance is negative. Nothing is
// ever lost: carried in + earned − adjusted = cents × 10,000 + carried out, to the µUSD.
import { MICRO_USD_PER_CENT, type MicroUsd } from './units.js';

export type PayoutStatus = 'held' | 'pending' | 'paid' | 'failed' | 'reversed' | 'operator';

/** Why a payout was held. */
export type HoldReason = 'below_minimum' | 'not_onboarded' | 'negative_balance';

export interface PayoutInput {
  /** The owner's previous carried-out balance (negative after adjustments larger than earnings). */
  readonly carriedInMicroUsd: MicroUsd;
  readonly earnedMicroUsd: MicroUsd;
  /** Owner shares taken back (refunds, disputes), as a positive amount. */
  readonly adjustedMicroUsd: MicroUsd;
}

export interface PayoutPolicy {
  /** `none`: the operator pays by hand (every payable cent is listed as theirs to pay). */
  readonly provider: 'none' | 'sandbox' | 'stripe';
  /** QUARRY_MIN_PAYOUT_CENTS. */
  readonly minimumCents: number;
}

export interface PayoutDecision {
  readonly status: PayoutStatus;
  readonly reason: HoldReason | null;
  readonly payoutCents: number;
  readonly carriedOutMicroUsd: MicroUsd;
}

/**
 * The payout of one owner for one period, given whether the owner can be paid now and whether its
 * account is closed: a closed account's balance is paid whatever the minimum (its last payouts),
 * so an owner who deleted its account is never left with money held for a month that never comes.
 */
export function decidePayout(
  input: PayoutInput,
  policy: PayoutPolicy,
  onboarded: boolean,
  closed = false,
): PayoutDecision {
  for (const [name, value] of Object.entries(input)) {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be a safe integer, got ${value}`);
  }
  if (input.earnedMicroUsd < 0 || input.adjustedMicroUsd < 0)
    throw new RangeError('earned and adjusted are ≥ 0');
  const payable = input.carriedInMicroUsd + input.earnedMicroUsd - input.adjustedMicroUsd;
  const held = (reason: HoldReason): PayoutDecision => ({
    status: 'held',
    reason,
    payoutCents: 0,
    carriedOutMicroUsd: payable,
  });
  // A negative balance is carried, never taken from the owner: it is netted against later earnings.
  if (payable < 0) return held('negative_balance');
  const rest = payable % MICRO_USD_PER_CENT;
  const cents = (payable - rest) / MICRO_USD_PER_CENT;
  if (policy.provider === 'none') {
    return { status: 'operator', reason: null, payoutCents: cents, carriedOutMicroUsd: rest };
  }
  if (!onboarded) return held('not_onboarded');
  if (cents === 0 || (cents < policy.minimumCents && !closed)) return held('below_minimum');
  return { status: 'pending', reason: null, payoutCents: cents, carriedOutMicroUsd: rest };
}

/** Words for a hold reason, as an owner reads them. */
export function holdText(reason: string | null, minimumCents: number): string | null {
  switch (reason) {
    case null:
      return null;
    case 'below_minimum':
      return `below the ${(minimumCents / 100).toFixed(2)} USD minimum: carried to the next month`;
    case 'not_onboarded':
      return 'payouts are not set up yet: carried until they are';
    case 'negative_balance':
      return 'refunds took back more than was earned: the balance is carried';
    default:
      return reason;
  }
}
