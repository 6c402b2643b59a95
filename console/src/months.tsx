// Billing periods (calendar months, UTC) in the console: this month, its days, and the month
// picker the usage and statements pages share.
import { Field } from './components.js';

/** This month as YYYY-MM (UTC). */
export const thisMonth = () => new Date().toISOString().slice(0, 7);

/** Every day of the period, so a chart shows the days without calls too. */
export function daysOf(period: string): string[] {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return Array.from({ length: days }, (_, i) => `${period}-${String(i + 1).padStart(2, '0')}`);
}

/** A month picker up to this month; `onChange` gets a YYYY-MM (never an emptied field). */
export function MonthField({
  period,
  onChange,
}: {
  readonly period: string;
  readonly onChange: (period: string) => void;
}) {
  return (
    <Field label="Month">
      {(id) => (
        <input
          id={id}
          type="month"
          value={period}
          max={thisMonth()}
          onChange={(e) => e.target.value && onChange(e.target.value)}
        />
      )}
    </Field>
  );
}
