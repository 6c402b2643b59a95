// What one call is worth and who earns it (docs/money.md): its credits in millicredits, their
// money value in micro-USD (what the payer paid for them), and each split between the
// analytic's owner and the platform. The owner gets exactly 800 millicredits a credit and
// floor(value × 80 / 100) µUSD; the platform the rest, so each pair sums to its total. Integer
// arithmetic only: no float ever touches money.

import { creditsToMillicredits } from './units.js';

/** An amount split between an analytic's owner and the platform. */
export interface RevenueSplit {
  readonly ownerShare: number;
  readonly platformShare: number;
}

/** The owners' share of every credit spent on their analytics, in percent. */
export const OWNER_PERCENT = 80;

/**
 * Splits `amount` (a non-negative safe integer): owner share = floor(amount × ownerPercent /
 * 100), platform share = the rest. Throws a RangeError for a fractional, negative or unsafe
 * amount, or a percentage outside 0–100.
 */
export function splitCredits(amount: number, ownerPercent: number = OWNER_PERCENT): RevenueSplit {
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw new RangeError(`amount must be a non-negative safe integer, got ${amount}`);
  }
  if (!Number.isInteger(ownerPercent) || ownerPercent < 0 || ownerPercent > 100) {
    throw new RangeError(`ownerPercent must be an integer from 0 to 100, got ${ownerPercent}`);
  }
  // amount = 100q + r; floor(amount·p/100) = q·p + floor(r·p/100). Every intermediate stays
  // at or below amount, so the result is exact even near 2^53 (amount·p would not be).
  const remainder = amount % 100;
  const hundreds = (amount - remainder) / 100;
  const ownerShare = hundreds * ownerPercent + Math.floor((remainder * ownerPercent) / 100);
  return { ownerShare, platformShare: amount - ownerShare };
}

/** Where a call came from (docs/money.md): who pays, and whether it counts against the quota. */
export type UsageOrigin = 'paid' | 'free' | 'marketplace' | 'owner';

/** Whether calls of `origin` spend the account's credits (and so count against its quota). */
export const isCounted = (origin: UsageOrigin): boolean => origin === 'paid' || origin === 'free';

/** One call's credits and money, with both splits. */
export interface CallAmounts {
  readonly millicredits: number;
  readonly ownerMillicredits: number;
  readonly platformMillicredits: number;
  /** What the payer paid for the credits, in micro-USD. */
  readonly valueMicroUsd: number;
  readonly ownerMicroUsd: number;
  readonly platformMicroUsd: number;
}

const NOTHING: CallAmounts = {
  millicredits: 0,
  ownerMillicredits: 0,
  platformMillicredits: 0,
  valueMicroUsd: 0,
  ownerMicroUsd: 0,
  platformMicroUsd: 0,
};

/**
 * The amounts of one call of `credits` (a whole price) by a payer whose credits are worth
 * `creditValueMicroUsd` each: previews and an owner's own calls are worth nothing; a free-plan
 * call spends credits worth 0 µUSD. RangeError for a fractional, negative or unsafe input.
 */
export function priceCall(origin: UsageOrigin, credits: number, creditValueMicroUsd: number): CallAmounts {
  if (!isCounted(origin)) return NOTHING;
  for (const [name, value] of [
    ['credits', credits],
    ['creditValueMicroUsd', creditValueMicroUsd],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
    }
  }
  const value = origin === 'free' ? 0 : credits * creditValueMicroUsd;
  if (!Number.isSafeInteger(value)) throw new RangeError(`a call worth ${value} µUSD is out of range`);
  const money = splitCredits(value);
  return {
    millicredits: creditsToMillicredits(credits),
    ownerMillicredits: credits * 800,
    platformMillicredits: credits * 200,
    valueMicroUsd: value,
    ownerMicroUsd: money.ownerShare,
    platformMicroUsd: money.platformShare,
  };
}
