// Metering on the query path (docs/design.md §4, docs/money.md). Every served call has exactly one
// final usage event, written before its answer leaves; a failed call is never charged and never
// counted; the plan's monthly credits (a Pay as you Go account's budget) are never over-admitted,
// across any number of instances. A call's origin decides what it costs: `paid` and `free` calls
// spend the analytic's price in credits, `marketplace` previews and an owner's calls of its own
// analytics (`owner`) spend nothing and stay outside the quota. Two ways to get there, chosen
// per call:
//
// - Reserve first (an account near its limit, or whose headroom this instance does not know
//   yet): before the warehouse is asked, one call of the quota is reserved atomically in the
//   store together with a pending usage event keyed by the request id; a served call commits the
//   event before the answer leaves, a failed one releases both. Instances killed in between
//   leave pending events that the reaper releases. Nobody's warehouse runs for a call the quota
//   cannot cover.
// - Charge after (an account with ample headroom, a plan without a cap, a free marketplace call):
//   the warehouse is asked first, and the served call is then charged with ONE durable write that
//   reserves and finalises its event together, exactly like a cache hit. The write is still
//   guarded by the limit in the store, so the quota is never over-admitted; the only price is
//   that a call racing the last units past the limit has run its warehouse query before it is
//   refused with QUOTA_EXCEEDED (uncharged). A failed call writes nothing at all.
//   "Ample" is the account's remaining credits as of this instance's last write for it, less the
//   credits it has in flight, at least `reserveMargin` (default 100): a Free account (30 credits)
//   always reserves first.
//
// Reservations, charges and commits are group-committed (money/group-commit.ts): concurrent
// calls share one store transaction per batch, and each call still answers only once its own
// event is durable.

import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import { isStoreUnavailable } from '../errors/store-error.js';
import { priceAt } from '../store/price-schedule.js';
import { createPeriodClock } from './billing-period.js';
import { createGroupCommit, type GroupCommitStats } from './group-commit.js';
import { creditValueMicroUsd, isBudgeted, type Plan, type PlanCatalog } from './plan-catalog.js';
import type { UsageOrigin } from './revenue-split.js';
import { formatUsd } from './units.js';
import type {
  BudgetPolicy,
  CommitRequest,
  CommitResult,
  IdempotentCompletion,
  ReserveRequest,
  ReserveResult,
  UsageRepository,
} from './usage-repository.js';

export type { IdempotentCompletion } from './usage-repository.js';

/** A call charged: what its answer tells the caller about the quota. */
export interface Charge {
  /** Credits this call spends (0 for previews and an owner's own calls). */
  readonly credits: number;
  /** Credits left in the period after this one (what the budget still buys); null without a cap. */
  readonly remaining: number | null;
  readonly limit: number | null;
  /** Seconds until the period (and so the quota) resets. */
  readonly resetSeconds: number;
}

/** A charge and the month its usage event is in (a reserved call's commit and release name it). */
interface Reserved extends Charge {
  readonly period: string;
}

/** A call admitted to the warehouse, not yet charged. */
export interface PendingCharge {
  /** Credits this call spends (0 for previews and an owner's own calls). */
  readonly credits: number;
  /** Whether a quota unit and a pending event were reserved before the warehouse was asked. */
  readonly reserved: boolean;
  /**
   * The call was served: makes its usage event final (reserved first) or reserves and finalises
   * it in one write (charged after). Resolves once it is durable; throws QUOTA_EXCEEDED when a
   * charged-after call lost the race for the last units, and then records nothing. An
   * idempotent call's `completion` (its stored answer) commits in the same transaction.
   */
  commit(latencyMs: number, completion?: IdempotentCompletion): Promise<Charge>;
  /** The call failed: a reserved event and quota unit are given back. Idempotent. */
  release(): Promise<void>;
}

export interface Metering {
  /**
   * Admits a call to the warehouse: reserves it first, or throws QUOTA_EXCEEDED (with
   * `retry_after` = seconds to the period end), unless its account has ample headroom (then it is
   * charged after, at `commit`).
   */
  begin(principal: Principal, entry: CatalogEntry, requestId: string): Promise<PendingCharge>;
  /**
   * Charges a call whose answer is already at hand (a cache hit): reserves and finalises its
   * usage event in one durable write, or throws QUOTA_EXCEEDED and records nothing.
   */
  chargeServed(
    principal: Principal,
    entry: CatalogEntry,
    requestId: string,
    latencyMs: number,
    completion?: IdempotentCompletion,
  ): Promise<Charge>;
  /** The credits a call of `principal` on `entry` spends (known before it runs). */
  creditsOf(principal: Principal, entry: CatalogEntry): number;
  /** Waits until every write submitted so far is durable (shutdown). */
  drain(): Promise<void>;
  /** Batching counters, for metrics and the benchmark. */
  stats(): { readonly reserves: GroupCommitStats; readonly commits: GroupCommitStats };
}

export interface MeteringOptions {
  readonly usage: UsageRepository;
  readonly plans: PlanCatalog;
  /** Pay as you Go budgets (default 100 USD, capped at 10,000 USD). */
  readonly budgets?: BudgetPolicy;
  readonly now?: () => Date;
  /** Most calls per group-committed write (default 512). */
  readonly maxBatch?: number;
  /**
   * `near-limit` (default): calls of an account with at least `reserveMargin` calls of headroom
   * are charged after they are served; `always`: every call reserves its unit first.
   */
  readonly reserveAhead?: 'always' | 'near-limit';
  /** Headroom in credits below which calls reserve first (default 100). */
  readonly reserveMargin?: number;
  /**
   * Told where an account's counter stands after each counted decision, from what the batch
   * already returned (no store round trip of its own): the usage alerts (docs/webhooks.md).
   */
  readonly onCounted?: (observation: CounterObservation) => void;
}

/** An account's counter after a decision of metering, for the usage alerts. */
export interface CounterObservation {
  readonly accountId: string;
  readonly period: string;
  /** The plan's credits; null on Pay as you Go. */
  readonly limitCredits: number | null;
  readonly usedMillicredits: number;
  /** Pay as you Go: the budget and what the month's credits cost, in micro-USD. */
  readonly budgetMicroUsd: number | null;
  readonly usedMicroUsd: number;
  /** The call was refused for want of credits (or budget). */
  readonly refused: boolean;
}

/** A batch the store could not take is no item's fault: its items fail together, not one by one. */
const notStoreDown = (error: unknown) => !isStoreUnavailable(error);

/**
 * Calls waiting before a second reserve write starts beside one in flight, and how long a write
 * in flight may hold back fewer than that. Most of PostgreSQL's CPU for a batch does not grow with
 * its size, so batches as large as the calls in flight cost it least per event: against starting a
 * second write as soon as anything waits, 128 cut the store's CPU per usage event by a quarter on
 * a cache hit and by 40% on an uncached call, with the same hits a second and 10–20% more uncached
 * calls, on a quiet machine and on one loaded with CPU hogs alike (bench/README.md, "Issue 35").
 * When a write is slow (a saturated store: 30–110 ms writes have been seen) the calls behind it
 * would wait for two writes instead of one, so one that has run `OVERLAP_AFTER_MS` holds them
 * back no longer.
 */
const OVERLAP_AT = 128;
const OVERLAP_AFTER_MS = 10;

/** Headroom below which calls reserve first, by default. */
export const DEFAULT_RESERVE_MARGIN = 100;

export function createMetering(options: MeteringOptions): Metering {
  const givenNow = options.now;
  const nowMs = givenNow === undefined ? Date.now : () => givenNow().getTime();
  const { usage, plans } = options;
  const clock = createPeriodClock();
  // Several reserve batches in flight: the store decides most of them optimistically, locking an
  // account's counter only for its final bump, so batches of one account overlap. Most of
  // PostgreSQL's CPU for a batch does not grow with its size (the transaction, its commit, each
  // statement's start), so two half batches cost it more per call than one; `OVERLAP_AT` is
  // where that trade against latency is set (bench/README.md, "Issue 35").
  const reserves = createGroupCommit<ReserveRequest, ReserveResult>({
    write: (items) => usage.reserveMany(items),
    maxBatch: options.maxBatch,
    maxInFlight: 2,
    overlapAt: OVERLAP_AT,
    overlapAfterMs: OVERLAP_AFTER_MS,
    splitOnFailure: notStoreDown,
  });
  const commits = createGroupCommit<CommitRequest, CommitResult>({
    write: (items) => usage.commitMany(items),
    maxBatch: options.maxBatch,
    splitOnFailure: notStoreDown,
  });
  const reserveAhead = options.reserveAhead ?? 'near-limit';
  const margin = Math.max(0, options.reserveMargin ?? DEFAULT_RESERVE_MARGIN);
  // Per `account period`: credits left as of this instance's last write for it, and the credits
  // of its calls admitted to charge after that are not charged yet.
  const remainingSeen = new Map<string, number>();
  const chargingAfter = new Map<string, number>();
  const counterKey = (accountId: string, period: string) => `${accountId} ${period}`;
  const seen = (key: string, remaining: number) => {
    if (remainingSeen.size >= 10_000 && !remainingSeen.has(key)) remainingSeen.clear();
    remainingSeen.set(key, remaining);
  };
  const adjust = (key: string, by: number) => {
    const n = (chargingAfter.get(key) ?? 0) + by;
    if (n === 0) chargingAfter.delete(key);
    else chargingAfter.set(key, n);
  };

  const budgets: BudgetPolicy = options.budgets ?? {
    defaultMicroUsd: 100_000_000,
    maxMicroUsd: 10_000_000_000,
  };

  /** Who pays for a call (docs/money.md). */
  const originOf = (principal: Principal, entry: CatalogEntry, plan: Plan): UsageOrigin => {
    if (principal.origin === 'marketplace') return 'marketplace';
    if (principal.accountId === entry.ownerId) return 'owner';
    return creditValueMicroUsd(plan) === 0 ? 'free' : 'paid';
  };
  const counted = (origin: UsageOrigin) => origin === 'paid' || origin === 'free';
  const creditsOf = (principal: Principal, entry: CatalogEntry) =>
    counted(originOf(principal, entry, plans.resolve(principal.plan))) ? priceAt(entry.pricing, nowMs()) : 0;

  /** Whether this call may run before it is charged (see the head of this file). */
  function mayChargeAfter(principal: Principal, entry: CatalogEntry, key: string): boolean {
    if (reserveAhead === 'always') return false;
    if (!counted(originOf(principal, entry, plans.resolve(principal.plan)))) return true;
    const left = remainingSeen.get(key);
    return left !== undefined && left - (chargingAfter.get(key) ?? 0) >= margin;
  }

  /** QUOTA_EXCEEDED for a refused call: the plan's credits or the budget, with what is needed and left. */
  function quotaExceeded(
    plan: Plan,
    period: string,
    credits: number,
    result: ReserveResult,
    resetSeconds: number,
  ) {
    const left = result.remaining ?? 0;
    const budget = result.budgetMicroUsd;
    const message =
      budget !== null
        ? `The ${plan.name} budget of ${formatUsd(budget)} USD for ${period} is used up ` +
          `(${formatUsd(result.usedMicroUsd)} USD spent); this call needs ${credits} credits ` +
          `(${formatUsd(credits * creditValueMicroUsd(plan))} USD). Raise it with PUT /v1/account/budget, or wait for next month (UTC).`
        : `The ${plan.name} plan's ${plan.included_credits ?? 0} credits for ${period} are used up: this call needs ${credits} ` +
          `credits and ${left} are left. The quota resets at the start of next month (UTC); for more now, ` +
          'upgrade: the console’s Usage page, `quarry billing upgrade <plan>` or POST /v1/billing/checkout.';
    return new ApiError('QUOTA_EXCEEDED', message, {
      retryAfter: resetSeconds,
      details: [
        { field: 'credits_needed', value: credits, message: `This call costs ${credits} credits.` },
        { field: 'credits_left', value: left, message: `${left} credits are left this period.` },
      ],
    });
  }

  /** Reserves (or, with `served`, charges) one call; QUOTA_EXCEEDED or CONFLICT when refused. */
  async function reserve(
    principal: Principal,
    entry: CatalogEntry,
    requestId: string,
    served?: number,
    completion?: IdempotentCompletion,
  ): Promise<Reserved> {
    const ms = nowMs();
    const period = clock.period(ms);
    const resetSeconds = clock.secondsToEnd(ms);
    const plan = plans.resolve(principal.plan);
    const origin = originOf(principal, entry, plan);
    const isCounted = counted(origin);
    const budgeted = isCounted && isBudgeted(plan);
    const limit = isCounted && !budgeted ? plan.included_credits : null;
    const credits = isCounted ? priceAt(entry.pricing, ms) : 0;
    const value = creditValueMicroUsd(plan);
    let result: ReserveResult;
    try {
      // One literal shape for every kind (absent fields are undefined): no spread per call.
      result = await reserves.submit({
        requestId,
        accountId: principal.accountId,
        keyId: origin === 'marketplace' ? null : principal.keyId,
        period,
        plan: plan.id,
        limit,
        budget: budgeted ? budgets : null,
        creditValueMicroUsd: value,
        analyticId: entry.analyticId,
        analyticName: entry.name,
        version: entry.version,
        ownerId: entry.ownerId,
        origin,
        credits,
        served: served === undefined ? undefined : { latencyMs: served },
        completion,
      });
    } catch (error) {
      remainingSeen.delete(counterKey(principal.accountId, period));
      throw error;
    }
    if (isCounted && result.remaining !== null) {
      seen(counterKey(principal.accountId, period), result.ok ? result.remaining : 0);
    }
    if (isCounted && options.onCounted !== undefined && (result.ok || result.reason === 'quota_exceeded')) {
      options.onCounted({
        accountId: principal.accountId,
        period,
        limitCredits: limit,
        usedMillicredits: result.usedMillicredits,
        budgetMicroUsd: result.budgetMicroUsd,
        usedMicroUsd: result.usedMicroUsd,
        refused: !result.ok,
      });
    }
    if (!result.ok) {
      if (result.reason === 'quota_exceeded')
        throw quotaExceeded(plan, period, credits, result, resetSeconds);
      throw new ApiError('CONFLICT', `The billing period ${period} is closed.`);
    }
    const cap =
      limit !== null
        ? limit
        : result.budgetMicroUsd !== null && value > 0
          ? Math.floor(result.budgetMicroUsd / value)
          : null;
    return { credits, remaining: cap === null ? null : result.remaining, limit: cap, resetSeconds, period };
  }

  return {
    async begin(principal, entry, requestId) {
      const key = counterKey(principal.accountId, clock.period(nowMs()));
      if (mayChargeAfter(principal, entry, key)) {
        const credits = creditsOf(principal, entry);
        adjust(key, credits);
        let settled = false;
        const settle = () => {
          if (settled) return false;
          settled = true;
          adjust(key, -credits);
          return true;
        };
        return {
          credits,
          reserved: false,
          async commit(latencyMs, completion) {
            if (!settle()) throw new Error('this call is already settled');
            return reserve(principal, entry, requestId, Math.round(latencyMs * 1000) / 1000, completion);
          },
          async release() {
            settle();
          },
        };
      }
      const reserved = await reserve(principal, entry, requestId);
      let settled = false;
      return {
        credits: reserved.credits,
        reserved: true,
        async commit(latencyMs, completion) {
          settled = true;
          const outcome = await commits.submit({
            requestId,
            latencyMs: Math.round(latencyMs * 1000) / 1000,
            completion,
            period: reserved.period,
          });
          // 'missing': the reservation was reaped (the call outlived the reaper's bound). The
          // answer must not leave without its event, so the call fails uncharged.
          if (outcome === 'missing') {
            throw new ApiError('INTERNAL', 'The call could not be recorded; it was not charged.');
          }
          return reserved;
        },
        async release() {
          if (settled) return;
          settled = true;
          await usage.release(requestId, reserved.period);
        },
      };
    },
    chargeServed: (principal, entry, requestId, latencyMs, completion) =>
      reserve(principal, entry, requestId, latencyMs, completion),
    creditsOf,
    async drain() {
      await Promise.all([reserves.drain(), commits.drain()]);
    },
    stats: () => ({ reserves: reserves.stats(), commits: commits.stats() }),
  };
}
