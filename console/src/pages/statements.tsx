// The owner's statement for a month: earnings per analytic as a chart and a table, the totals,
// whether the period is closed, and the CSV. All rendering of the statement's shape is in this
// one module (GET /v1/owner/statements).
import { useEffect, useMemo, useState } from 'react';
import { api, queryString } from '../api.js';
import { Chart } from '../chart.js';
import { DataTable, ErrorNote, Field } from '../components.js';
import { thisMonth } from './usage.js';

interface Amounts {
  readonly calls: number;
  readonly credits: number;
  readonly owner_share: number;
  readonly platform_share: number;
}

interface Statement {
  readonly period: string;
  readonly closed_at: string | null;
  readonly analytics: readonly (Amounts & { readonly name: string })[];
  readonly totals: Amounts;
}

export function StatementsPage() {
  const [period, setPeriod] = useState(thisMonth);
  const [statement, setStatement] = useState<Statement>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setError(undefined);
    api<Statement>('GET', `/v1/owner/statements${queryString({ period })}`).then(setStatement, setError);
  }, [period]);
  const chart = useMemo(
    () =>
      statement === undefined
        ? undefined
        : {
            labels: statement.analytics.map((a) => a.name),
            series: [
              { name: 'your earnings (credits)', values: statement.analytics.map((a) => a.owner_share) },
            ],
          },
    [statement],
  );
  return (
    <section aria-labelledby="statements-title">
      <h1 id="statements-title">Statements</h1>
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
      {statement === undefined || chart === undefined ? null : (
        <>
          <p data-testid="statement-status">
            {statement.closed_at === null
              ? `${statement.period} is open: figures are live.`
              : `${statement.period} closed on ${new Date(statement.closed_at).toLocaleDateString()}.`}
          </p>
          <dl className="figures">
            <div>
              <dt>Calls</dt>
              <dd data-testid="statement-calls">{statement.totals.calls}</dd>
            </div>
            <div>
              <dt>Credits spent by callers</dt>
              <dd>{statement.totals.credits}</dd>
            </div>
            <div>
              <dt>Your earnings (credits)</dt>
              <dd data-testid="statement-earnings">{statement.totals.owner_share}</dd>
            </div>
          </dl>
          <h2>Earnings by analytic</h2>
          {chart.labels.length === 0 ? (
            <p>No calls yet this month.</p>
          ) : (
            <Chart
              title={`Earnings by analytic in ${statement.period}`}
              labels={chart.labels}
              series={chart.series}
            />
          )}
          <DataTable
            caption="Per analytic"
            columns={['analytic', 'calls', 'credits', 'your share', 'platform share']}
            rows={statement.analytics.map((a) => [
              a.name,
              a.calls,
              a.credits,
              a.owner_share,
              a.platform_share,
            ])}
          />
          <p>
            <a
              href={`/v1/owner/statements${queryString({ period: statement.period, format: 'csv' })}`}
              download={`statement-${statement.period}.csv`}
            >
              Download CSV
            </a>
          </p>
        </>
      )}
    </section>
  );
}
