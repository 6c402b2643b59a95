// Usage this month (or another): the plan, credits used and left, the amount due in USD, a chart
// of credits per day, a table per analytic with the calls by origin, the CSV, and for a Pay as you
// Go account its monthly budget. The Plan section (buying another plan, the notice when the
// month's credits are spent, the return from a checkout) is in ./billing.tsx. All rendering of the usage answer's shape is in this one module
// (GET /v1/account/usage, GET and PUT /v1/account/budget; shapes in gateway/src/routes/usage.ts,
// budget.ts and money-schemas.ts).
import { type FormEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { api, queryString } from '../api.js';
import { Chart } from '../chart.js';
import { DataTable, ErrorNote, Field, formatCredits, formatUsd } from '../components.js';
import { daysOf, MonthField, thisMonth } from '../months.js';
import { href } from '../router.js';
import { CheckoutNote, PlanSection, QuotaNotice, useBilling, useCheckoutReturn } from './billing.js';

interface Totals {
  readonly calls: number;
  readonly credits: number;
  readonly value_usd: number;
}

interface CallsByOrigin {
  readonly paid: number;
  readonly free: number;
  readonly marketplace: number;
  readonly owner: number;
}

interface BudgetState {
  readonly budget_usd: number;
  readonly spent_usd: number;
  readonly left_usd: number;
}

interface Usage {
  readonly period: string;
  readonly plan: {
    readonly id: string;
    readonly name: string;
    readonly included_credits: number | null;
    readonly monthly_price_cents: number;
    readonly credit_value_usd: number;
  };
  readonly totals: {
    readonly calls: number;
    readonly calls_by_origin: CallsByOrigin;
    readonly credits_used: number;
    readonly credits_left: number | null;
    readonly amount_due_usd: number;
  };
  /** Pay as you Go only. */
  readonly budget: BudgetState | null;
  readonly by_analytic: readonly (Totals & { readonly name: string })[];
  readonly by_day: readonly (Totals & { readonly date: string })[];
}

interface Budget {
  readonly budget: BudgetState & {
    readonly period: string;
    readonly custom: boolean;
    readonly max_budget_usd: number;
    readonly applies: boolean;
  };
}

/** The account's usage thresholds (percent), for the same notice as the usage.threshold alert. */
function useAlertThresholds(): readonly number[] | undefined {
  const [thresholds, setThresholds] = useState<readonly number[]>();
  useEffect(() => {
    api<{ alerts: { usage_thresholds: number[] } }>('GET', '/v1/account/alerts').then(
      (r) => setThresholds(r.alerts.usage_thresholds),
      () => setThresholds([]),
    );
  }, []);
  return thresholds;
}

export function UsagePage() {
  const [period, setPeriod] = useState(thisMonth);
  const [usage, setUsage] = useState<Usage>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(() => {
    setError(undefined);
    api<Usage>('GET', `/v1/account/usage${queryString({ period })}`).then(setUsage, setError);
  }, [period]);
  useEffect(load, [load]);
  const billing = useBilling();
  const checkout = useCheckoutReturn(billing.setBilling, load);
  const perDay = useMemo(() => {
    if (usage === undefined) return undefined;
    const credits = new Map(usage.by_day.map((d) => [d.date, d.credits]));
    const days = daysOf(usage.period);
    return {
      labels: days.map((d) => d.slice(8)),
      series: [{ name: 'credits', values: days.map((d) => credits.get(d) ?? 0) }],
    };
  }, [usage]);
  const thresholds = useAlertThresholds();
  const payg = usage !== undefined && usage.plan.included_credits === null;
  // The same alert as the usage.threshold webhook: the highest threshold this month passed.
  const usedPercent =
    usage !== undefined && usage.period === thisMonth() && usage.plan.included_credits
      ? (usage.totals.credits_used * 100) / usage.plan.included_credits
      : undefined;
  const passed =
    usedPercent === undefined ? undefined : [...(thresholds ?? [])].reverse().find((t) => usedPercent >= t);
  const quotaSpent =
    usage !== undefined &&
    usage.period === thisMonth() &&
    usage.plan.included_credits !== null &&
    usage.totals.credits_left === 0;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <p>
        Each call of the last 30 days, with its request id and status:{' '}
        <a href={href('calls')}>recent calls</a>.
      </p>
      <CheckoutNote state={checkout} />
      {quotaSpent ? (
        <QuotaNotice billing={billing.billing} resetsOn={firstOfNextMonth(usage.period)} />
      ) : null}
      {passed !== undefined && !quotaSpent ? (
        <p className="notice warning" role="status" data-testid="usage-alert">
          This month's calls used {Math.floor(usedPercent ?? 0)}% of the plan's credits, past your {passed}%
          alert. Alerts and webhooks: <a href={href('webhooks')}>Webhooks</a>.
        </p>
      ) : null}
      <MonthField period={period} onChange={setPeriod} />
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
              <dd data-testid="credits-used">{formatCredits(usage.totals.credits_used)}</dd>
            </div>
            <div>
              <dt>Credits left</dt>
              <dd data-testid="credits-left">
                {usage.totals.credits_left === null ? 'no cap' : formatCredits(usage.totals.credits_left)}
              </dd>
            </div>
            <div>
              <dt>Amount due</dt>
              <dd data-testid="amount-due">{formatUsd(usage.totals.amount_due_usd)}</dd>
            </div>
            <div>
              <dt>A credit costs</dt>
              <dd data-testid="credit-value">{formatUsd(usage.plan.credit_value_usd)}</dd>
            </div>
            <div>
              <dt>Free previews</dt>
              <dd>{usage.totals.calls_by_origin.marketplace}</dd>
            </div>
          </dl>
          <PlanSection billing={billing.billing} error={billing.error} />
          <DataTable
            caption="Calls by origin"
            columns={['paid', 'free plan', 'marketplace previews', 'your own analytics']}
            rows={[
              [
                usage.totals.calls_by_origin.paid,
                usage.totals.calls_by_origin.free,
                usage.totals.calls_by_origin.marketplace,
                usage.totals.calls_by_origin.owner,
              ],
            ]}
          />
          <h2>Credits per day</h2>
          <Chart title={`Credits per day in ${usage.period}`} labels={perDay.labels} series={perDay.series} />
          <DataTable
            caption="Per analytic (calls that spent credits)"
            columns={['analytic', 'calls', 'credits', 'cost (USD)']}
            rows={usage.by_analytic.map((a) => [
              a.name,
              a.calls,
              formatCredits(a.credits),
              formatUsd(a.value_usd),
            ])}
          />
          <p>
            <a
              href={`/v1/account/usage${queryString({ period: usage.period, format: 'csv' })}`}
              download={`usage-${usage.period}.csv`}
            >
              Download CSV
            </a>
          </p>
          {payg ? <BudgetForm onChange={load} /> : null}
        </>
      )}
    </section>
  );
}

/** The first day of the month after `period` (YYYY-MM), as the console shows dates. */
function firstOfNextMonth(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1)).toLocaleDateString('en-US', {
    dateStyle: 'medium',
    timeZone: 'UTC',
  });
}

/** The Pay as you Go budget: what this month may cost at most; calls stop with 429 past it. */
function BudgetForm({ onChange }: { readonly onChange: () => void }) {
  const [budget, setBudget] = useState<Budget['budget']>();
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<Budget>('GET', '/v1/account/budget').then((b) => {
      setBudget(b.budget);
      setValue(String(b.budget.budget_usd));
    }, setError);
  }, []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    setBusy(true);
    api<Budget>('PUT', '/v1/account/budget', { budget_usd: Number(value) })
      .then((b) => {
        setBudget(b.budget);
        setValue(String(b.budget.budget_usd));
        setSaved(true);
        onChange();
      }, setError)
      .finally(() => setBusy(false));
  };
  return (
    <form onSubmit={submit} aria-labelledby="budget-title">
      <h2 id="budget-title">Pay as you Go budget</h2>
      {budget === undefined ? null : (
        <p data-testid="budget-state">
          This month ({budget.period}): {formatUsd(budget.spent_usd)} spent of {formatUsd(budget.budget_usd)}
          {budget.custom ? '' : ' (the default)'}, {formatUsd(budget.left_usd)} left. Calls are refused once
          the month's credits would cost more.
        </p>
      )}
      <Field
        label="Budget (USD a month)"
        hint={`Whole cents${budget === undefined ? '' : `, at most ${formatUsd(budget.max_budget_usd)}`}. Applies to the next call.`}
      >
        {(id, hintId) => (
          <input
            id={id}
            aria-describedby={hintId}
            type="number"
            min={0}
            step="0.01"
            required
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={busy}>
        Save budget
      </button>
      <ErrorNote error={error} />
      {saved ? (
        <p role="status" data-testid="budget-saved">
          Budget saved.
        </p>
      ) : null}
    </form>
  );
}
