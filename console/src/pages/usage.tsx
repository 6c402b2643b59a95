// Usage this month (or another): the plan, credits used and left, the amount due, a chart of
// credits per day, a table per analytic, and the CSV. All rendering of the usage answer's shape
// is in this one module (GET /v1/account/usage).
import { useEffect, useMemo, useState } from 'react';
import { api, queryString } from '../api.js';
import { Chart } from '../chart.js';
import { DataTable, ErrorNote, Field, formatCents } from '../components.js';

interface Totals {
  readonly calls: number;
  readonly credits: number;
}

interface Usage {
  readonly period: string;
  readonly plan: {
    readonly id: string;
    readonly name: string;
    readonly included_calls: number | null;
    readonly monthly_price_cents: number;
    readonly per_call_cents: number;
  };
  readonly totals: Totals & {
    readonly marketplace_calls: number;
    readonly remaining_calls: number | null;
    readonly amount_due_cents: number;
  };
  readonly by_analytic: readonly (Totals & { readonly name: string })[];
  readonly by_day: readonly (Totals & { readonly date: string })[];
}

export const thisMonth = () => new Date().toISOString().slice(0, 7);

/** Every day of the period, so a chart shows the days without calls too. */
function daysOf(period: string): string[] {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return Array.from({ length: days }, (_, i) => `${period}-${String(i + 1).padStart(2, '0')}`);
}

export function UsagePage() {
  const [period, setPeriod] = useState(thisMonth);
  const [usage, setUsage] = useState<Usage>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setError(undefined);
    api<Usage>('GET', `/v1/account/usage${queryString({ period })}`).then(setUsage, setError);
  }, [period]);
  const perDay = useMemo(() => {
    if (usage === undefined) return undefined;
    const credits = new Map(usage.by_day.map((d) => [d.date, d.credits]));
    const days = daysOf(usage.period);
    return {
      labels: days.map((d) => d.slice(8)),
      series: [{ name: 'credits', values: days.map((d) => credits.get(d) ?? 0) }],
    };
  }, [usage]);
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <Field label="Month">
        {(id) => (
          <input
            id={id}
            type="month"
            value={period}
            max={thisMonth()}
            onChange={(e) => e.target.value && setPeriod(e.target.value)}
          />
        )}
      </Field>
      <ErrorNote error={error} />
      {usage === undefined || perDay === undefined ? null : (
        <>
          <dl className="figures">
            <div>
              <dt>Plan</dt>
              <dd data-testid="plan">{usage.plan.name}</dd>
            </div>
            <div>
              <dt>Credits used</dt>
              <dd data-testid="credits-used">{usage.totals.credits}</dd>
            </div>
            <div>
              <dt>Credits left</dt>
              <dd data-testid="credits-left">{usage.totals.remaining_calls ?? 'no cap'}</dd>
            </div>
            <div>
              <dt>Amount due</dt>
              <dd data-testid="amount-due">{formatCents(usage.totals.amount_due_cents)}</dd>
            </div>
            <div>
              <dt>Free previews</dt>
              <dd>{usage.totals.marketplace_calls}</dd>
            </div>
          </dl>
          <h2>Credits per day</h2>
          <Chart title={`Credits per day in ${usage.period}`} labels={perDay.labels} series={perDay.series} />
          <DataTable
            caption="Per analytic"
            columns={['analytic', 'calls', 'credits']}
            rows={usage.by_analytic.map((a) => [a.name, a.calls, a.credits])}
          />
          <p>
            <a
              href={`/v1/account/usage${queryString({ period: usage.period, format: 'csv' })}`}
              download={`usage-${usage.period}.csv`}
            >
              Download CSV
            </a>
          </p>
        </>
      )}
    </section>
  );
}
