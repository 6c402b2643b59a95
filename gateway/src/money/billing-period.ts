// Billing periods are calendar months in UTC, named `YYYY-MM`.

export const PERIOD_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The period a moment falls in. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** The start of the period after the one `at` falls in, in ms since the epoch. */
function nextPeriodStart(at: Date): number {
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
}

/** Whole seconds from `ms` to `endMs`, never negative. */
const secondsUntil = (endMs: number, ms: number) => Math.max(0, Math.ceil((endMs - ms) / 1000));

/** Seconds from `at` to the start of the next period (when a quota resets). */
export function secondsToPeriodEnd(at: Date): number {
  return secondsUntil(nextPeriodStart(at), at.getTime());
}

/**
 * periodOf and secondsToPeriodEnd for a clock read on every call (metering asks both on every
 * cache hit; toISOString and Date.UTC per call showed in the profile): the period is worked out
 * again only when the clock leaves it.
 */
export function createPeriodClock(): {
  period(ms: number): string;
  secondsToEnd(ms: number): number;
} {
  let start = 0;
  let end = -1;
  let period = '';
  const enter = (ms: number) => {
    if (ms >= start && ms < end) return;
    const at = new Date(ms);
    period = periodOf(at);
    start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
    end = nextPeriodStart(at);
  };
  return {
    period(ms) {
      enter(ms);
      return period;
    },
    secondsToEnd(ms) {
      enter(ms);
      return secondsUntil(end, ms);
    },
  };
}

/** The first and last day (`YYYY-MM-DD`) of a period. */
export function periodBounds(period: string): { from: string; to: string } {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { from: `${period}-01`, to: `${period}-${String(last).padStart(2, '0')}` };
}
