// Owners are paid (docs/money.md, "Owners' payouts"): where each is paid (onboarding with the
// payment provider), closing a month (statements frozen, Pay as you Go invoiced, payouts decided
// and transferred), and the scheduler that closes each month by itself once
// QUARRY_CLOSE_GRACE_HOURS have passed, on exactly one instance at a time (a lease in
// `period_closes`, renewed while it works). Every step is idempotent: a close that dies half-way
// is resumed by the next tick, on any instance, and pays nobody twice (a transfer's idempotency
// key is its owner and period, and an earlier transfer is looked for first).
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import type { Account } from '../store/account-repository.js';
import { periodOf } from './billing-period.js';
import type { PaymentProvider, PaymentsKind } from './payment-provider.js';
import { TransferFailure } from './payment-provider.js';
import type { PeriodInvoices } from './payments-service.js';
import { withQuery } from './payments-service.js';
import type { OwnerPayout, PayoutAccount, PayoutRepository } from './payout-repository.js';
import type { PayoutPolicy } from './payout-rules.js';
import type { ClosedPeriod, StatementRepository } from './statement-repository.js';
import type { MicroUsd } from './units.js';

/** Where an owner stands with being paid. */
export interface PayoutAccountView {
  readonly provider: PaymentsKind;
  readonly status: 'not_started' | 'pending' | 'complete';
  readonly payoutsEnabled: boolean;
  readonly requirements: readonly string[];
  readonly minimumCents: number;
}

/** What closing a period did. */
export interface MonthClose extends ClosedPeriod {
  readonly invoices: PeriodInvoices;
  readonly payouts: {
    readonly paid: number;
    readonly failed: number;
    readonly held: number;
    readonly cents: number;
  };
}

export interface PayoutsService {
  account(ownerId: string): Promise<PayoutAccountView>;
  /** A page where the owner says where to be paid (a new one each time: links expire). */
  onboarding(owner: Pick<Account, 'id' | 'email'>, returnUrl?: string): Promise<{ url: string }>;
  /** The owner's balance (held and carried) and its payouts, newest first. */
  list(ownerId: string): Promise<{ balanceMicroUsd: MicroUsd; payouts: readonly OwnerPayout[] }>;
  /**
   * What the owner is still to be paid (balance and months not closed, less what refunds took
   * back), and whether a payout can reach it: onboarded with the provider, or paid by the
   * operator (no provider). Asked before its account is deleted.
   */
  unpaid(ownerId: string): Promise<{ readonly unpaidMicroUsd: MicroUsd; readonly reachable: boolean }>;
  /** Every owner's payout of `period` (the operator's view). */
  ofPeriod(period: string): Promise<readonly OwnerPayout[]>;
  /**
   * Closes `period` now (the operator's close): statements, Pay as you Go invoices, payouts, under
   * the same claim as the scheduler's. Idempotent; resumes a stopped close; CONFLICT while another
   * instance is closing it.
   */
  closeNow(period: string): Promise<MonthClose>;
  /** The scheduler's step: closes the last month once its grace has passed, and finishes stopped closes. */
  tick(): Promise<string | null>;
}

export interface PayoutsServiceOptions {
  readonly provider: PaymentProvider | undefined;
  readonly kind: PaymentsKind;
  readonly repository: PayoutRepository;
  readonly statements: Pick<StatementRepository, 'closePeriod'>;
  /** Invoices a period's Pay as you Go usage (payments-service.ts). */
  readonly invoicePeriod: (period: string) => Promise<PeriodInvoices>;
  /** QUARRY_MIN_PAYOUT_CENTS. */
  readonly minimumCents: number;
  /** QUARRY_CLOSE_GRACE_HOURS, in ms: how long after a month's end it closes by itself. */
  readonly closeGraceMs: number;
  /** Whether this instance closes months by itself (QUARRY_AUTO_CLOSE). */
  readonly autoClose: boolean;
  /** How long a claim on a close lasts without being renewed (QUARRY_CLOSE_LEASE_MS). */
  readonly leaseMs: number;
  readonly publicUrl: string;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/** The period before `period` (`YYYY-MM`). */
export function previousPeriod(period: string): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return periodOf(new Date(Date.UTC(year, month - 2, 1)));
}

/** The first moment after `period` (`YYYY-MM`), UTC. */
export function periodEnd(period: string): Date {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1));
}

export function createPayoutsService(options: PayoutsServiceOptions): PayoutsService {
  const { provider, repository: repo, logger } = options;
  const now = options.now ?? (() => new Date());
  const instance = randomUUID();
  const policy: PayoutPolicy = { provider: options.kind, minimumCents: options.minimumCents };

  const statusOf = (account: PayoutAccount | null): PayoutAccountView['status'] =>
    account === null ? 'not_started' : account.payoutsEnabled ? 'complete' : 'pending';

  /** Transfers every pending payout of `period`; a refusal fails it (carried to the next close). */
  async function payPending(period: string) {
    const totals = { paid: 0, failed: 0, cents: 0 };
    if (provider === undefined) return totals;
    for (const payout of await repo.payoutsOf(period, ['pending'])) {
      const account = await repo.accountOf(payout.ownerId);
      if (account === null || account.provider !== provider.kind) {
        await repo.settlePayout(period, payout.ownerId, { failure: 'no connected account' });
        totals.failed += 1;
        continue;
      }
      try {
        const { transferId } = await provider.transfer({
          connectedAccountId: account.connectedAccountId,
          cents: payout.payoutCents,
          ownerId: payout.ownerId,
          period,
          idempotencyKey: `quarry-payout-${payout.ownerId}-${period}`,
        });
        await repo.settlePayout(period, payout.ownerId, { transferId });
        totals.paid += 1;
        totals.cents += payout.payoutCents;
        logger.info({ owner: payout.ownerId, period, cents: payout.payoutCents, transferId }, 'owner paid');
      } catch (error) {
        if (!(error instanceof TransferFailure)) throw error;
        await repo.settlePayout(period, payout.ownerId, { failure: error.message });
        totals.failed += 1;
        logger.warn(
          { owner: payout.ownerId, period, err: error },
          'owner payout refused: carried to the next close',
        );
      }
    }
    return totals;
  }

  async function close(period: string): Promise<MonthClose> {
    const closed = await options.statements.closePeriod(period, policy);
    const invoices = await options.invoicePeriod(period);
    const paid = await payPending(period);
    const heldPayouts = await repo.payoutsOf(period, ['held']);
    const held = heldPayouts.length;
    // Each held owner hears of it once (payout.held; deduplicated across closes and instances).
    for (const payout of heldPayouts) await repo.announceHeld(period, payout);
    return { ...closed, invoices, payouts: { ...paid, held } };
  }

  /** The closes this instance is running, by period: its claim is its own, so it must not run twice. */
  const running = new Map<string, Promise<MonthClose>>();

  /**
   * Closes `period` under this instance's claim, renewed while it works: undefined when another
   * instance holds it, or (`ifUnfinished`) when it is finished already or this instance is at it.
   * The operator's close, arriving while this instance's scheduler closes the same month, waits
   * for that close and answers with its result.
   */
  async function closeClaimed(period: string, ifUnfinished: boolean): Promise<MonthClose | undefined> {
    const inProgress = running.get(period);
    if (inProgress !== undefined) return ifUnfinished ? undefined : inProgress;
    const lease = () => new Date(now().getTime() + options.leaseMs);
    if (!(await repo.claimClose(period, instance, lease()))) {
      if (ifUnfinished || !(await repo.closeFinished(period))) return undefined;
      // Finished before: closing again changes nothing, and says so.
      return close(period);
    }
    // Another call may have claimed it while this one waited for the store.
    const raced = running.get(period);
    if (raced !== undefined) return ifUnfinished ? undefined : raced;
    const renew = setInterval(() => {
      void repo.claimClose(period, instance, lease()).catch(() => {});
    }, options.leaseMs / 4);
    const work = (async () => {
      try {
        const result = await close(period);
        await repo.finishClose(period, instance);
        logger.info(
          { period, invoices: result.invoices, payouts: result.payouts, alreadyClosed: result.alreadyClosed },
          'month closed',
        );
        return result;
      } finally {
        clearInterval(renew);
      }
    })();
    running.set(period, work);
    try {
      return await work;
    } finally {
      running.delete(period);
    }
  }

  return {
    async account(ownerId) {
      const account = await repo.accountOf(ownerId);
      return {
        provider: options.kind,
        status: provider === undefined ? 'not_started' : statusOf(account),
        payoutsEnabled: account?.payoutsEnabled ?? false,
        requirements: account?.requirements ?? [],
        minimumCents: options.minimumCents,
      };
    },
    async onboarding(owner, returnUrl) {
      if (provider === undefined) {
        throw new ApiError('CONFLICT', 'This gateway pays owners by hand: the operator settles payouts.');
      }
      const base = returnUrl ?? `${options.publicUrl}/#/statements`;
      let parsed: URL;
      try {
        parsed = new URL(base);
      } catch {
        throw new ApiError('INVALID_REQUEST', 'return_url must be an absolute URL.');
      }
      if (parsed.origin !== new URL(options.publicUrl).origin) {
        throw new ApiError('INVALID_REQUEST', `return_url must be on this gateway (${options.publicUrl}).`, {
          details: [{ field: 'return_url', message: `on ${new URL(options.publicUrl).origin}` }],
        });
      }
      const existing = await repo.accountOf(owner.id);
      const account =
        existing !== null && existing.provider === provider.kind
          ? existing
          : await repo.linkAccount(owner.id, provider.kind, await provider.createConnectedAccount(owner));
      // What the provider still needs, as it says now (account.updated keeps it current).
      await repo.updateAccount(
        account.connectedAccountId,
        await provider.connectedAccountState(account.connectedAccountId),
      );
      const link = await provider.onboardingLink(
        account.connectedAccountId,
        withQuery(base, 'onboarding', 'done'),
        withQuery(base, 'onboarding', 'refresh'),
      );
      return { url: link.url.startsWith('/') ? `${options.publicUrl}${link.url}` : link.url };
    },
    async list(ownerId) {
      const [balanceMicroUsd, payouts] = await Promise.all([
        repo.balanceOf(ownerId),
        repo.payoutsFor(ownerId),
      ]);
      return { balanceMicroUsd, payouts };
    },
    async unpaid(ownerId) {
      const [unpaidMicroUsd, account] = await Promise.all([repo.unpaidOf(ownerId), repo.accountOf(ownerId)]);
      const reachable =
        provider === undefined ||
        (account !== null && account.provider === provider.kind && account.payoutsEnabled);
      return { unpaidMicroUsd, reachable };
    },
    ofPeriod: (period) => repo.payoutsOf(period),
    async closeNow(period) {
      const result = await closeClaimed(period, false);
      if (result === undefined) {
        throw new ApiError('CONFLICT', `${period} is being closed by another instance; retry shortly.`, {
          retryAfter: 5,
        });
      }
      return result;
    },
    async tick() {
      // Payouts a stopped close left pending, then the last month once its grace has passed.
      for (const period of await repo.periodsWithPending()) {
        if ((await closeClaimed(period, true)) !== undefined) return period;
      }
      if (!options.autoClose) return null;
      const last = previousPeriod(periodOf(now()));
      if (now().getTime() < periodEnd(last).getTime() + options.closeGraceMs) return null;
      if (await repo.closeFinished(last)) return null;
      return (await closeClaimed(last, true)) !== undefined ? last : null;
    },
  };
}
