// The Statements page's Payouts section: where the owner is paid (the payment provider's account,
// what it still needs, a "Set up payouts" / "Continue setup" button to the provider's onboarding),
// the minimum payout, the balance held and carried, and each closed month's payout with its status
// and transfer reference. The return from onboarding (`?onboarding=done`, which the gateway adds
// to the return URL's query) shows a notice, reads the account again until the provider says it
// is complete, and is stripped from the address; `?onboarding=refresh` (the provider's link
// expired) says to continue with a new link.
// API: GET /v1/owner/payouts/account, GET /v1/owner/payouts, POST /v1/owner/payouts/onboarding.
import type { Payout, PayoutAccount, PayoutStatus, Payouts } from '@quarry/client';
import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, formatCents, formatUsd, ScrollBox } from '../components.js';

/** How often the page asks whether onboarding is complete after coming back from it. */
const POLL_MS = 1_500;
/** When to stop asking (the provider's word is late): the page says so. */
const POLL_GIVE_UP_MS = 60_000;

export const microUsd = (micro: number) => formatUsd(micro / 1_000_000);

/** What the provider still needs, in words. */
export function requirementText(requirement: string): string {
  if (requirement === 'external_account') return 'a bank account to pay into';
  return requirement.replaceAll('_', ' ').replaceAll('.', ': ');
}

/** Why a payout is held or failed, in words (the provider's own words as they are). */
export function reasonText(reason: string | null | undefined, minimumCents: number): string {
  switch (reason) {
    case null:
    case undefined:
      return '';
    case 'below_minimum':
      return `below the ${(minimumCents / 100).toFixed(2)} USD minimum: carried to next month`;
    case 'not_onboarded':
      return 'payouts not set up yet: carried to next month';
    case 'negative_balance':
      return 'refunds exceed earnings: carried to next month';
    default:
      return reason;
  }
}

const STATUS_TEXT: Readonly<Record<PayoutStatus, string>> = {
  held: 'Held',
  pending: 'On its way',
  paid: 'Paid',
  failed: 'Failed',
  reversed: 'Reversed',
  operator: 'Paid by the operator',
};

/** A payout's status as a badge (its words, never colour alone). */
export function StatusBadge({ status }: { readonly status: PayoutStatus | string }) {
  const text = STATUS_TEXT[status as PayoutStatus] ?? status;
  return (
    <span className={`status status-${status}`} data-status={status}>
      {text}
    </span>
  );
}

export const formatDay = (iso: string) =>
  new Date(iso).toLocaleDateString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });

/**
 * `?onboarding=done` (or `refresh`: the provider's link expired before the end) of the page's
 * URL, read once per page load and stripped from the address.
 */
let onboardingReturn: 'done' | 'refresh' | null | undefined;
function takeOnboardingReturn(): ReturnState {
  if (onboardingReturn === undefined) {
    const url = new URL(window.location.href);
    const value = url.searchParams.get('onboarding');
    onboardingReturn = value === 'done' || value === 'refresh' ? value : null;
    if (value !== null) {
      url.searchParams.delete('onboarding');
      window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    }
  }
  if (onboardingReturn === 'done') return 'checking';
  return onboardingReturn === 'refresh' ? 'expired' : 'none';
}

type ReturnState = 'none' | 'checking' | 'done' | 'slow' | 'expired';

/** The account and the payouts, read together; `reload` reads both again. */
export function usePayouts() {
  const [account, setAccount] = useState<PayoutAccount>();
  const [payouts, setPayouts] = useState<Payouts>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(() => {
    setError(undefined);
    api<PayoutAccount>('GET', '/v1/owner/payouts/account').then(setAccount, setError);
    api<Payouts>('GET', '/v1/owner/payouts').then(setPayouts, setError);
  }, []);
  useEffect(reload, [reload]);
  return { account, setAccount, payouts, error, reload };
}

/** After onboarding: reads the account every 1.5 s until complete, then reloads everything. */
function useOnboardingReturn(onAccount: (account: PayoutAccount) => void, onDone: () => void): ReturnState {
  const [state, setState] = useState<ReturnState>(takeOnboardingReturn);
  const callbacks = useRef({ onAccount, onDone });
  callbacks.current = { onAccount, onDone };
  useEffect(() => {
    // Shown once: a later visit of the page starts afresh.
    onboardingReturn = null;
  }, []);
  const checking = state === 'checking';
  useEffect(() => {
    if (!checking) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const started = Date.now();
    const tick = async () => {
      try {
        const account = await api<PayoutAccount>('GET', '/v1/owner/payouts/account');
        if (stopped) return;
        callbacks.current.onAccount(account);
        if (account.status === 'complete') {
          setState('done');
          callbacks.current.onDone();
          return;
        }
      } catch {
        // A failed read is asked again at the next tick.
      }
      if (stopped) return;
      if (Date.now() - started > POLL_GIVE_UP_MS) setState('slow');
      else timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [checking]);
  return state;
}

function OnboardingNote({ state }: { readonly state: ReturnState }) {
  switch (state) {
    case 'checking':
      return (
        <p className="notice" role="status" data-testid="onboarding-note">
          Back from setting up payouts — checking with the payment provider…
        </p>
      );
    case 'done':
      return (
        <p className="notice ok" role="status" data-testid="onboarding-note">
          Payouts set up: each closed month is paid to your account.
        </p>
      );
    case 'slow':
      return (
        <p className="notice" role="status" data-testid="onboarding-note">
          The payment provider has not confirmed your details yet. This page shows it as soon as it does:
          reload it in a while, or continue the setup if something was left out.
        </p>
      );
    case 'expired':
      return (
        <p className="notice" role="status" data-testid="onboarding-note">
          The setup link expired before you finished. Continue setup for a new one: what you gave is kept.
        </p>
      );
    default:
      return null;
  }
}

/** Opens the provider's onboarding and leaves for it; it comes back to the Statements page. */
function useOnboarding() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return {
    busy,
    error,
    start() {
      setError(undefined);
      setBusy(true);
      api<{ readonly url: string }>('POST', '/v1/owner/payouts/onboarding', {
        return_url: `${window.location.origin}/#/statements`,
      }).then(
        ({ url }) => window.location.assign(url),
        (e: unknown) => {
          setError(e);
          setBusy(false);
        },
      );
    },
  };
}

/** Where the owner is paid, in words, and the button that sets it up. */
function AccountState({ account }: { readonly account: PayoutAccount }) {
  const onboarding = useOnboarding();
  const needs = account.requirements.map(requirementText);
  const button = (label: string, secondary = false) => (
    <p>
      <button
        type="button"
        className={secondary ? 'secondary' : undefined}
        disabled={onboarding.busy}
        onClick={() => onboarding.start()}
      >
        {label}
      </button>
    </p>
  );
  let state: ReactNode;
  let action: ReactNode = null;
  if (account.provider === 'none') {
    state = 'The operator of this gateway pays your earnings by hand: there is nothing to set up here.';
  } else if (account.status === 'complete' && account.payouts_enabled) {
    state = (
      <>
        <strong>Payouts set up.</strong> Each closed month is paid to your account.
      </>
    );
    action = button('Update payout details', true);
  } else if (account.status === 'complete') {
    state = (
      <>
        <strong>Payouts set up</strong>, but the payment provider has paused them
        {needs.length === 0 ? '.' : `: it needs ${needs.join(', ')}.`}
      </>
    );
    action = button('Continue setup');
  } else if (account.status === 'pending') {
    state = (
      <>
        <strong>Payout setup is not finished.</strong>
        {needs.length === 0
          ? ' The payment provider is checking your details.'
          : ` Still needed: ${needs.join(', ')}.`}{' '}
        Your earnings are held until it is.
      </>
    );
    action = button('Continue setup');
  } else {
    state = (
      <>
        <strong>Payouts are not set up yet.</strong> Tell the payment provider where to pay you; until then
        your earnings are held and carried.
      </>
    );
    action = button('Set up payouts');
  }
  return (
    <div data-testid="payout-account">
      <p>{state}</p>
      {action}
      <ErrorNote error={onboarding.error} />
      {account.provider === 'sandbox' ? <p className="hint">Sandbox payments: no money moves.</p> : null}
      {account.provider === 'none' ? null : (
        <p className="hint" data-testid="payout-minimum">
          Payouts below {formatCents(account.minimum_payout_cents)} are held and carried to the next month.
        </p>
      )}
    </div>
  );
}

/** The payouts, newest first: status badge, why held, amount, transfer reference, paid on. */
function PayoutTable({
  payouts,
  minimumCents,
}: {
  readonly payouts: readonly Payout[];
  readonly minimumCents: number;
}) {
  return (
    <ScrollBox label="Payouts">
      <table data-testid="payouts-table">
        <caption>Payouts of the closed months, newest first</caption>
        <thead>
          <tr>
            <th scope="col">month</th>
            <th scope="col">status</th>
            <th scope="col">amount</th>
            <th scope="col">earned</th>
            <th scope="col">refunds</th>
            <th scope="col">carried in</th>
            <th scope="col">carried out</th>
            <th scope="col">transfer reference</th>
          </tr>
        </thead>
        <tbody>
          {payouts.map((p) => (
            <tr key={p.period} data-testid={`payout-${p.period}`}>
              <th scope="row">{p.period}</th>
              <td>
                <StatusBadge status={p.status} />
                {p.reason === null ? null : (
                  <span className="reason"> {reasonText(p.reason, minimumCents)}</span>
                )}
                {p.paid_at === null ? null : <span className="reason"> on {formatDay(p.paid_at)}</span>}
              </td>
              <td>{formatCents(p.payout_cents)}</td>
              <td>{microUsd(p.earned_micro_usd)}</td>
              <td>{p.adjusted_micro_usd === 0 ? '' : microUsd(-p.adjusted_micro_usd)}</td>
              <td>{microUsd(p.carried_in_micro_usd)}</td>
              <td>{microUsd(p.carried_out_micro_usd)}</td>
              <td>{p.transfer_id === null ? '' : <code data-testid="transfer-id">{p.transfer_id}</code>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** The notice of a latest payout that failed or was held: the same alert as payout.failed / payout.held. */
function PayoutAlert({
  latest,
  minimumCents,
}: {
  readonly latest: Payout | undefined;
  readonly minimumCents: number;
}) {
  if (latest === undefined || (latest.status !== 'failed' && latest.status !== 'held')) return null;
  const why = reasonText(latest.reason, minimumCents).replace(/\.$/, '');
  const amount = microUsd(latest.carried_out_micro_usd);
  return latest.status === 'failed' ? (
    <p className="notice warning" role="alert" data-testid="payout-alert">
      Your payout for {latest.period} failed{why === '' ? '' : ` (${why})`}. Nothing was paid: the {amount} is
      carried to the next month’s payout. Check your payout details with the provider.
    </p>
  ) : (
    <p className="notice warning" role="status" data-testid="payout-alert">
      Your payout for {latest.period} ({amount}) is held{why === '' ? '' : `: ${why}`}.
    </p>
  );
}

/** The Payouts section of the Statements page (the state read by the page: see usePayouts). */
export function PayoutsSection({
  state: { account, setAccount, payouts, error, reload },
}: {
  readonly state: ReturnType<typeof usePayouts>;
}) {
  const returned = useOnboardingReturn(setAccount, reload);
  return (
    <section aria-labelledby="payouts-title" className="payouts">
      <h2 id="payouts-title">Payouts</h2>
      <OnboardingNote state={returned} />
      <ErrorNote error={error} />
      {account === undefined ? null : <AccountState account={account} />}
      {payouts === undefined ? null : (
        <>
          <dl className="figures">
            <div>
              <dt>Balance held and carried</dt>
              <dd data-testid="payout-balance">{microUsd(payouts.balance_micro_usd)}</dd>
            </div>
          </dl>
          <PayoutAlert latest={payouts.payouts[0]} minimumCents={account?.minimum_payout_cents ?? 1_000} />
          {payouts.balance_micro_usd < 0 ? (
            <p className="hint">
              Refunds exceeded your earnings: the difference is taken from your next payouts.
            </p>
          ) : null}
          {payouts.payouts.length === 0 ? (
            <p data-testid="payouts-none">No payouts yet: one is made for each closed month.</p>
          ) : (
            <PayoutTable payouts={payouts.payouts} minimumCents={account?.minimum_payout_cents ?? 1_000} />
          )}
        </>
      )}
    </section>
  );
}
