// The owner's statement for a month: per analytic, the calls by origin, the credits the callers
// spent and what they paid in USD, the owner's share of both; an earnings chart by day and
// analytic (the top earners apart, the rest as one series); whether the period is closed, its
// payout (status, transfer reference) and its adjustments (refunds and disputes of earlier usage);
// the CSV and the printable statement; then the Payouts section (pages/payouts.tsx).
// GET /v1/owner/statements; shapes in @quarry/client's types and gateway/src/routes/statements.ts.
import type { Statement, StatementAdjustment, StatementFailedCalls, StatementPayout } from '@quarry/client';
import { useEffect, useMemo, useState } from 'react';
import { api, queryString } from '../api.js';
import { Chart } from '../chart.js';
import { DataTable, ErrorNote, formatCents, formatCredits, formatUsd } from '../components.js';
import { daysOf, MonthField, thisMonth } from '../months.js';
import { href } from '../router.js';
import { microUsd, PayoutsSection, reasonText, StatusBadge, usePayouts } from './payouts.js';

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

/** A YYYY-MM given in the route, if it is one. */
const isPeriod = (value: string | undefined): value is string =>
  value !== undefined && /^\d{4}-(0[1-9]|1[0-2])$/.test(value);

export function StatementsPage({ initialPeriod }: { readonly initialPeriod?: string }) {
  const [period, setPeriod] = useState(() => (isPeriod(initialPeriod) ? initialPeriod : thisMonth()));
  const payouts = usePayouts();
  const minimumCents = payouts.account?.minimum_payout_cents ?? 1_000;
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
          {statement.payout === null ? null : (
            <PayoutNote payout={statement.payout} minimumCents={minimumCents} />
          )}
          <Adjustments adjustments={statement.adjustments} />
          <FailedCalls failed={statement.failed_calls} />
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
          <p className="row">
            <a
              href={`/v1/owner/statements${queryString({ period: statement.period, format: 'csv' })}`}
              download={`statement-${statement.period}.csv`}
            >
              Download CSV
            </a>
            <a href={href('statements', statement.period, 'print')} data-testid="print-link">
              Print the statement of {statement.period}
            </a>
          </p>
        </>
      )}
      <PayoutsSection state={payouts} />
    </section>
  );
}

/** A closed period's payout: its status, amount and how it was reached, the transfer reference. */
export function PayoutNote({
  payout,
  minimumCents,
}: {
  readonly payout: StatementPayout;
  readonly minimumCents: number;
}) {
  const adjusted = payout.adjusted_micro_usd;
  const reason = reasonText(payout.reason, minimumCents);
  return (
    <div className="panel payout-note" data-testid="statement-payout">
      <p>
        Payout: <StatusBadge status={payout.status} /> <strong>{formatCents(payout.payout_cents)}</strong>
        {reason === '' ? null : ` — ${reason}`}
      </p>
      <p className="hint">
        {microUsd(payout.earned_micro_usd)} earned
        {adjusted === 0 ? '' : ` − ${microUsd(adjusted)} refunds and disputes`} +{' '}
        {microUsd(payout.carried_in_micro_usd)} carried in; {microUsd(payout.carried_out_micro_usd)} carried
        into your next payout.
      </p>
      {payout.transfer_id === null ? null : (
        <p>
          Transfer reference: <code data-testid="statement-transfer-id">{payout.transfer_id}</code>
        </p>
      )}
    </div>
  );
}

const ADJUSTMENT_REASONS: Readonly<Record<string, string>> = {
  refund: 'refund',
  dispute: 'dispute (chargeback)',
};

/** Other accounts' calls that failed after running in the owner's warehouse: free, no money. */
export function FailedCalls({ failed }: { readonly failed: readonly StatementFailedCalls[] }) {
  if (failed.length === 0) return null;
  return (
    <DataTable
      caption="Failed calls by caller: free calls that ran in your warehouse and failed (timeouts, results too large, warehouse errors)"
      columns={['caller account', 'analytic', 'calls', 'by error', 'warehouse seconds']}
      rows={failed.map((f) => [
        f.caller_account_id,
        f.analytic,
        f.calls,
        Object.entries(f.calls_by_code)
          .map(([code, n]) => `${code}: ${n}`)
          .join(', '),
        f.warehouse_seconds.toFixed(1),
      ])}
    />
  );
}

/** Refunds and disputes of earlier usage, taken from this period's earnings (negative amounts). */
export function Adjustments({ adjustments }: { readonly adjustments: readonly StatementAdjustment[] }) {
  if (adjustments.length === 0) return null;
  return (
    <DataTable
      caption="Adjustments: refunds and disputes of earlier usage, taken from this month"
      columns={['analytic', 'usage month', 'reason', 'your share (USD)', 'platform share (USD)']}
      rows={adjustments.map((a) => [
        a.analytic,
        a.usage_period,
        ADJUSTMENT_REASONS[a.reason] ?? a.reason,
        microUsd(a.owner_micro_usd),
        microUsd(a.platform_micro_usd),
      ])}
    />
  );
}
