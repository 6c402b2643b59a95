// Callers paying for plans (docs/money.md, "Paying for a plan"): checkout and portal pages from
// the payment provider, webhooks applied once each and in any order (subscription-rules.ts decides
// what each means for the plan), the scheduler's tick (downgrades at the period's end, the end
// of a grace period), and Pay as you Go invoices when a period closes. With QUARRY_PAYMENTS=none
// there is no provider: the operator sets plans and every payment route answers CONFLICT.
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import type { Account } from '../store/account-repository.js';
import type {
  InvoiceLine,
  PaymentFact,
  PaymentProvider,
  PaymentsKind,
  ProviderEvent,
} from './payment-provider.js';
import { PaymentSignatureError } from './payment-provider.js';
import type { BillingAccount, PaygInvoice, PaymentRepository } from './payment-repository.js';
import type { PayoutRepository } from './payout-repository.js';
import { isBudgeted, type Plan, type PlanCatalog } from './plan-catalog.js';
import {
  graceVerdict,
  invoiceVerdict,
  isUpgrade,
  pendingVerdict,
  reversalVerdict,
  subscriptionVerdict,
  type Verdict,
} from './subscription-rules.js';
import { formatUsd, type MicroUsd, toWholeCents } from './units.js';

/** What the console offers for a plan. */
export type PlanAction = 'current' | 'upgrade' | 'downgrade' | 'add_card' | null;

/** An account's billing, as `GET /v1/billing` shows it. */
export interface BillingView {
  readonly provider: PaymentsKind;
  readonly plan: Plan;
  readonly billing: BillingAccount | null;
  /** When a past-due account falls back to Free. */
  readonly graceEndsAt: Date | null;
  readonly plans: readonly { readonly plan: Plan; readonly action: PlanAction }[];
  readonly invoices: readonly PaygInvoice[];
}

/** What closing a period invoiced. */
export interface PeriodInvoices {
  readonly invoiced: number;
  readonly paid: number;
  readonly failed: number;
  readonly totalCents: number;
}

export interface PaymentsService {
  readonly kind: PaymentsKind;
  /** The provider, when there is one (the sandbox pages reach theirs through it). */
  readonly provider: PaymentProvider | undefined;
  view(accountId: string): Promise<BillingView>;
  /** The standing of the provider's customer `customerId`, or null when it is no account of ours. */
  providerStanding(customerId: string): Promise<BillingAccount | null>;
  /** A checkout page for `planId`; the browser comes back to `returnUrl` (on this gateway). */
  checkout(
    accountId: string,
    planId: string,
    returnUrl?: string,
  ): Promise<{ id: string; url: string; mode: string }>;
  portal(accountId: string, returnUrl?: string): Promise<{ url: string }>;
  /** A webhook delivery: verified, applied once. INVALID_REQUEST when it does not verify. */
  webhook(rawBody: string, signature: string | undefined): Promise<{ duplicate: boolean }>;
  /** Applies what the provider reports (webhooks, the sandbox's pages). */
  apply(facts: readonly PaymentFact[]): Promise<void>;
  /** Downgrades and cancels due by now, and grace periods that ran out. */
  tick(): Promise<number>;
  /** Invoices and charges the period's Pay as you Go usage, once per account, however often it runs. */
  invoicePeriod(period: string): Promise<PeriodInvoices>;
  /**
   * The account is being deleted: its subscription ends at the provider now (the month paid for is
   * not refunded). A Pay as you Go card stays on file, so the month's usage is still invoiced and
   * charged when it closes. Idempotent.
   */
  endForClosure(accountId: string): Promise<{ readonly subscriptionCancelled: boolean }>;
}

export interface PaymentsServiceOptions {
  readonly kind: PaymentsKind;
  readonly provider: PaymentProvider | undefined;
  readonly repository: PaymentRepository;
  /** Where owners are paid, and the owner shares a reversal takes back. */
  readonly payouts: Pick<PayoutRepository, 'updateAccount' | 'recordAdjustments'>;
  readonly accounts: {
    get(accountId: string): Promise<Account | null>;
    /** Moves the account to `plan` on every instance at once. */
    setPlan(accountId: string, plan: string): Promise<unknown>;
  };
  readonly plans: PlanCatalog;
  /** How long a past-due account keeps its plan (QUARRY_PAYMENT_GRACE_DAYS). */
  readonly graceMs: number;
  /** The gateway's public URL: return URLs must be on it. */
  readonly publicUrl: string;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/** A pending invoice untouched this long was left by a close that stopped: the next close finishes it. */
const STALE_CLAIM_MS = 5 * 60_000;

const NO_PAYMENTS = 'This gateway takes no payments: the operator sets plans.';

/** `url` with `key=value` in its query, before any `#fragment` (the console's routes). */
export function withQuery(url: string, key: string, value: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  return `${base}${base.includes('?') ? '&' : '?'}${key}=${encodeURIComponent(value)}${fragment}`;
}

/** Pay as you Go lines in whole cents, with the rest carried: one line an analytic, plus a carry line. */
export function paygLines(
  usage: readonly {
    readonly analytic: string;
    readonly calls: number;
    readonly millicredits: number;
    readonly valueMicroUsd: MicroUsd;
  }[],
  carryIn: MicroUsd,
): { lines: InvoiceLine[]; amountMicroUsd: MicroUsd; cents: number; carryOut: MicroUsd } {
  const amountMicroUsd = usage.reduce((sum, u) => sum + u.valueMicroUsd, carryIn);
  const { cents, rest } = toWholeCents(amountMicroUsd);
  const lines: InvoiceLine[] = usage.map((u) => ({
    description: `${u.analytic}: ${u.calls} calls, ${u.millicredits / 1_000} credits`,
    cents: toWholeCents(u.valueMicroUsd).cents,
    analytic: u.analytic,
  }));
  const rounding = cents - lines.reduce((sum, l) => sum + l.cents, 0);
  if (rounding > 0)
    lines.push({ description: 'Fractions of a cent, carried', cents: rounding, analytic: null });
  return { lines, amountMicroUsd, cents, carryOut: rest };
}

export function createPaymentsService(options: PaymentsServiceOptions): PaymentsService {
  const { kind, provider, repository: repo, accounts, plans, logger } = options;
  const now = options.now ?? (() => new Date());
  const budgetedPlans = plans.list().filter(isBudgeted);

  const need = (): PaymentProvider => {
    if (provider === undefined) throw new ApiError('CONFLICT', NO_PAYMENTS);
    return provider;
  };

  const returnUrlOf = (returnUrl: string | undefined): string => {
    const url = returnUrl ?? `${options.publicUrl}/#/usage`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ApiError('INVALID_REQUEST', 'return_url must be an absolute URL.', {
        details: [{ field: 'return_url', message: 'an absolute URL' }],
      });
    }
    if (parsed.origin !== new URL(options.publicUrl).origin) {
      throw new ApiError('INVALID_REQUEST', `return_url must be on this gateway (${options.publicUrl}).`, {
        details: [{ field: 'return_url', message: `on ${new URL(options.publicUrl).origin}` }],
      });
    }
    return url;
  };

  /** A provider's URL as the caller opens it (the sandbox's pages are paths on this gateway). */
  const absolute = (url: string) => (url.startsWith('/') ? `${options.publicUrl}${url}` : url);

  const accountOf = async (accountId: string): Promise<Account> => {
    const account = await accounts.get(accountId);
    if (account === null) throw new ApiError('NOT_FOUND', 'The account is gone.');
    return account;
  };

  /** Records a verdict: the standing, then the plan (every instance forgets cached principals). */
  async function commit(billing: BillingAccount, accountPlan: string, verdict: Verdict): Promise<void> {
    if (Object.keys(verdict.change).length > 0) {
      await repo.update(billing.accountId, verdict.change, {
        from: accountPlan,
        to: verdict.plan ?? accountPlan,
      });
    }
    if (verdict.plan !== undefined && verdict.plan !== accountPlan) {
      await accounts.setPlan(billing.accountId, verdict.plan);
      logger.info(
        { account: billing.accountId, from: accountPlan, to: verdict.plan },
        'plan changed by payment',
      );
    }
  }

  async function applyOne(fact: PaymentFact): Promise<string | null> {
    if (fact.type === 'payout_account') {
      // An owner's connected account: where it is paid (payouts.ts reads it at the next close).
      const updated = await options.payouts.updateAccount(fact.connectedAccountId, fact.state);
      return updated?.ownerId ?? null;
    }
    const billing =
      fact.type === 'checkout_completed'
        ? await repo.linkCustomer(fact.accountId, need().kind, fact.customerId)
        : await repo.byCustomer(need().kind, fact.customerId);
    if (billing === null) {
      logger.info(
        { fact: fact.type, customer: fact.customerId },
        'payment event for no account of ours: ignored',
      );
      return null;
    }
    const account = await accounts.get(billing.accountId);
    if (account === null) return null;
    const at = now();
    switch (fact.type) {
      case 'checkout_completed': {
        if (fact.cardOnFile && !billing.cardOnFile)
          await repo.update(billing.accountId, { cardOnFile: true });
        if (fact.subscription !== null) {
          const latest = (await repo.get(billing.accountId)) ?? billing;
          await commit(
            latest,
            account.plan,
            subscriptionVerdict(plans, account.plan, latest, fact.subscription.id, fact.subscription, at),
          );
        } else if (fact.cardOnFile) {
          // A card saved for Pay as you Go: the plan it was saved for, unless a subscription pays for more.
          const payg = budgetedPlans[0];
          const subscribed = billing.subscriptionId !== null && billing.status === 'active';
          if (payg !== undefined && !subscribed)
            await commit(billing, account.plan, { plan: payg.id, change: {} });
        }
        break;
      }
      case 'subscription':
        await commit(
          billing,
          account.plan,
          subscriptionVerdict(plans, account.plan, billing, fact.subscriptionId, fact.subscription, at),
        );
        break;
      case 'invoice':
        await commit(billing, account.plan, invoiceVerdict(billing, fact.paid, at));
        break;
      case 'reversal': {
        // Each step is idempotent (recorded once by reference), so a retried event finishes what a
        // failed one began.
        await repo.recordAdjustment({
          provider: need().kind,
          kind: fact.kind,
          reference: fact.reference,
          accountId: billing.accountId,
          chargeId: fact.chargeId,
          invoiceId: fact.invoiceId,
          amountCents: fact.amountCents,
          paidCents: fact.paidCents,
          usagePeriod: fact.usagePeriod,
        });
        // The owners' (and the platform's) shares of the credits that payment bought are taken
        // back, netted against the owners' next payouts (payouts.ts).
        await options.payouts.recordAdjustments({
          provider: need().kind,
          kind: fact.kind,
          reference: fact.reference,
          payerId: billing.accountId,
          usagePeriod: fact.usagePeriod,
          share:
            fact.paidCents > 0 && fact.amountCents < fact.paidCents
              ? { numerator: fact.amountCents, denominator: fact.paidCents }
              : { numerator: 1, denominator: 1 },
        });
        const verdict = reversalVerdict(billing, fact.subscriptionId);
        if (verdict.plan !== undefined && fact.subscriptionId !== null) {
          await need().cancelSubscription(fact.subscriptionId);
        }
        await commit(billing, account.plan, verdict);
        break;
      }
      case 'card':
        await repo.update(billing.accountId, { cardOnFile: fact.cardOnFile });
        break;
    }
    return billing.accountId;
  }

  async function apply(facts: readonly PaymentFact[]): Promise<string | null> {
    let accountId: string | null = null;
    for (const fact of facts) accountId = (await applyOne(fact)) ?? accountId;
    return accountId;
  }

  const isSubscribed = (billing: BillingAccount | null): boolean =>
    billing !== null &&
    billing.provider === provider?.kind &&
    billing.subscriptionId !== null &&
    billing.status !== 'canceled';

  function actionFor(plan: Plan, account: Account, billing: BillingAccount | null): PlanAction {
    if (plan.id === account.plan) return 'current';
    if (provider === undefined) return null;
    // A subscription is cancelled (in the portal) before Pay as you Go can be chosen.
    if (isBudgeted(plan)) return isSubscribed(billing) ? null : 'add_card';
    if (plan.monthly_price_cents === 0) return billing?.subscriptionId ? 'downgrade' : null;
    return isUpgrade(plans, account.plan, plan.id) ? 'upgrade' : 'downgrade';
  }

  return {
    kind,
    provider,
    apply: async (facts) => {
      await apply(facts);
    },
    providerStanding: (customerId) =>
      provider === undefined ? Promise.resolve(null) : repo.byCustomer(provider.kind, customerId),
    async view(accountId) {
      const account = await accountOf(accountId);
      const [billing, invoices] = await Promise.all([repo.get(accountId), repo.invoicesOf(accountId)]);
      const graceEndsAt =
        billing?.status === 'past_due' && billing.pastDueSince !== null
          ? new Date(billing.pastDueSince.getTime() + options.graceMs)
          : null;
      return {
        provider: kind,
        plan: plans.resolve(account.plan),
        billing,
        graceEndsAt,
        plans: plans.list().map((plan) => ({ plan, action: actionFor(plan, account, billing) })),
        invoices,
      };
    },
    async checkout(accountId, planId, returnUrl) {
      const payments = need();
      const account = await accountOf(accountId);
      const plan = plans.get(planId);
      if (plan === undefined) {
        throw new ApiError('INVALID_REQUEST', `There is no plan "${planId}".`, {
          details: [
            {
              field: 'plan',
              message: `one of ${plans
                .list()
                .map((p) => p.id)
                .join(', ')}`,
            },
          ],
        });
      }
      const budgeted = isBudgeted(plan);
      if (!budgeted && plan.monthly_price_cents === 0) {
        throw new ApiError(
          'INVALID_REQUEST',
          `The ${plan.name} plan costs nothing: cancel a subscription in the billing portal instead.`,
          {
            details: [{ field: 'plan', message: 'a paid plan' }],
          },
        );
      }
      if (plan.id === account.plan) {
        throw new ApiError('INVALID_REQUEST', `The account is on the ${plan.name} plan already.`, {
          details: [{ field: 'plan', message: 'another plan than the current one' }],
        });
      }
      const base = returnUrlOf(returnUrl);
      const billing = await repo.get(accountId);
      if (billing !== null && isSubscribed(billing)) {
        const paidFor = plans.resolve(billing.subscriptionPlan ?? account.plan);
        if (budgeted || !isUpgrade(plans, paidFor.id, plan.id)) {
          throw new ApiError(
            'CONFLICT',
            `The account pays for the ${paidFor.name} plan: ${budgeted ? 'cancel' : 'change'} it in the billing portal (POST /v1/billing/portal); it ends or changes at the end of the month paid for.`,
          );
        }
        // An upgrade of a paying subscription: its card pays the difference now, no checkout page.
        const state = await payments.changeSubscription(billing, plan);
        await apply([
          {
            type: 'subscription',
            customerId: billing.customerId,
            subscriptionId: state.id,
            subscription: state,
          },
        ]);
        return { id: state.id, url: withQuery(base, 'checkout', 'success'), mode: 'subscription' };
      }
      const checkout = await payments.createCheckout({
        account: { id: account.id, email: account.email, name: account.name },
        customerId: billing !== null && billing.provider === payments.kind ? billing.customerId : null,
        plan,
        mode: budgeted ? 'setup' : 'subscription',
        successUrl: withQuery(base, 'checkout', 'success'),
        cancelUrl: withQuery(base, 'checkout', 'cancel'),
      });
      await repo.linkCustomer(accountId, payments.kind, checkout.customerId);
      return { id: checkout.id, url: absolute(checkout.url), mode: budgeted ? 'setup' : 'subscription' };
    },
    async portal(accountId, returnUrl) {
      const payments = need();
      const base = returnUrlOf(returnUrl);
      const billing = await repo.get(accountId);
      if (billing === null || billing.provider !== payments.kind) {
        throw new ApiError(
          'CONFLICT',
          'The account has no billing yet: buy a plan or add a card first (POST /v1/billing/checkout).',
        );
      }
      const portal = await payments.createPortal(billing.customerId, base);
      return { url: absolute(portal.url) };
    },
    async webhook(rawBody, signature) {
      const payments = need();
      if (payments.verifyWebhook === undefined)
        throw new ApiError('NOT_FOUND', 'This payment provider sends no webhooks.');
      let event: ProviderEvent;
      try {
        event = payments.verifyWebhook(rawBody, signature);
      } catch (error) {
        if (error instanceof PaymentSignatureError) {
          throw new ApiError('INVALID_REQUEST', `The webhook did not verify: ${error.message}`, {
            cause: error,
          });
        }
        throw error;
      }
      if (await repo.seen(payments.kind, event.id)) return { duplicate: true };
      // Applied before it is recorded: a failure answers 500 and the provider delivers it again.
      // Applying is idempotent (facts carry current state; reversals are recorded once), so two
      // deliveries racing each other end in the same state.
      const accountId = await apply(await event.facts());
      const first = await repo.recordEvent(payments.kind, event.id, event.type, accountId);
      return { duplicate: !first };
    },
    async tick() {
      const at = now();
      const due = await repo.due(at, new Date(at.getTime() - options.graceMs));
      let changed = 0;
      for (const billing of due) {
        const account = await accounts.get(billing.accountId);
        if (account === null) continue;
        const grace = graceVerdict(billing, at, options.graceMs);
        const verdict = grace.plan !== undefined ? grace : pendingVerdict(billing, at);
        if (verdict.plan === undefined && Object.keys(verdict.change).length === 0) continue;
        if (grace.plan !== undefined && billing.subscriptionId !== null && provider !== undefined) {
          await provider.cancelSubscription(billing.subscriptionId);
        }
        await commit(billing, account.plan, verdict);
        changed += 1;
      }
      return changed;
    },
    async endForClosure(accountId) {
      const billing = await repo.get(accountId);
      if (provider === undefined || billing === null || !isSubscribed(billing)) {
        return { subscriptionCancelled: false };
      }
      const subscriptionId = billing.subscriptionId as string;
      await provider.cancelSubscription(subscriptionId);
      await repo.update(accountId, {
        status: 'canceled',
        cancelAtPeriodEnd: false,
        pendingPlan: null,
        pendingAt: null,
        pastDueSince: null,
      });
      logger.info(
        { account: accountId, subscription: subscriptionId },
        'subscription ended: account deleted',
      );
      return { subscriptionCancelled: true };
    },
    async invoicePeriod(period) {
      const totals = { invoiced: 0, paid: 0, failed: 0, totalCents: 0 };
      if (provider === undefined || budgetedPlans.length === 0) return totals;
      const usage = await repo.paygUsage(
        period,
        budgetedPlans.map((p) => p.id),
      );
      const byAccount = new Map<string, (typeof usage)[number][]>();
      for (const u of usage) byAccount.set(u.accountId, [...(byAccount.get(u.accountId) ?? []), u]);
      for (const [accountId, rows] of byAccount) {
        const billing = await repo.get(accountId);
        if (billing === null || billing.provider !== provider.kind) {
          // Never paid through this provider (an operator's Pay as you Go account): theirs to collect.
          logger.info(
            { account: accountId, period },
            'Pay as you Go usage of an operator-managed account: not invoiced',
          );
          continue;
        }
        const carryIn = await repo.carryBefore(accountId, period);
        const { lines, amountMicroUsd, cents, carryOut } = paygLines(rows, carryIn);
        const claimed = await repo.claimInvoice({
          accountId,
          period,
          provider: provider.kind,
          amountMicroUsd,
          amountCents: cents,
          carryMicroUsd: carryOut,
          lines,
          invoiceId: null,
          status: cents === 0 ? 'nothing_due' : 'pending',
        });
        // Claimed here, or left pending by a close that stopped half-way long enough ago that it
        // is not still running: the provider's idempotency keys make that second attempt find
        // the first one's invoice and payment, never new ones.
        if (
          !claimed &&
          !(await repo.retakeStale(accountId, period, new Date(now().getTime() - STALE_CLAIM_MS)))
        ) {
          continue;
        }
        if (cents === 0) continue;
        const outcome = await provider.chargeInvoice({
          customerId: billing.customerId,
          accountId,
          period,
          lines,
          idempotencyKey: `quarry-payg-${accountId}-${period}`,
        });
        await repo.settleInvoice(accountId, period, {
          invoiceId: outcome.invoiceId,
          status: outcome.paid ? 'paid' : 'failed',
        });
        const account = await accounts.get(accountId);
        if (account !== null) {
          const latest = (await repo.get(accountId)) ?? billing;
          await commit(latest, account.plan, invoiceVerdict(latest, outcome.paid, now()));
        }
        totals.invoiced += 1;
        totals.totalCents += cents;
        if (outcome.paid) totals.paid += 1;
        else totals.failed += 1;
        logger.info(
          { account: accountId, period, usd: formatUsd(amountMicroUsd - carryOut), paid: outcome.paid },
          'Pay as you Go period invoiced',
        );
      }
      return totals;
    },
  };
}
