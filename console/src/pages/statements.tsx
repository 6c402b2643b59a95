// The owner's statement for a month: per analytic, the calls by origin, the credits the callers
// spent and what they paid in USD, the owner's share of both; an earnings chart by day and
// analytic (the top earners apart, the rest as one series); whether the period is closed and its
// payout; the payouts of the last closed periods; and the CSV. All rendering of the statement's shape is in
// this one module (GET /v1/owner/statements; shapes in gateway/src/routes/statements.ts).
import { useEffect, useMemo, useState } from 'react';
import { api, queryString } from '../api.js';
import { Chart } from '../chart.js';
import { DataTable, ErrorNote, formatCents, formatCredits, formatUsd } from '../components.js';
import { daysOf, MonthField, thisMonth } from '../months.js';

interface Amounts {
  readonly calls: number;
  readonly calls_by_origin: {
    readonly paid: number;
    readonly free: number;
    readonly marketplace: number;
    readonly owner: number;
  };
  readonly credits: number;
  readonly owner_share: number;
  readonly platform_share: number;
  readonly value_usd: number;
  readonly owner_share_usd: number;
  readonly platform_share_usd: number;
}

interface Payout {
  readonly carried_in_micro_usd: number;
  readonly earned_micro_usd: number;
  readonly payout_cents: number;
  readonly carried_out_micro_usd: number;
}

interface Statement {
  readonly period: string;
  readonly closed_at: string | null;
  readonly analytics: readonly (Amounts & { readonly name: string })[];
  readonly totals: Amounts;
  readonly by_day: readonly (Amounts & { readonly date: string; readonly name: string })[];
  readonly payout: Payout | null;
}

/** How many analytics the earnings chart shows apart; the others are one series. */
const CHART_ANALYTICS = 5;

/** Earnings (credits) per day of the period, one series per analytic among the top earners. */
function earningsByDay(statement: Statement) {
  const ranked = [...statement.analytics].sort((a, b) => b.owner_share - a.owner_share);
  const apart = ranked.slice(0, CHART_ANALYTICS).map((a) => a.name);
  const others = ranked.length > CHART_ANALYTICS ? 'other analytics' : undefined;
  const days = daysOf(statement.period);
  const values = new Map<string, number[]>(
    [...apart, ...(others === undefined ? [] : [others])].map((name) => [name, days.map(() => 0)]),
  );
  for (const d of statement.by_day) {
    const row = values.get(apart.includes(d.name) ? d.name : (others ?? d.name));
    const day = Number(d.date.slice(8)) - 1;
    if (row !== undefined && row[day] !== undefined) row[day] += d.owner_share;
  }
  return {
    labels: days.map((d) => d.slice(8)),
    series: [...values].map(([name, perDay]) => ({ name, values: perDay })),
  };
}

/** How many months back the payouts table looks. */
const PAYOUT_MONTHS = 12;

/** The `count` months before `period` (YYYY-MM), newest first. */
function monthsBefore(period: string, count: number): string[] {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return Array.from({ length: count }, (_, i) =>
    new Date(Date.UTC(year, month - 2 - i, 1)).toISOString().slice(0, 7),
  );
}

const microUsd = (micro: number) => formatUsd(micro / 1_000_000);

export function StatementsPage() {
  const [period, setPeriod] = useState(thisMonth);
  const [statement, setStatement] = useState<Statement>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setError(undefined);
    api<Statement>('GET', `/v1/owner/statements${queryString({ period })}`).then(setStatement, setError);
  }, [period]);
  const chart = useMemo(() => (statement === undefined ? undefined : earningsByDay(statement)), [statement]);
  return (
    <section aria-labelledby="statements-title">
      <h1 id="statements-title">Statements</h1>
      <MonthField period={period} onChange={setPeriod} />
      <ErrorNote error={error} />
      {statement === undefined || chart === undefined ? null : (
        <>
          <p data-testid="statement-status">
            {statement.closed_at === null
              ? `${statement.period} is open: figures are live; the payout is set when the period is closed.`
              : `${statement.period} closed on ${new Date(statement.closed_at).toLocaleDateString()}.`}
          </p>
          <dl className="figures">
            <div>
              <dt>Calls</dt>
              <dd data-testid="statement-calls">{statement.totals.calls}</dd>
            </div>
            <div>
              <dt>Credits spent by callers</dt>
              <dd data-testid="statement-credits">{formatCredits(statement.totals.credits)}</dd>
            </div>
            <div>
              <dt>Callers paid</dt>
              <dd data-testid="statement-value">{formatUsd(statement.totals.value_usd)}</dd>
            </div>
            <div>
              <dt>Your earnings (credits)</dt>
              <dd data-testid="statement-earnings">{formatCredits(statement.totals.owner_share)}</dd>
            </div>
            <div>
              <dt>Your earnings (USD)</dt>
              <dd data-testid="statement-earnings-usd">{formatUsd(statement.totals.owner_share_usd)}</dd>
            </div>
          </dl>
          {statement.payout === null ? null : <PayoutNote payout={statement.payout} />}
          <h2>Earnings by day and analytic</h2>
          <p className="hint">
            Your credits per day (UTC) of {statement.period}. You earn 0.8 of each credit spent and 80% of
            what the caller paid for it; Free-plan credits earn credits and $0.
          </p>
          {statement.analytics.length === 0 ? (
            <p>No calls yet this month.</p>
          ) : (
            <Chart
              title={`Your earnings in credits per day and analytic in ${statement.period}`}
              labels={chart.labels}
              series={chart.series}
            />
          )}
          <DataTable
            caption="Per analytic, in credits and USD"
            columns={[
              'analytic',
              'calls',
              'paid',
              'free plan',
              'previews',
              'yours',
              'credits',
              'callers paid',
              'your share (credits)',
              'your share (USD)',
              'platform share (USD)',
            ]}
            rows={[...statement.analytics, { name: 'total', ...statement.totals }].map((a) => [
              a.name,
              a.calls,
              a.calls_by_origin.paid,
              a.calls_by_origin.free,
              a.calls_by_origin.marketplace,
              a.calls_by_origin.owner,
              formatCredits(a.credits),
              formatUsd(a.value_usd),
              formatCredits(a.owner_share),
              formatUsd(a.owner_share_usd),
              formatUsd(a.platform_share_usd),
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
      <Payouts before={thisMonth()} />
    </section>
  );
}

function PayoutNote({ payout }: { readonly payout: Payout }) {
  return (
    <p data-testid="statement-payout">
      Payout: <strong>{formatCents(payout.payout_cents)}</strong> ({microUsd(payout.earned_micro_usd)} earned
      + {microUsd(payout.carried_in_micro_usd)} carried in; {microUsd(payout.carried_out_micro_usd)} carried
      into your next payout).
    </p>
  );
}

/** The payouts of the closed periods among the last months: whole cents, the rest carried on. */
function Payouts({ before }: { readonly before: string }) {
  const [rows, setRows] = useState<readonly Statement[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    Promise.all(
      monthsBefore(before, PAYOUT_MONTHS).map((p) =>
        api<Statement>('GET', `/v1/owner/statements${queryString({ period: p })}`),
      ),
    ).then((all) => setRows(all.filter((s) => s.closed_at !== null)), setError);
  }, [before]);
  return (
    <>
      <h2>Payouts</h2>
      <ErrorNote error={error} />
      {rows === undefined ? null : rows.length === 0 ? (
        <p data-testid="payouts-none">No closed period in the last {PAYOUT_MONTHS} months.</p>
      ) : (
        <DataTable
          caption={`Payouts of the closed periods (last ${PAYOUT_MONTHS} months)`}
          columns={['period', 'closed', 'earned', 'carried in', 'paid out', 'carried out']}
          rows={rows.map((s) => [
            s.period,
            new Date(s.closed_at ?? '').toLocaleDateString(),
            s.payout === null ? '$0.00' : microUsd(s.payout.earned_micro_usd),
            s.payout === null ? '' : microUsd(s.payout.carried_in_micro_usd),
            s.payout === null ? '$0.00' : formatCents(s.payout.payout_cents),
            s.payout === null ? '' : microUsd(s.payout.carried_out_micro_usd),
          ])}
        />
      )}
    </>
  );
}
