// The owner/platform split of the credits a call spent (DESIGN.md §4): the owner gets
// `ownerPercent` of them rounded down, the platform the remainder, so the two always sum to
// the total. Integer arithmetic only: no float ever touches money.

/** Credits split between an analytic's owner and the platform. */
export interface RevenueSplit {
  readonly ownerShare: number;
  readonly platformShare: number;
}

/** The owners' share of every credit spent on their analytics, in percent. */
export const OWNER_PERCENT = 80;

/**
 * Splits `credits` (a non-negative safe integer): owner share = floor(credits × ownerPercent /
 * 100), platform share = the rest. Throws a RangeError for a fractional, negative or unsafe
 * amount, or a percentage outside 0–100.
 */
export function splitCredits(credits: number, ownerPercent: number = OWNER_PERCENT): RevenueSplit {
  if (!Number.isSafeInteger(credits) || credits < 0) {
    throw new RangeError(`credits must be a non-negative safe integer, got ${credits}`);
  }
  if (!Number.isInteger(ownerPercent) || ownerPercent < 0 || ownerPercent > 100) {
    throw new RangeError(`ownerPercent must be an integer from 0 to 100, got ${ownerPercent}`);
  }
  // credits = 100q + r; floor(credits·p/100) = q·p + floor(r·p/100). Every intermediate stays
  // at or below credits, so the result is exact even near 2^53 (credits·p would not be).
  const remainder = credits % 100;
  const hundreds = (credits - remainder) / 100;
  const ownerShare = hundreds * ownerPercent + Math.floor((remainder * ownerPercent) / 100);
  return { ownerShare, platformShare: credits - ownerShare };
}
