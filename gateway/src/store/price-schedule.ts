// An analytic's price over time (issue 29): the price in force, and a rise the owner scheduled
// with its date. A rise waits for the operator's notice (QUARRY_PRICE_NOTICE_HOURS) so callers
// can see it coming; a decrease helps callers, so it applies at once. Pure functions: the
// repository applies them in the deploy's transaction, the query path reads `priceAt`.

/** The prices of one analytic: `price` until `nextPriceAt` (ms since the epoch), then `nextPrice`. */
export interface PriceSchedule {
  readonly price: number;
  /** A scheduled rise, or undefined; always with `nextPriceAt`. */
  readonly nextPrice?: number | undefined;
  readonly nextPriceAt?: number | undefined;
}

/** The price a call at `nowMs` pays. On the hot path: no allocation. */
export function priceAt(schedule: PriceSchedule, nowMs: number): number {
  const at = schedule.nextPriceAt;
  return at !== undefined && nowMs >= at ? (schedule.nextPrice as number) : schedule.price;
}

/** The rise still to come at `nowMs`, or undefined when none is (or it has taken effect). */
export function pendingRise(
  schedule: PriceSchedule,
  nowMs: number,
): { readonly price: number; readonly at: number } | undefined {
  const at = schedule.nextPriceAt;
  return at !== undefined && nowMs < at ? { price: schedule.nextPrice as number, at } : undefined;
}

/** The schedule as of `nowMs`, with a rise that has taken effect folded into `price`. */
export function settled(schedule: PriceSchedule, nowMs: number): PriceSchedule {
  const rise = pendingRise(schedule, nowMs);
  return rise === undefined
    ? { price: priceAt(schedule, nowMs) }
    : { price: schedule.price, nextPrice: rise.price, nextPriceAt: rise.at };
}

/**
 * The schedule after the owner deploys `newPrice` at `nowMs`, with `noticeMs` of notice for a
 * rise. `current` is undefined for a new analytic: its first price applies at once.
 * - not above the price in force: at once, and any scheduled rise is cancelled;
 * - a rise, with an earlier rise scheduled at least as high: it keeps that date (callers were
 *   already told of more by then);
 * - any other rise: at `nowMs + noticeMs` (at once when the notice is 0).
 */
export function schedulePrice(
  current: PriceSchedule | undefined,
  newPrice: number,
  nowMs: number,
  noticeMs: number,
): PriceSchedule {
  if (current === undefined || noticeMs <= 0) return { price: newPrice };
  const now = settled(current, nowMs);
  if (newPrice <= now.price) return { price: newPrice };
  if (now.nextPrice !== undefined && newPrice <= now.nextPrice)
    return { price: now.price, nextPrice: newPrice, nextPriceAt: now.nextPriceAt };
  return { price: now.price, nextPrice: newPrice, nextPriceAt: nowMs + noticeMs };
}
