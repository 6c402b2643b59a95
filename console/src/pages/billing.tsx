// The Usage page's billing: the plans side by side with what each offers (upgrade through a
// checkout, a card for Pay as you Go, a downgrade and the card through the payment provider's
// portal), the subscription's status, the notice when the month's credits are spent, and the
// return from a checkout (`?checkout=success|cancel`, which the gateway appends to the return
// URL's query): "payment received", then GET /v1/billing every 1.5 s until the plan changed.
// API: GET /v1/billing, POST /v1/billing/checkout, POST /v1/billing/portal.
import type { Billing, BillingPlan, Plan } from '@quarry/client';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api } from '../api.js';
import { ErrorNote, formatCents, formatCredits, formatUsd } from '../components.js';

/** How often the page asks whether the plan changed after a payment. */
const POLL_MS = 1_500;
/** When to stop asking (the webhook is late): the plan still changes when it arrives. */
const POLL_GIVE_UP_MS = 120_000;
/** The plan a checkout was opened for, kept across the payment pages (this tab only). */
const CHECKOUT_KEY = 'quarry.checkout';

export const OPERATOR_SETS_PLANS = 'Plans are set by the operator of this gateway.';

export function useBilling() {
  const [billing, setBilling] = useState<Billing>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(() => {
    setError(undefined);
    api<Billing>('GET', '/v1/billing').then(setBilling, setError);
  }, []);
  useEffect(reload, [reload]);
  return { billing, setBilling, error, reload };
}

const formatDate = (iso: string) =>
  new Date(iso).toLocaleDateString('en-US', { dateStyle: 'medium', timeZone: 'UTC' });

const creditsText = (plan: Plan) =>
  plan.included_credits === null
    ? 'No monthly cap: pay per credit, within a budget'
    : `${formatCredits(plan.included_credits)} credits a month`;

function priceText(plan: Plan): string {
  if (plan.included_credits === null) return `${formatCents(plan.per_call_cents)} a credit`;
  return plan.monthly_price_cents === 0 ? 'Free' : `${formatCents(plan.monthly_price_cents)} a month`;
}

/** Whether `billing` shows `plan` in force (Pay as you Go: with a card on file). */
const arrived = (billing: Billing, plan: string) =>
  billing.plan.id === plan && (plan !== 'payg' || billing.card_on_file);

/** Opens a checkout for a plan and leaves for its page; or the payment provider's portal. */
function usePaymentPages() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const returnUrl = () => `${window.location.origin}/#/usage`;
  const leave = (promise: Promise<{ readonly url: string }>, before?: () => void) => {
    setError(undefined);
    setBusy(true);
    promise.then(
      ({ url }) => {
        before?.();
        window.location.assign(url);
      },
      (e: unknown) => {
        setError(e);
        setBusy(false);
      },
    );
  };
  return {
    busy,
    error,
    checkout(plan: string) {
      leave(api('POST', '/v1/billing/checkout', { plan, return_url: returnUrl() }), () => {
        try {
          window.sessionStorage.setItem(CHECKOUT_KEY, plan);
        } catch {
          // No storage: on return, the page waits for any change of plan instead.
        }
      });
    },
    portal() {
      leave(api('POST', '/v1/billing/portal', { return_url: returnUrl() }));
    },
  };
}

type ReturnState =
  | { readonly kind: 'none' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'waiting' }
  | { readonly kind: 'done'; readonly plan: string }
  | { readonly kind: 'slow' };

/** `?checkout=…` of the page's URL, read once per page load and stripped from the address. */
let checkoutReturn: 'success' | 'cancel' | null | undefined;
function takeCheckoutReturn(): ReturnState {
  if (checkoutReturn === undefined) {
    const url = new URL(window.location.href);
    const value = url.searchParams.get('checkout');
    checkoutReturn = value === 'success' || value === 'cancel' ? value : null;
    if (value !== null) {
      url.searchParams.delete('checkout');
      window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    }
  }
  if (checkoutReturn === 'success') return { kind: 'waiting' };
  return checkoutReturn === 'cancel' ? { kind: 'cancel' } : { kind: 'none' };
}

/**
 * After a checkout: polls GET /v1/billing every 1.5 s until the plan is the one paid for (or, with
 * no record of it, any other than at first), hands each answer to `onBilling`, and calls
 * `onChanged` once it changed.
 */
export function useCheckoutReturn(onBilling: (billing: Billing) => void, onChanged: () => void): ReturnState {
  const [state, setState] = useState<ReturnState>(takeCheckoutReturn);
  const callbacks = useRef({ onBilling, onChanged });
  callbacks.current = { onBilling, onChanged };
  useEffect(() => {
    // Shown once: a later visit of the page starts afresh.
    checkoutReturn = null;
  }, []);
  const waiting = state.kind === 'waiting';
  useEffect(() => {
    if (!waiting) return;
    let target: string | null = null;
    try {
      target = window.sessionStorage.getItem(CHECKOUT_KEY);
    } catch {
      target = null;
    }
    let first: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const started = Date.now();
    const tick = async () => {
      try {
        const billing = await api<Billing>('GET', '/v1/billing');
        if (stopped) return;
        callbacks.current.onBilling(billing);
        first ??= billing.plan.id;
        if (target === null ? billing.plan.id !== first : arrived(billing, target)) {
          try {
            window.sessionStorage.removeItem(CHECKOUT_KEY);
          } catch {
            // Nothing kept.
          }
          setState({ kind: 'done', plan: billing.plan.name });
          callbacks.current.onChanged();
          return;
        }
      } catch {
        // A failed read is asked again at the next tick.
      }
      if (stopped) return;
      if (Date.now() - started > POLL_GIVE_UP_MS) setState({ kind: 'slow' });
      else timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [waiting]);
  return state;
}

/** What the return from a checkout says. */
export function CheckoutNote({ state }: { readonly state: ReturnState }) {
  switch (state.kind) {
    case 'waiting':
      return (
        <p className="notice" role="status" data-testid="checkout-note">
          Payment received — your plan is changing…
        </p>
      );
    case 'done':
      return (
        <p className="notice ok" role="status" data-testid="checkout-note">
          Payment received: you are on {state.plan} now.
        </p>
      );
    case 'slow':
      return (
        <p className="notice" role="status" data-testid="checkout-note">
          The payment has not reached the gateway yet: your plan changes as soon as it does. Reload this page
          in a while.
        </p>
      );
    case 'cancel':
      return (
        <p className="notice" role="status" data-testid="checkout-note">
          Checkout cancelled; nothing was charged.
        </p>
      );
    default:
      return null;
  }
}

/** The month's credits are spent on a plan with a monthly allowance: the way out. */
export function QuotaNotice({
  billing,
  resetsOn,
}: {
  readonly billing?: Billing;
  readonly resetsOn: string;
}) {
  const pages = usePaymentPages();
  const upgrade = billing?.plans.find((p) => p.action === 'upgrade');
  return (
    <section className="notice warning" aria-labelledby="quota-title" data-testid="quota-notice">
      <h2 id="quota-title">You have used this month's credits</h2>
      <p>
        Calls are refused (429 <code>QUOTA_EXCEEDED</code>) until the credits come back on {resetsOn}
        {billing?.provider === 'none' || upgrade === undefined ? '.' : ', or until you upgrade.'}
      </p>
      {billing === undefined ? null : billing.provider === 'none' ? (
        <p>{OPERATOR_SETS_PLANS}</p>
      ) : upgrade === undefined ? null : (
        <button type="button" disabled={pages.busy} onClick={() => pages.checkout(upgrade.id)}>
          Upgrade to {upgrade.name} ({priceText(upgrade)})
        </button>
      )}
      <ErrorNote error={pages.error} />
    </section>
  );
}

function statusText(billing: Billing): string | undefined {
  const end = billing.current_period_end === null ? undefined : formatDate(billing.current_period_end);
  switch (billing.status) {
    case 'active':
      if (end === undefined) return 'Active.';
      return billing.cancel_at_period_end
        ? `Active until ${end}, then cancelled.`
        : `Active; renews on ${end}.`;
    case 'past_due':
      return `Past due: the last payment failed. Update the card in Manage billing${
        billing.grace_ends_at === null
          ? ''
          : ` by ${formatDate(billing.grace_ends_at)}, or the account falls back to the Free plan then`
      }.`;
    case 'canceled':
      return end === undefined ? 'Cancelled.' : `Cancelled; ends on ${end}.`;
    default:
      return undefined;
  }
}

function PlanAction({
  plan,
  billing,
  pages,
}: {
  readonly plan: BillingPlan;
  readonly billing: Billing;
  readonly pages: ReturnType<typeof usePaymentPages>;
}) {
  switch (plan.action) {
    case 'upgrade':
      return (
        <button type="button" disabled={pages.busy} onClick={() => pages.checkout(plan.id)}>
          Upgrade to {plan.name}
        </button>
      );
    case 'add_card':
      return (
        <button type="button" disabled={pages.busy} onClick={() => pages.checkout(plan.id)}>
          Add a card
        </button>
      );
    case 'downgrade':
      return billing.portal ? (
        <button type="button" className="secondary" disabled={pages.busy} onClick={() => pages.portal()}>
          Downgrade to {plan.name}
        </button>
      ) : (
        <p className="hint">A downgrade is made in Manage billing.</p>
      );
    default:
      return null;
  }
}

/** The Plan section: status, the plans side by side, and the buttons of what each offers. */
export function PlanSection({ billing, error }: { readonly billing?: Billing; readonly error: unknown }) {
  const pages = usePaymentPages();
  const status = billing === undefined ? undefined : statusText(billing);
  // The latest invoice, when it could not be charged.
  const failedInvoice = billing?.invoices[0]?.status === 'failed' ? billing.invoices[0] : undefined;
  const pending = billing?.pending_plan ?? null;
  const pendingName =
    pending === null ? undefined : (billing?.plans.find((p) => p.id === pending)?.name ?? pending);
  return (
    <section aria-labelledby="plan-title">
      <h2 id="plan-title">Plan</h2>
      <ErrorNote error={error} />
      {billing === undefined ? null : (
        <>
          <div data-testid="billing-status">
            <p>
              You are on <strong data-testid="billing-plan">{billing.plan.name}</strong>.
              {status === undefined ? null : ` ${status}`}
              {pendingName === undefined
                ? null
                : ` Changes to ${pendingName}${billing.pending_at === null ? '' : ` on ${formatDate(billing.pending_at)}`}.`}
              {billing.card_on_file ? ' A card is on file.' : null}
            </p>
            {failedInvoice !== undefined ? (
              // The same alert as the invoice.failed webhook.
              <p className="error" role="alert" data-testid="invoice-alert">
                The Pay as you Go invoice for {failedInvoice.period} (
                {formatCents(failedInvoice.amount_cents)}) could not be charged. Update the card in Manage
                billing.
              </p>
            ) : billing.status === 'past_due' ? (
              <p className="error" role="alert">
                The last payment failed.
              </p>
            ) : null}
            {billing.provider === 'none' ? <p>{OPERATOR_SETS_PLANS}</p> : null}
            {billing.provider === 'sandbox' ? (
              <p className="hint">Sandbox payments: no money moves.</p>
            ) : null}
          </div>
          <ul className="plans" aria-label="Plans">
            {billing.plans.map((plan) => (
              <li
                key={plan.id}
                className={plan.current ? 'card current' : 'card'}
                aria-current={plan.current ? 'true' : undefined}
                data-testid={`plan-${plan.id}`}
              >
                <h3>{plan.name}</h3>
                {plan.current ? <p className="badge">Your plan</p> : null}
                <p>{creditsText(plan)}</p>
                <p className="price">{priceText(plan)}</p>
                <p className="meta">A credit costs {formatUsd(plan.credit_value_usd)}</p>
                {billing.provider === 'none' ? null : (
                  <PlanAction plan={plan} billing={billing} pages={pages} />
                )}
              </li>
            ))}
          </ul>
          {billing.portal && billing.provider !== 'none' ? (
            <p>
              <button
                type="button"
                className="secondary"
                disabled={pages.busy}
                onClick={() => pages.portal()}
              >
                Manage billing
              </button>{' '}
              <span className="hint">Card, invoices, downgrade or cancel.</span>
            </p>
          ) : null}
          <ErrorNote error={pages.error} />
        </>
      )}
    </section>
  );
}
