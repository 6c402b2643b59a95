// Billing periods are calendar months in UTC, named `YYYY-MM`.

export const PERIOD_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The period a moment falls in. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Seconds from `at` to the start of the next period (when a quota resets). */
export function secondsToPeriodEnd(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return Math.max(0, Math.ceil((next - at.getTime()) / 1000));
}

/** The first and last day (`YYYY-MM-DD`) of a period. */
export function periodBounds(period: string): { from: string; to: string } {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { from: `${period}-01`, to: `${period}-${String(last).padStart(2, '0')}` };
}
