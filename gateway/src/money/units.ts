// The units money is kept in (docs/money.md): credits as integer millicredits, money as integer
// micro-USD, and their conversions. Every amount the gateway stores or adds is one of these two
// integers; the display forms (credits, USD) are only ever derived from them.

/** An amount of credits in thousandths of a credit (an integer). */
export type Millicredits = number;
/** An amount of money in millionths of a US dollar (an integer). */
export type MicroUsd = number;
/** An amount of money in US cents (an integer): what a payment provider charges. */
export type Cents = number;

/** Millicredits in one credit. */
export const MILLICREDITS_PER_CREDIT = 1_000;
/** Micro-USD in one cent. */
export const MICRO_USD_PER_CENT = 10_000;
/** Micro-USD in one US dollar. */
export const MICRO_USD_PER_USD = 1_000_000;

/** Whole credits as millicredits. */
export const creditsToMillicredits = (credits: number): Millicredits => credits * MILLICREDITS_PER_CREDIT;

/** Millicredits as credits (display: may be fractional). */
export const millicreditsToCredits = (millicredits: Millicredits): number =>
  millicredits / MILLICREDITS_PER_CREDIT;

/** The whole credits in `millicredits`, rounded down (what a call of whole credits can still spend). */
export const wholeCredits = (millicredits: Millicredits): number =>
  Math.floor(millicredits / MILLICREDITS_PER_CREDIT);

/** Cents as micro-USD. */
export const centsToMicroUsd = (cents: Cents): MicroUsd => cents * MICRO_USD_PER_CENT;

/** Micro-USD as USD (display; the exact figure is the micro-USD one). */
export const microUsdToUsd = (microUsd: MicroUsd): number => microUsd / MICRO_USD_PER_USD;

/** Micro-USD formatted as dollars with two decimals, for messages ("55.50"). */
export const formatUsd = (microUsd: MicroUsd): string => microUsdToUsd(microUsd).toFixed(2);

/**
 * Micro-USD split into whole cents (rounded down) and the sub-cent rest, which is carried to the
 * next charge or payout rather than rounded away: `cents × 10,000 + rest = microUsd`.
 */
export function toWholeCents(microUsd: MicroUsd): { readonly cents: Cents; readonly rest: MicroUsd } {
  if (!Number.isSafeInteger(microUsd) || microUsd < 0) {
    throw new RangeError(`microUsd must be a non-negative safe integer, got ${microUsd}`);
  }
  const rest = microUsd % MICRO_USD_PER_CENT;
  return { cents: (microUsd - rest) / MICRO_USD_PER_CENT, rest };
}

/** Micro-USD in cents, rounded up (what is due, never less than owed). */
export const centsDue = (microUsd: MicroUsd): Cents => Math.ceil(microUsd / MICRO_USD_PER_CENT);
