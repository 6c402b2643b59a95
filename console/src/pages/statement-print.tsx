// The printable statement of one period (`#/statements/<period>/print`): one page with the
// platform's name, the period, the owner (from the session), the lines per analytic, optionally
// per day, the adjustments, the totals and the payout with its transfer reference. The print
// stylesheet (styles.css, `@media print`) hides the navigation and the buttons, so the browser's
// Print (window.print()) gives a clean page.
import type { Payout, Payouts, Statement } from '@quarry/client';
import { useEffect, useId, useState } from 'react';
import { api, queryString } from '../api.js';
import { ErrorNote, formatCents, formatCredits, formatUsd, ScrollBox } from '../components.js';
import { href } from '../router.js';
import { useSession } from '../session.js';
import { formatDay, microUsd, reasonText, StatusBadge } from './payouts.js';

const ADJUSTMENT_REASONS: Readonly<Record<string, string>> = { refund: 'Refund', dispute: 'Dispute' };

export function StatementPrintPage({ period }: { readonly period: string }) {
  const { session } = useSession();
  const [statement, setStatement] = useState<Statement>();
  const [payout, setPayout] = useState<Payout | null>();
  const [minimumCents, setMinimumCents] = useState(1_000);
  const [error, setError] = useState<unknown>();
  const [perDay, setPerDay] = useState(false);
  const perDayId = useId();
  useEffect(() => {
    setError(undefined);
    api<Statement>('GET', `/v1/owner/statements${queryString({ period })}`).then(setStatement, setError);
    // The payout list adds when it was paid; a gateway without it still prints the statement.
    api<Payouts>('GET', '/v1/owner/payouts').then(
      (p) => setPayout(p.payouts.find((x) => x.period === period) ?? null),
      () => setPayout(null),
    );
    api<{ minimum_payout_cents: number }>('GET', '/v1/owner/payouts/account').then(
      (a) => setMinimumCents(a.minimum_payout_cents),
      () => {},
    );
  }, [period]);
  useEffect(() => {
    document.title = `Quarry statement ${period}`;
    return () => {
      document.title = 'Quarry';
    };
  }, [period]);
  const adjustments = statement?.adjustments ?? [];
  const adjustedMicro = adjustments.reduce((sum, a) => sum + a.owner_micro_usd, 0);
  const p = statement?.payout ?? null;
  const status = payout?.status ?? p?.status;
  const transfer = payout?.transfer_id ?? p?.transfer_id ?? null;
  const reason = reasonText(payout?.reason ?? p?.reason, minimumCents);
  return (
    <article className="statement-print" aria-labelledby="print-title">
      <div className="no-print row">
        <a href={href('statements', period)}>Back to statements</a>
        <button type="button" onClick={() => window.print()}>
          Print
        </button>
        <label className="inline" htmlFor={perDayId}>
          <input
            id={perDayId}
            type="checkbox"
            checked={perDay}
            onChange={(e) => setPerDay(e.target.checked)}
          />
          Include the per-day lines
        </label>
      </div>
      <ErrorNote error={error} />
      <div className="print-head">
        <p className="print-brand">Quarry</p>
        <h1 id="print-title">Owner statement — {period}</h1>
        <dl className="print-meta">
          <div>
            <dt>Owner</dt>
            <dd data-testid="print-owner">
              {session ? `${session.account.name} <${session.account.email}>` : ''}
            </dd>
          </div>
          {session ? (
            <div>
              <dt>Account</dt>
              <dd>{session.account.id}</dd>
            </div>
          ) : null}
          <div>
            <dt>Period</dt>
            <dd>
              {period} (calendar month, UTC){' '}
              {statement === undefined
                ? null
                : statement.closed_at === null
                  ? '— open: figures are live and may change'
                  : `— closed on ${formatDay(statement.closed_at)}`}
            </dd>
          </div>
          <div>
            <dt>Issued</dt>
            <dd>{formatDay(new Date().toISOString())}</dd>
          </div>
        </dl>
      </div>
      {statement === undefined ? null : (
        <>
          <ScrollBox label="Earnings per analytic">
            <table>
              <caption>Earnings per analytic</caption>
              <thead>
                <tr>
                  <th scope="col">Analytic</th>
                  <th scope="col" className="num">
                    Calls
                  </th>
                  <th scope="col" className="num">
                    Credits
                  </th>
                  <th scope="col" className="num">
                    Callers paid
                  </th>
                  <th scope="col" className="num">
                    Your share (80%)
                  </th>
                </tr>
              </thead>
              <tbody>
                {statement.analytics.length === 0 ? (
                  <tr>
                    <td colSpan={5}>No calls in this period.</td>
                  </tr>
                ) : (
                  statement.analytics.map((a) => (
                    <tr key={a.name}>
                      <th scope="row">{a.name}</th>
                      <td className="num">{a.calls}</td>
                      <td className="num">{formatCredits(a.credits)}</td>
                      <td className="num">{formatUsd(a.value_usd)}</td>
                      <td className="num">{formatUsd(a.owner_share_usd)}</td>
                    </tr>
                  ))
                )}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  <td className="num">{statement.totals.calls}</td>
                  <td className="num">{formatCredits(statement.totals.credits)}</td>
                  <td className="num">{formatUsd(statement.totals.value_usd)}</td>
                  <td className="num" data-testid="print-earnings">
                    {formatUsd(statement.totals.owner_share_usd)}
                  </td>
                </tr>
              </tfoot>
            </table>
          </ScrollBox>
          {perDay && statement.by_day.length > 0 ? (
            <ScrollBox label="Per day (UTC) and analytic">
              <table>
                <caption>Per day (UTC) and analytic</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    <th scope="col">Analytic</th>
                    <th scope="col" className="num">
                      Calls
                    </th>
                    <th scope="col" className="num">
                      Callers paid
                    </th>
                    <th scope="col" className="num">
                      Your share
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {statement.by_day.map((d) => (
                    <tr key={`${d.date} ${d.name}`}>
                      <td>{d.date}</td>
                      <td>{d.name}</td>
                      <td className="num">{d.calls}</td>
                      <td className="num">{formatUsd(d.value_usd)}</td>
                      <td className="num">{formatUsd(d.owner_share_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollBox>
          ) : null}
          {adjustments.length === 0 ? null : (
            <ScrollBox label="Adjustments">
              <table data-testid="print-adjustments">
                <caption>Adjustments (refunds and disputes of earlier usage)</caption>
                <thead>
                  <tr>
                    <th scope="col">Analytic</th>
                    <th scope="col">Usage month</th>
                    <th scope="col">Reason</th>
                    <th scope="col" className="num">
                      Your share
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {adjustments.map((a, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: adjustments have no identity of their own.
                    <tr key={i}>
                      <td>{a.analytic}</td>
                      <td>{a.usage_period}</td>
                      <td>{ADJUSTMENT_REASONS[a.reason] ?? a.reason}</td>
                      <td className="num">{microUsd(a.owner_micro_usd)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" colSpan={3}>
                      Total adjustments
                    </th>
                    <td className="num">{microUsd(adjustedMicro)}</td>
                  </tr>
                </tfoot>
              </table>
            </ScrollBox>
          )}
          <h2>Payout</h2>
          {p === null ? (
            <p data-testid="print-payout">
              {statement.closed_at === null
                ? 'The payout is set when the period is closed.'
                : 'Nothing to pay out for this period.'}
            </p>
          ) : (
            <dl className="print-totals" data-testid="print-payout">
              <div>
                <dt>Earned in {period}</dt>
                <dd>{microUsd(p.earned_micro_usd)}</dd>
              </div>
              {p.adjusted_micro_usd === 0 ? null : (
                <div>
                  <dt>Refunds and disputes</dt>
                  <dd>{microUsd(-p.adjusted_micro_usd)}</dd>
                </div>
              )}
              <div>
                <dt>Carried in from earlier months</dt>
                <dd>{microUsd(p.carried_in_micro_usd)}</dd>
              </div>
              <div>
                <dt>Carried into the next payout</dt>
                <dd>{microUsd(-p.carried_out_micro_usd)}</dd>
              </div>
              <div className="grand">
                <dt>Payout</dt>
                <dd>{formatCents(p.payout_cents)}</dd>
              </div>
              {status === undefined ? null : (
                <div>
                  <dt>Status</dt>
                  <dd>
                    <StatusBadge status={status} />
                    {reason === '' ? null : ` — ${reason}`}
                    {payout?.paid_at ? ` on ${formatDay(payout.paid_at)}` : null}
                  </dd>
                </div>
              )}
              {transfer === null ? null : (
                <div>
                  <dt>Transfer reference</dt>
                  <dd>
                    <code data-testid="print-transfer-id">{transfer}</code>
                  </dd>
                </div>
              )}
            </dl>
          )}
          <p className="print-foot">
            You earn 80% of what callers paid for the credits spent on your analytics, rounded down to the
            micro-USD per call; payouts are whole cents, the rest is carried to the next one.
          </p>
        </>
      )}
    </article>
  );
}
