// Metering: quota reserved before the warehouse is asked, and the usage ledger (docs/money.md).
// A call first `reserve`s (one transaction: a pending usage event keyed by its request id, and
// its credits taken from the account's monthly counter, only while they fit under the plan's
// limit, or for Pay as you Go while their value fits in the account's budget), then either
// `commit`s (served: the event becomes final) or is `release`d (failed: event deleted, credits
// given back). `reapStale` releases the reservations of an instance that died in between.
// The counter always equals the account's counted (paid and free) events, pending or final, in
// the period; every query below is race-free under READ COMMITTED across any number of gateway
// instances. An idempotent call's stored answer may ride along (`completion`): it then commits
// in the same transaction as the call's charge.

import { StoreError } from '../errors/store-error.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { PERIOD_PATTERN } from './billing-period.js';
import { createGrouper } from './charge-groups.js';
import { type CallAmounts, isCounted, priceCall, type UsageOrigin } from './revenue-split.js';
import { creditsToMillicredits, wholeCredits } from './units.js';

export type { UsageOrigin } from './revenue-split.js';

/** The Pay as you Go budget an account's calls stop at, as the operator set it (micro-USD). */
export interface BudgetPolicy {
  /** An account that never set its own budget has this one. */
  readonly defaultMicroUsd: number;
  /** No account's budget goes past this (the operator's cap). */
  readonly maxMicroUsd: number;
}

/** An idempotent call's answer, stored with its charge (see idempotency-repository.ts). */
export interface IdempotentCompletion {
  readonly accountId: string;
  readonly key: string;
  readonly statusCode: number;
  readonly body: string;
}

/** Input of {@link UsageRepository.reserve}. */
export interface Reservation {
  /** The gateway's request id: at most one event per request, whatever is retried. */
  readonly requestId: string;
  readonly accountId: string;
  /** The key the call authenticated with, when it used one. */
  readonly keyId: string | null;
  /** `YYYY-MM`, UTC. */
  readonly period: string;
  /** The payer's plan, recorded on the event. */
  readonly plan: string;
  /** Credits the plan includes this period; null for no credit cap. */
  readonly limit: number | null;
  /** Pay as you Go: the call stops at the account's budget instead (null: no budget). */
  readonly budget: BudgetPolicy | null;
  /** What one credit is worth to the payer, in micro-USD (plan price ÷ included credits). */
  readonly creditValueMicroUsd: number;
  readonly analyticId: string;
  readonly analyticName: string;
  readonly version: number;
  /** The analytic's owner, who earns the owner share. */
  readonly ownerId: string;
  /** `marketplace` and `owner` calls are stored with 0 credits and never touch the counter. */
  readonly origin: UsageOrigin;
  /** The price charged in whole credits (ignored for uncounted origins). */
  readonly credits: number;
}

/** Why a reservation was refused. */
export type ReserveRefusal = 'quota_exceeded' | 'period_closed';

/** Where an account's counter stands after a decision. */
export interface CounterState {
  /** Credits counted in the period (this call included when admitted), in millicredits. */
  readonly usedMillicredits: number;
  /** Their value, in micro-USD. */
  readonly usedMicroUsd: number;
  /** The budget applied (Pay as you Go), in micro-USD; null without one. */
  readonly budgetMicroUsd: number | null;
}

/** What {@link UsageRepository.reserve} decided. */
export type ReserveResult =
  | (CounterState & {
      readonly ok: true;
      /** Whole credits left in the period (or the budget buys); null without a cap. */
      readonly remaining: number | null;
      /** True when this request id was already reserved: nothing new was counted. */
      readonly replayed: boolean;
    })
  | (CounterState & {
      readonly ok: false;
      readonly reason: ReserveRefusal;
      readonly remaining: number | null;
    });

/** What became of the event named in {@link UsageRepository.commit}. */
export type CommitResult = 'committed' | 'already_committed' | 'missing';

/** What became of the event named in {@link UsageRepository.release}. */
export type ReleaseResult = 'released' | 'committed' | 'missing';

/** Calls, credits and value of served calls. */
export interface UsageTotals {
  readonly calls: number;
  readonly millicredits: number;
  readonly valueMicroUsd: number;
}

/** Served calls by origin. */
export type CallsByOrigin = Readonly<Record<UsageOrigin, number>>;

/** An account's usage in one period (served calls only). */
export interface UsageReport {
  readonly period: string;
  /** Counted calls (paid and free); `byOrigin`: the calls of every origin, `perOrigin` their totals. */
  readonly totals: UsageTotals & {
    readonly byOrigin: CallsByOrigin;
    readonly perOrigin: Readonly<Record<UsageOrigin, UsageTotals>>;
  };
  /** Counted calls per analytic. */
  readonly byAnalytic: readonly (UsageTotals & { readonly name: string })[];
  /** Days (`YYYY-MM-DD`, UTC, the day the call was reserved) with at least one counted call. */
  readonly byDay: readonly (UsageTotals & { readonly date: string })[];
}

/** An account's counter in a period, in flight included. */
export interface CounterTotals {
  readonly calls: number;
  readonly millicredits: number;
  readonly valueMicroUsd: number;
}

/** One call of {@link UsageRepository.reserveMany}: a reservation, final at once when `served` is given. */
export interface ReserveRequest extends Reservation {
  /**
   * The call has already been answered (a cache hit, or a call charged once served): the event
   * is written final ('ok') in the same transaction that counts it, one store round trip.
   */
  readonly served?: { readonly latencyMs: number };
  /** Stored with the charge, in its transaction, when the call is admitted (served only). */
  readonly completion?: IdempotentCompletion;
}

/** One call of {@link UsageRepository.commitMany}. */
export interface CommitRequest {
  readonly requestId: string;
  readonly latencyMs: number;
  /** Stored in the same transaction that makes the event final. */
  readonly completion?: IdempotentCompletion;
  /**
   * The month the call was reserved in, when known: its event is then looked for in that month's
   * partition alone, where a commit without it plans and probes every month the ledger keeps
   * (`QUARRY_LEDGER_RETENTION_MONTHS` + 3 partitions).
   */
  readonly period?: string;
}

/** Quota counters and the usage ledger. */
export interface UsageRepository {
  /**
   * Reserves one call: refused when the period is closed, or its credits do not fit under
   * `limit` (or its value in the budget). Repeating a request id returns the standing
   * reservation (`replayed`) and counts nothing; CONFLICT if that id belongs to another account.
   */
  reserve(input: Reservation): Promise<ReserveResult>;
  /**
   * Reserves many calls in one transaction (group commit), deciding each exactly as `reserve`
   * would in input order: calls of one account are admitted first come, first served until its
   * limit. A call that cannot be reserved gets its error (RangeError for bad input, StoreError
   * CONFLICT for another account's request id) in its slot; the others are unaffected.
   */
  reserveMany(inputs: readonly ReserveRequest[]): Promise<(ReserveResult | Error)[]>;
  /**
   * Marks a reserved call served. Idempotent. `missing` means the reservation was released or
   * reaped: the call was not recorded, so the gateway must not serve it as a success.
   */
  commit(
    requestId: string,
    outcome: { readonly latencyMs: number; readonly status: 'ok' },
  ): Promise<CommitResult>;
  /** Commits many reserved calls in one statement; results in input order. */
  commitMany(inputs: readonly CommitRequest[]): Promise<CommitResult[]>;
  /**
   * Drops a failed call's reservation (never charged, never counted). Never undoes a commit.
   * `period`, the month it was reserved in, when known: only that month's partition is read.
   */
  release(requestId: string, period?: string): Promise<ReleaseResult>;
  /** Releases reservations pending for longer than `olderThanMs`; returns how many. */
  reapStale(olderThanMs: number): Promise<number>;
  /** Calls counted against the account's quota in the period (pending and served). */
  counter(accountId: string, period: string): Promise<number>;
  /** The account's counter in the period: calls, millicredits and µUSD (pending and served). */
  counters(accountId: string, period: string): Promise<CounterTotals>;
  /** The account's own Pay as you Go budget in micro-USD; null when it never set one. */
  budgetOf(accountId: string): Promise<number | null>;
  /** Sets the account's Pay as you Go budget (micro-USD); false when there is no such account. */
  setBudget(accountId: string, microUsd: number): Promise<boolean>;
  usageFor(accountId: string, period: string): Promise<UsageReport>;
  /** The months (`YYYY-MM`) whose raw events have a partition of their own, oldest first. */
  ledgerMonths(): Promise<string[]>;
  /**
   * Creates the raw-event partition of each month that lacks one (moving in its events that
   * landed in the default partition); returns the months created.
   */
  prepareMonths(periods: readonly string[]): Promise<string[]>;
  /**
   * Drops a closed month's raw events (its rollups and frozen statement lines stay); false when
   * it had no partition. CONFLICT when the month is not closed.
   */
  dropMonth(period: string): Promise<boolean>;
}

/** The advisory lock that orders reservations (shared) against closing their period (exclusive). */
export const PERIOD_LOCK_KEY = `hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || $1)`;

/** The distinct months of a batch of commits, or undefined when one of them names none. */
function periodsOf(inputs: readonly CommitRequest[]): string[] | undefined {
  const months: string[] = [];
  for (const input of inputs) {
    const period = input.period;
    if (period === undefined) return undefined;
    if (!months.includes(period)) {
      assertPeriod(period);
      months.push(period);
    }
  }
  return months;
}

/** Throws a RangeError unless `period` is `YYYY-MM`. */
export function assertPeriod(period: string): void {
  if (!PERIOD_PATTERN.test(period))
    throw new RangeError(`period must be YYYY-MM, got ${JSON.stringify(period)}`);
}

/** Whole credits left under a counter, or null without a cap. */
function remainingOf(input: Reservation, state: CounterState): number | null {
  if (input.limit !== null)
    return Math.max(0, wholeCredits(creditsToMillicredits(input.limit) - state.usedMillicredits));
  if (state.budgetMicroUsd === null) return null;
  if (input.creditValueMicroUsd === 0) return null;
  return Math.max(0, Math.floor((state.budgetMicroUsd - state.usedMicroUsd) / input.creditValueMicroUsd));
}

/** A reservation checked and priced, ready for the batch. */
interface Checked {
  readonly index: number;
  readonly input: ReserveRequest;
  readonly money: CallAmounts;
  /** `account_id period`: the counter this call counts against. */
  readonly counterKey: string;
  /** The call's limit in millicredits (null: none). */
  readonly limitMc: number | null;
}

const counterKeyOf = (accountId: string, period: string) => `${accountId} ${period}`;

function check(input: ReserveRequest, index: number): Checked | Error {
  try {
    assertPeriod(input.period);
    if (input.limit !== null && (!Number.isSafeInteger(input.limit) || input.limit < 0)) {
      throw new RangeError(`limit must be a non-negative integer or null, got ${input.limit}`);
    }
    return {
      index,
      input,
      money: priceCall(input.origin, input.credits, input.creditValueMicroUsd),
      counterKey: counterKeyOf(input.accountId, input.period),
      limitMc: input.limit === null ? null : creditsToMillicredits(input.limit),
    };
  } catch (error) {
    return error as Error;
  }
}

type BatchOutcome = 'ok' | 'replayed' | 'conflict' | 'period_closed' | 'quota_exceeded';

/** SQLSTATE the optimistic batch raises when it must be decided exactly instead. */
const DECIDE_EXACTLY = 'QRY01';

/** The budget policy of a batch (one gateway has one): the first budgeted call's. */
function budgetOfBatch(items: readonly Checked[]): BudgetPolicy {
  for (const item of items) if (item.input.budget !== null) return item.input.budget;
  return { defaultMicroUsd: 0, maxMicroUsd: 0 };
}

/** Stores idempotent calls' answers in the transaction `tx` (only claims still in progress). */
async function completeIdempotent(
  tx: SqlExecutor,
  completions: readonly IdempotentCompletion[],
): Promise<void> {
  if (completions.length === 0) return;
  await tx.query(
    `UPDATE idempotency_keys k SET status_code = u.s, response_body = u.b, completed_at = now()
       FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[]) AS u(a, k, s, b)
      WHERE k.account_id = u.a AND k.key = u.k AND k.status_code IS NULL`,
    [
      completions.map((c) => c.accountId),
      completions.map((c) => c.key),
      completions.map((c) => c.statusCode),
      completions.map((c) => c.body),
    ],
  );
}

/**
 * Decides a batch in one round trip: when `optimistic`, `quarry_charge_calls` (migration 009:
 * writes first, locks each counter only for its final guarded bump), falling back to the exact
 * `quarry_reserve_calls` (locks the counters, then decides call by call) when the optimistic one
 * declines. A batch with idempotent answers to store is decided exactly, in one transaction with
 * the answers of the calls it admits. Request ids must be distinct.
 */
async function reserveBatch(
  sql: SqlExecutor,
  items: readonly Checked[],
  optimistic: boolean,
): Promise<Map<number, ReserveResult | Error>> {
  if (items.some((i) => i.input.completion !== undefined)) {
    return sql.transaction(async (tx) => {
      const decided = await decideBatch(tx, items);
      const admitted: IdempotentCompletion[] = [];
      for (const item of items) {
        const result = decided.get(item.index);
        const { completion, served } = item.input;
        if (completion === undefined || served === undefined) continue;
        if (result !== undefined && !(result instanceof Error) && result.ok && !result.replayed)
          admitted.push(completion);
      }
      await completeIdempotent(tx, admitted);
      return decided;
    });
  }
  if (optimistic) {
    try {
      return await chargeBatch(sql, items);
    } catch (error) {
      if ((error as { code?: unknown }).code !== DECIDE_EXACTLY) throw error;
    }
  }
  return decideBatch(sql, items);
}

const CHARGE_CALLS = `SELECT o_account, o_period, o_mc, o_musd, o_budget FROM quarry_charge_calls(
  $1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::boolean[], $7::text[], $8::text[],
  $9::integer[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[],
  $16::bigint[], $17::bigint[], $18::boolean[], $19::integer[], $20::text[], $21::integer[],
  $22::double precision[], $23::bigint, $24::bigint)`;

/**
 * The optimistic write: every call admitted, or SQLSTATE QRY01 and nothing written. Calls are
 * sent grouped (one element per distinct combination of their fields but request id and
 * latency), and each call's counter state is derived from the counters returned, as the exact
 * path counts them: a counted call of an (account, period) whose counter ends at C used C less
 * the credits of the counted calls after it in the batch; an uncounted call, C.
 */
async function chargeBatch(
  sql: SqlExecutor,
  items: readonly Checked[],
): Promise<Map<number, ReserveResult | Error>> {
  const n = items.length;
  const grouper = createGrouper();
  const accountIds: string[] = [];
  const keyIds: (string | null)[] = [];
  const periods: string[] = [];
  const plans: string[] = [];
  const limits: (number | null)[] = [];
  const budgeted: boolean[] = [];
  const analyticIds: string[] = [];
  const analyticNames: string[] = [];
  const versions: number[] = [];
  const ownerIds: string[] = [];
  const origins: UsageOrigin[] = [];
  const mcs: number[] = [];
  const ownerMcs: number[] = [];
  const platformMcs: number[] = [];
  const values: number[] = [];
  const ownerValues: number[] = [];
  const platformValues: number[] = [];
  const served: boolean[] = [];
  const calls: number[] = [];
  const requestIds = new Array<string>(n);
  const groups = new Array<number>(n);
  const latencies = new Array<number | null>(n);
  for (let i = 0; i < n; i++) {
    const item = items[i] as Checked;
    const { input, money } = item;
    const group = grouper.groupOf(item);
    if (group > calls.length) {
      accountIds.push(input.accountId);
      keyIds.push(input.keyId);
      periods.push(input.period);
      plans.push(input.plan);
      limits.push(item.limitMc);
      budgeted.push(input.budget !== null);
      analyticIds.push(input.analyticId);
      analyticNames.push(input.analyticName);
      versions.push(input.version);
      ownerIds.push(input.ownerId);
      origins.push(input.origin);
      mcs.push(money.millicredits);
      ownerMcs.push(money.ownerMillicredits);
      platformMcs.push(money.platformMillicredits);
      values.push(money.valueMicroUsd);
      ownerValues.push(money.ownerMicroUsd);
      platformValues.push(money.platformMicroUsd);
      served.push(input.served !== undefined);
      calls.push(0);
    }
    calls[group - 1] = (calls[group - 1] as number) + 1;
    requestIds[i] = input.requestId;
    groups[i] = group;
    latencies[i] = input.served === undefined ? null : Math.round(input.served.latencyMs * 1000) / 1000;
  }
  const budget = budgetOfBatch(items);
  const rows = await sql.query<{
    o_account: string;
    o_period: string;
    o_mc: number | null;
    o_musd: number | null;
    o_budget: number | null;
  }>(
    CHARGE_CALLS,
    [
      accountIds,
      keyIds,
      periods,
      plans,
      limits,
      budgeted,
      analyticIds,
      analyticNames,
      versions,
      ownerIds,
      origins,
      mcs,
      ownerMcs,
      platformMcs,
      values,
      ownerValues,
      platformValues,
      served,
      calls,
      requestIds,
      groups,
      latencies,
      budget.defaultMicroUsd,
      budget.maxMicroUsd,
    ],
    // Parsed and planned once per connection (a named statement; bench/README.md has the saving).
    { name: 'quarry_charge_calls_009' },
  );
  const counters = new Map<string, { mc: number; musd: number; budget: number | null }>();
  for (const row of rows) {
    counters.set(counterKeyOf(row.o_account, row.o_period), {
      mc: Number(row.o_mc ?? 0),
      musd: Number(row.o_musd ?? 0),
      budget: row.o_budget === null ? null : Number(row.o_budget),
    });
  }
  // Walk the batch backwards: a counted call's state is the final counter less what the counted
  // calls after it added.
  const after = new Map<string, { mc: number; musd: number }>();
  const results = new Map<number, ReserveResult | Error>();
  for (let i = n - 1; i >= 0; i--) {
    const item = items[i] as Checked;
    const counter = counters.get(item.counterKey);
    if (counter === undefined)
      throw new Error(`quarry_charge_calls returned no counter for ${item.counterKey}`);
    const later = after.get(item.counterKey) ?? { mc: 0, musd: 0 };
    const state: CounterState = {
      usedMillicredits: counter.mc - later.mc,
      usedMicroUsd: counter.musd - later.musd,
      budgetMicroUsd: item.input.budget === null ? null : counter.budget,
    };
    if (isCounted(item.input.origin)) {
      after.set(item.counterKey, {
        mc: later.mc + item.money.millicredits,
        musd: later.musd + item.money.valueMicroUsd,
      });
    }
    results.set(item.index, {
      ok: true,
      ...state,
      remaining: remainingOf(item.input, state),
      replayed: false,
    });
  }
  return results;
}

async function decideBatch(
  sql: SqlExecutor,
  items: readonly Checked[],
): Promise<Map<number, ReserveResult | Error>> {
  const column = <T>(f: (i: Checked) => T) => items.map(f);
  const budget = budgetOfBatch(items);
  const rows = await sql.query<{
    ord: number;
    outcome: BatchOutcome;
    used_mc: number;
    used_musd: number;
    budget: number | null;
  }>(
    `SELECT ord, outcome, used_mc, used_musd, budget FROM quarry_reserve_calls(
       $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::boolean[], $8::text[],
       $9::text[], $10::integer[], $11::text[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[],
       $16::bigint[], $17::bigint[], $18::bigint[], $19::boolean[], $20::double precision[], $21::bigint,
       $22::bigint)`,
    [
      column((i) => i.input.requestId),
      column((i) => i.input.accountId),
      column((i) => i.input.keyId),
      column((i) => i.input.period),
      column((i) => i.input.plan),
      column((i) => i.limitMc),
      column((i) => i.input.budget !== null),
      column((i) => i.input.analyticId),
      column((i) => i.input.analyticName),
      column((i) => i.input.version),
      column((i) => i.input.ownerId),
      column((i) => i.input.origin),
      column((i) => i.money.millicredits),
      column((i) => i.money.ownerMillicredits),
      column((i) => i.money.platformMillicredits),
      column((i) => i.money.valueMicroUsd),
      column((i) => i.money.ownerMicroUsd),
      column((i) => i.money.platformMicroUsd),
      column((i) => i.input.served !== undefined),
      column((i) =>
        i.input.served === undefined ? null : Math.round(i.input.served.latencyMs * 1000) / 1000,
      ),
      budget.defaultMicroUsd,
      budget.maxMicroUsd,
    ],
  );
  const results = new Map<number, ReserveResult | Error>();
  for (const row of rows) {
    const item = items[row.ord - 1] as Checked;
    const { requestId } = item.input;
    const state: CounterState = {
      usedMillicredits: Number(row.used_mc),
      usedMicroUsd: Number(row.used_musd),
      budgetMicroUsd: row.budget === null ? null : Number(row.budget),
    };
    const remaining = remainingOf(item.input, state);
    results.set(
      item.index,
      row.outcome === 'ok' || row.outcome === 'replayed'
        ? { ok: true, ...state, remaining, replayed: row.outcome === 'replayed' }
        : row.outcome === 'conflict'
          ? new StoreError('CONFLICT', `request id ${requestId} is already in use`)
          : { ok: false, reason: row.outcome, ...state, remaining },
    );
  }
  return results;
}

/** Builds the usage repository over `sql`. */
export function createUsageRepository(sql: SqlExecutor): UsageRepository {
  const countersIn = async (tx: SqlExecutor, accountId: string, period: string): Promise<CounterTotals> => {
    const [row] = await tx.query<{ calls: number; millicredits: number; value_musd: number }>(
      'SELECT calls, millicredits, value_musd FROM usage_counters WHERE account_id = $1 AND period = $2',
      [accountId, period],
    );
    return {
      calls: Number(row?.calls ?? 0),
      millicredits: Number(row?.millicredits ?? 0),
      valueMicroUsd: Number(row?.value_musd ?? 0),
    };
  };

  // Millicredits left per `account period`, from the last batch that counted there: a batch that
  // might reach an account's limit is decided exactly at once rather than tried optimistically.
  const headroom = new Map<string, number>();
  const mayBeOptimistic = (items: readonly Checked[]) => {
    const wanted = new Map<string, number>();
    for (const item of items) {
      if (!isCounted(item.input.origin)) continue;
      if (item.input.budget !== null) {
        const cost = item.money.valueMicroUsd;
        const key = `$${item.counterKey}`;
        wanted.set(key, (wanted.get(key) ?? 0) + cost);
      }
      if (item.limitMc === null) continue;
      wanted.set(item.counterKey, (wanted.get(item.counterKey) ?? 0) + item.money.millicredits);
    }
    for (const [key, amount] of wanted) {
      const left = headroom.get(key);
      if (left === undefined || left < 2 * amount) return false;
    }
    return true;
  };
  const remember = (items: readonly Checked[], decided: ReadonlyMap<number, ReserveResult | Error>) => {
    if (headroom.size > 10_000) headroom.clear();
    for (const item of items) {
      const result = decided.get(item.index);
      if (result === undefined || result instanceof Error) continue;
      if (item.limitMc !== null) headroom.set(item.counterKey, item.limitMc - result.usedMillicredits);
      if (result.budgetMicroUsd !== null)
        headroom.set(`$${item.counterKey}`, result.budgetMicroUsd - result.usedMicroUsd);
    }
  };

  const reserveMany = async (inputs: readonly ReserveRequest[]): Promise<(ReserveResult | Error)[]> => {
    const checked = inputs.map(check);
    const decided = new Map<number, ReserveResult | Error>();
    let pending = checked.filter((c): c is Checked => !(c instanceof Error));
    // A request id repeated within the batch is decided in a later round, after its first
    // occurrence is in the ledger: it is then a replay, exactly as if it had come later.
    while (pending.length > 0) {
      const ids = new Set<string>();
      const round: Checked[] = [];
      const later: Checked[] = [];
      for (const item of pending) {
        if (ids.has(item.input.requestId)) later.push(item);
        else {
          ids.add(item.input.requestId);
          round.push(item);
        }
      }
      const results = await reserveBatch(sql, round, mayBeOptimistic(round));
      remember(round, results);
      for (const [index, result] of results) decided.set(index, result);
      pending = later;
    }
    return checked.map((c, index) =>
      c instanceof Error ? c : (decided.get(index) as ReserveResult | Error),
    );
  };

  const commitIn = async (tx: SqlExecutor, inputs: readonly CommitRequest[]): Promise<CommitResult[]> => {
    const params: unknown[] = [inputs.map((i) => i.requestId), inputs.map((i) => i.latencyMs)];
    const months = periodsOf(inputs);
    if (months !== undefined) params.push(months);
    const updated = new Set(
      (
        await tx.query<{ request_id: string }>(
          `WITH done AS (
             UPDATE usage_events e SET status = 'ok', completed_at = now(), latency_ms = u.latency_ms
               FROM unnest($1::text[], $2::double precision[]) AS u(request_id, latency_ms)
              WHERE e.request_id = u.request_id AND e.status = 'pending'${months === undefined ? '' : ' AND e.period = ANY($3::bpchar[])'}
             RETURNING e.*
           ), rolled AS MATERIALIZED (
             SELECT quarry_roll_up(
                      array_agg(period::text), array_agg((reserved_at AT TIME ZONE 'UTC')::date), array_agg(account_id),
                      array_agg(owner_id), array_agg(analytic_id), array_agg(analytic_name), array_agg(plan),
                      array_agg(origin), array_agg(1::bigint), array_agg(millicredits), array_agg(owner_millicredits),
                      array_agg(platform_millicredits), array_agg(value_musd), array_agg(owner_musd),
                      array_agg(platform_musd)) AS r
               FROM done HAVING count(*) > 0
           )
           SELECT request_id FROM done LEFT JOIN rolled ON true`,
          params,
        )
      ).map((r) => r.request_id),
    );
    const others = inputs.filter((i) => !updated.has(i.requestId)).map((i) => i.requestId);
    const existing =
      others.length === 0
        ? new Set<string>()
        : new Set(
            (
              await tx.query<{ request_id: string }>(
                // Final only: a pending event the update did not find (a wrong month given)
                // must fail its call as missing, not pass as committed and be reaped later.
                "SELECT request_id FROM usage_events WHERE request_id = ANY($1::text[]) AND status = 'ok'",
                [others],
              )
            ).map((r) => r.request_id),
          );
    const firstCommit = new Set<string>();
    const results = inputs.map((i): CommitResult => {
      if (updated.has(i.requestId) && !firstCommit.has(i.requestId)) {
        firstCommit.add(i.requestId);
        return 'committed';
      }
      return updated.has(i.requestId) || existing.has(i.requestId) ? 'already_committed' : 'missing';
    });
    // An answer is stored only with the commit that made its call final.
    await completeIdempotent(
      tx,
      inputs.flatMap((input, i) =>
        input.completion !== undefined && results[i] === 'committed' ? [input.completion] : [],
      ),
    );
    return results;
  };

  const commitMany = async (inputs: readonly CommitRequest[]): Promise<CommitResult[]> => {
    if (inputs.length === 0) return [];
    if (inputs.some((i) => i.completion !== undefined)) return sql.transaction((tx) => commitIn(tx, inputs));
    return commitIn(sql, inputs);
  };

  return {
    async reserve(input) {
      const [result] = await reserveMany([input]);
      if (result instanceof Error) throw result;
      return result as ReserveResult;
    },

    reserveMany,

    async commit(requestId, outcome) {
      const [result] = await commitMany([{ requestId, latencyMs: outcome.latencyMs }]);
      return result as CommitResult;
    },

    commitMany,

    async release(requestId, period) {
      if (period !== undefined) assertPeriod(period);
      const inMonth = period === undefined ? '' : ' AND period = $2';
      const params = period === undefined ? [requestId] : [requestId, period];
      return sql.transaction(async (tx) => {
        // Only a pending event: a final one is never undone. A concurrent commit holds the row
        // lock; this DELETE then re-checks the row and finds it final.
        const [gone] = await tx.query<{
          account_id: string;
          period: string;
          origin: UsageOrigin;
          millicredits: number;
          value_musd: number;
        }>(
          `DELETE FROM usage_events WHERE request_id = $1 AND status = 'pending'${inMonth}
           RETURNING account_id, period, origin, millicredits, value_musd`,
          params,
        );
        if (gone === undefined) {
          const existing = await tx.query(
            `SELECT 1 FROM usage_events WHERE request_id = $1${inMonth}`,
            params,
          );
          return existing.length > 0 ? 'committed' : 'missing';
        }
        if (isCounted(gone.origin)) {
          await tx.query(
            `UPDATE usage_counters SET calls = calls - 1, millicredits = millicredits - $3, value_musd = value_musd - $4
              WHERE account_id = $1 AND period = $2`,
            [gone.account_id, gone.period, gone.millicredits, gone.value_musd],
          );
        }
        return 'released';
      });
    },

    reapStale(olderThanMs) {
      return sql.transaction(async (tx) => {
        // One reaper at a time: two would lock counters in different orders and could deadlock.
        await tx.query(
          `SELECT pg_advisory_xact_lock(hashtext('quarry.reap:' || coalesce(current_schema(), '')))`,
        );
        // SKIP LOCKED: an event being committed or released right now is not stale.
        const [row] = await tx.query<{ reaped: number }>(
          `WITH doomed AS (
             SELECT request_id FROM usage_events e
              WHERE status = 'pending' AND reserved_at < now() - $1::double precision * interval '1 millisecond'
                -- A job still queued or running holds its reservation (up to 30 minutes); the jobs'
                -- own sweep gives it back once the job's heartbeat lapses (query/jobs.ts).
                AND NOT EXISTS (SELECT 1 FROM query_jobs j
                                 WHERE j.request_id = e.request_id AND j.state IN ('queued', 'running'))
              FOR UPDATE OF e SKIP LOCKED
           ), gone AS (
             DELETE FROM usage_events e USING doomed d WHERE e.request_id = d.request_id
             RETURNING e.account_id, e.period, e.origin, e.millicredits, e.value_musd
           ), freed AS (
             SELECT account_id, period, count(*)::integer AS n, sum(millicredits)::bigint AS mc,
                    sum(value_musd)::bigint AS vl
               FROM gone WHERE origin IN ('paid', 'free')
              GROUP BY account_id, period
           ), decremented AS (
             UPDATE usage_counters c SET calls = c.calls - f.n, millicredits = c.millicredits - f.mc,
                                         value_musd = c.value_musd - f.vl
               FROM freed f
              WHERE c.account_id = f.account_id AND c.period = f.period RETURNING 1
           )
           SELECT count(*)::integer AS reaped FROM gone`,
          [olderThanMs],
        );
        return row?.reaped ?? 0;
      });
    },

    counter: async (accountId, period) => (await countersIn(sql, accountId, period)).calls,

    counters: (accountId, period) => countersIn(sql, accountId, period),

    async budgetOf(accountId) {
      const [row] = await sql.query<{ budget_musd: number | null }>(
        'SELECT budget_musd FROM accounts WHERE id = $1',
        [accountId],
      );
      return row?.budget_musd === undefined || row.budget_musd === null ? null : Number(row.budget_musd);
    },

    async setBudget(accountId, microUsd) {
      if (!Number.isSafeInteger(microUsd) || microUsd < 0) {
        throw new RangeError(`a budget must be a non-negative whole number of µUSD, got ${microUsd}`);
      }
      const rows = await sql.query('UPDATE accounts SET budget_musd = $2 WHERE id = $1 RETURNING 1', [
        accountId,
        microUsd,
      ]);
      return rows.length > 0;
    },

    async ledgerMonths() {
      const rows = await sql.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'usage_events'::regclass`,
      );
      return rows
        .flatMap((r) => {
          const m = /^usage_events_p(\d{4})_(\d{2})$/.exec(r.name);
          return m === null ? [] : [`${m[1]}-${m[2]}`];
        })
        .sort();
    },

    async prepareMonths(periods) {
      const created: string[] = [];
      for (const period of periods) {
        assertPeriod(period);
        const [row] = await sql.query<{ created: boolean }>('SELECT quarry_ledger_partition($1) AS created', [
          period,
        ]);
        if (row?.created === true) created.push(period);
      }
      return created;
    },

    async dropMonth(period) {
      assertPeriod(period);
      try {
        const [row] = await sql.query<{ dropped: boolean }>(
          'SELECT quarry_ledger_drop_month($1) AS dropped',
          [period],
        );
        return row?.dropped === true;
      } catch (error) {
        if ((error as { code?: unknown }).code === '55000') {
          throw new StoreError('CONFLICT', `period ${period} is not closed: its raw events are kept`);
        }
        throw error;
      }
    },

    async usageFor(accountId, period) {
      assertPeriod(period);
      // From the day rollup of served calls (migration 017), not the raw events.
      const served = 'FROM usage_account_days WHERE account_id = $1 AND period = $2';
      const counted = `${served} AND origin IN ('paid', 'free')`;
      const sums = `sum(calls)::bigint AS calls, coalesce(sum(millicredits), 0)::bigint AS millicredits,
                    coalesce(sum(value_musd), 0)::bigint AS value_musd`;
      interface Row {
        calls: number;
        millicredits: number;
        value_musd: number;
      }
      const totalsOf = (r: Row | undefined): UsageTotals => ({
        calls: Number(r?.calls ?? 0),
        millicredits: Number(r?.millicredits ?? 0),
        valueMicroUsd: Number(r?.value_musd ?? 0),
      });
      const origins = await sql.query<Row & { origin: UsageOrigin }>(
        `SELECT origin, ${sums} ${served} GROUP BY origin`,
        [accountId, period],
      );
      const byOrigin: Record<UsageOrigin, number> = { paid: 0, free: 0, marketplace: 0, owner: 0 };
      const perOrigin: Record<UsageOrigin, UsageTotals> = {
        paid: totalsOf(undefined),
        free: totalsOf(undefined),
        marketplace: totalsOf(undefined),
        owner: totalsOf(undefined),
      };
      let calls = 0;
      let millicredits = 0;
      let valueMicroUsd = 0;
      for (const row of origins) {
        byOrigin[row.origin] = Number(row.calls);
        perOrigin[row.origin] = totalsOf(row);
        if (!isCounted(row.origin)) continue;
        calls += Number(row.calls);
        millicredits += Number(row.millicredits);
        valueMicroUsd += Number(row.value_musd);
      }
      const byAnalytic = await sql.query<Row & { name: string }>(
        `SELECT analytic_name AS name, ${sums} ${counted} GROUP BY analytic_name ORDER BY analytic_name`,
        [accountId, period],
      );
      const byDay = await sql.query<Row & { date: string }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS date, ${sums} ${counted} GROUP BY day ORDER BY day`,
        [accountId, period],
      );
      return {
        period,
        totals: { calls, millicredits, valueMicroUsd, byOrigin, perOrigin },
        byAnalytic: byAnalytic.map((r) => ({ name: r.name, ...totalsOf(r) })),
        byDay: byDay.map((r) => ({ date: r.date, ...totalsOf(r) })),
      };
    },
  };
}
