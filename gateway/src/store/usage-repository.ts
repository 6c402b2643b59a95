// Metering: quota reserved before the warehouse is asked, and the usage ledger. A call first
// `reserve`s (one transaction: a pending usage event keyed by its request id, and one slot of
// the account's monthly counter, taken only while it is below the plan's limit), then either
// `commit`s (served: the event becomes final) or is `release`d (failed: event deleted, slot
// given back). `reapStale` releases the reservations of an instance that died in between.
// The counter always equals the account's api-origin events (pending or final) in the period;
// every query below is race-free under READ COMMITTED across any number of gateway instances.
import { PERIOD_PATTERN } from '../billing/billing-period.js';
import { StoreError } from '../errors/store-error.js';
import { splitCredits } from './revenue-split.js';
import type { SqlExecutor } from './sql-client.js';

/** Where a call came from: an API caller, or the marketplace's try-it console (free). */
export type UsageOrigin = 'api' | 'marketplace';

/** Input of {@link UsageRepository.reserve}. */
export interface Reservation {
  /** The gateway's request id: at most one event per request, whatever is retried. */
  readonly requestId: string;
  readonly accountId: string;
  /** The key the call authenticated with, when it used one. */
  readonly keyId: string | null;
  /** `YYYY-MM`, UTC. */
  readonly period: string;
  /** Calls the plan includes this period; null for no cap (Pay as you Go: counted, never refused). */
  readonly limit: number | null;
  readonly analyticId: string;
  readonly analyticName: string;
  readonly version: number;
  /** The analytic's owner, who earns the owner share. */
  readonly ownerId: string;
  /** `marketplace` calls are stored with 0 credits and never touch the quota counter. */
  readonly origin: UsageOrigin;
  /** The price charged, a non-negative integer. */
  readonly credits: number;
  /** The owner's part of `credits`; with `platformShare`, defaults to {@link splitCredits}. */
  readonly ownerShare?: number;
  readonly platformShare?: number;
}

/** Why a reservation was refused. */
export type ReserveRefusal = 'quota_exceeded' | 'period_closed';

/** What {@link UsageRepository.reserve} decided. */
export type ReserveResult =
  | {
      readonly ok: true;
      /** Calls counted in the period, this one included (unchanged for marketplace calls). */
      readonly used: number;
      /** Calls left in the period; null without a cap. */
      readonly remaining: number | null;
      /** True when this request id was already reserved: nothing new was counted. */
      readonly replayed: boolean;
    }
  | { readonly ok: false; readonly reason: ReserveRefusal; readonly used: number };

/** What became of the event named in {@link UsageRepository.commit}. */
export type CommitResult = 'committed' | 'already_committed' | 'missing';

/** What became of the event named in {@link UsageRepository.release}. */
export type ReleaseResult = 'released' | 'committed' | 'missing';

/** Calls and credits of served, api-origin calls. */
export interface UsageTotals {
  readonly calls: number;
  readonly credits: number;
}

/** An account's usage in one period (served calls only). */
export interface UsageReport {
  readonly period: string;
  readonly totals: UsageTotals & {
    /** Free marketplace try-it calls, not in `calls` (they never count against the quota). */
    readonly marketplaceCalls: number;
  };
  readonly byAnalytic: readonly (UsageTotals & { readonly name: string })[];
  /** Days (`YYYY-MM-DD`, UTC, the day the call was reserved) with at least one call. */
  readonly byDay: readonly (UsageTotals & { readonly date: string })[];
}

/** One call of {@link UsageRepository.reserveMany}: a reservation, final at once when `served` is given. */
export interface ReserveRequest extends Reservation {
  /**
   * The call has already been answered from the cache: the event is written final ('ok') in the
   * same transaction that counts it, so a cache hit needs one store round trip, not two.
   */
  readonly served?: { readonly latencyMs: number };
}

/** One call of {@link UsageRepository.commitMany}. */
export interface CommitRequest {
  readonly requestId: string;
  readonly latencyMs: number;
}

/** Quota counters and the usage ledger. */
export interface UsageRepository {
  /**
   * Reserves one call: refused when the period is closed or the counter has reached `limit`.
   * Repeating a request id returns the standing reservation (`replayed`) and counts nothing;
   * CONFLICT if that id belongs to another account.
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
  /** Drops a failed call's reservation (never charged, never counted). Never undoes a commit. */
  release(requestId: string): Promise<ReleaseResult>;
  /** Releases reservations pending for longer than `olderThanMs`; returns how many. */
  reapStale(olderThanMs: number): Promise<number>;
  /** Calls counted against the account's quota in the period (pending and served). */
  counter(accountId: string, period: string): Promise<number>;
  usageFor(accountId: string, period: string): Promise<UsageReport>;
}

/** The advisory lock that orders reservations (shared) against closing their period (exclusive). */
export const PERIOD_LOCK_KEY = `hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || $1)`;

/** Throws a RangeError unless `period` is `YYYY-MM`. */
export function assertPeriod(period: string): void {
  if (!PERIOD_PATTERN.test(period))
    throw new RangeError(`period must be YYYY-MM, got ${JSON.stringify(period)}`);
}

function shares(input: Reservation): { credits: number; ownerShare: number; platformShare: number } {
  if (input.origin === 'marketplace') return { credits: 0, ownerShare: 0, platformShare: 0 };
  if (input.ownerShare === undefined && input.platformShare === undefined) {
    return { credits: input.credits, ...splitCredits(input.credits) };
  }
  if (input.ownerShare === undefined || input.platformShare === undefined) {
    throw new RangeError('give both ownerShare and platformShare, or neither');
  }
  const { credits, ownerShare, platformShare } = {
    credits: input.credits,
    ownerShare: input.ownerShare,
    platformShare: input.platformShare,
  };
  for (const [name, value] of [
    ['credits', credits],
    ['ownerShare', ownerShare],
    ['platformShare', platformShare],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`);
    }
  }
  if (ownerShare + platformShare !== credits) {
    throw new RangeError(
      `ownerShare + platformShare must equal credits (${ownerShare} + ${platformShare} ≠ ${credits})`,
    );
  }
  return { credits, ownerShare, platformShare };
}

const remainingOf = (limit: number | null, used: number) =>
  limit === null ? null : Math.max(0, limit - used);

/** A reservation checked and priced, ready for the batch. */
interface Checked {
  readonly index: number;
  readonly input: ReserveRequest;
  readonly money: { credits: number; ownerShare: number; platformShare: number };
  /** `account_id period`: the counter this call counts against. */
  readonly counterKey: string;
}

const counterKeyOf = (accountId: string, period: string) => `${accountId} ${period}`;

function check(input: ReserveRequest, index: number): Checked | Error {
  try {
    assertPeriod(input.period);
    if (input.limit !== null && !Number.isSafeInteger(input.limit)) {
      throw new RangeError(`limit must be an integer or null, got ${input.limit}`);
    }
    return { index, input, money: shares(input), counterKey: counterKeyOf(input.accountId, input.period) };
  } catch (error) {
    return error as Error;
  }
}

type BatchOutcome = 'ok' | 'replayed' | 'conflict' | 'period_closed' | 'quota_exceeded';

/** SQLSTATE the optimistic batch raises when it must be decided exactly instead. */
const DECIDE_EXACTLY = 'QRY01';

/**
 * Decides a batch in one round trip: when `optimistic`, `quarry_charge_calls` (migration 005:
 * writes first, locks each counter only for its final guarded bump), falling back to the exact
 * `quarry_reserve_calls` (migration 004: locks the counters, then decides call by call) when the
 * optimistic one declines. Request ids must be distinct.
 */
async function reserveBatch(
  sql: SqlExecutor,
  items: readonly Checked[],
  optimistic: boolean,
): Promise<Map<number, ReserveResult | Error>> {
  if (optimistic) {
    try {
      return await chargeBatch(sql, items);
    } catch (error) {
      if ((error as { code?: unknown }).code !== DECIDE_EXACTLY) throw error;
    }
  }
  return decideBatch(sql, items);
}

const CHARGE_CALLS = `SELECT o_account, o_period, o_calls FROM quarry_charge_calls(
  $1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::integer[], $8::text[],
  $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::boolean[], $14::integer[],
  $15::text[], $16::integer[], $17::double precision[])`;

/**
 * The optimistic write: every call admitted, or SQLSTATE QRY01 and nothing written. Calls are
 * sent grouped (one element per distinct combination of their fields but request id and
 * latency; see migration 005), and each call's `used` is derived from the counters returned,
 * as the exact path counts them: the k-th of the m api calls of
 * an (account, period) whose counter ends at C used C - (m - k); a marketplace call, C.
 */
async function chargeBatch(
  sql: SqlExecutor,
  items: readonly Checked[],
): Promise<Map<number, ReserveResult | Error>> {
  const n = items.length;
  const groupOf = new Map<string, number>();
  const accountIds: string[] = [];
  const keyIds: (string | null)[] = [];
  const periods: string[] = [];
  const limits: (number | null)[] = [];
  const analyticIds: string[] = [];
  const analyticNames: string[] = [];
  const versions: number[] = [];
  const ownerIds: string[] = [];
  const origins: UsageOrigin[] = [];
  const credits: number[] = [];
  const ownerShares: number[] = [];
  const platformShares: number[] = [];
  const served: boolean[] = [];
  const calls: number[] = [];
  const requestIds = new Array<string>(n);
  const groups = new Array<number>(n);
  const latencies = new Array<number | null>(n);
  // Per api call its rank k among its counter's api calls (0 for marketplace calls); per
  // counter m, its api calls in the batch.
  const ranks = new Array<number>(n);
  const apiCalls = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const item = items[i] as Checked;
    const { input, money, counterKey } = item;
    const isServed = input.served !== undefined;
    // NUL never occurs in PostgreSQL text, so it separates fields unambiguously (a field that
    // held one would fail the whole statement anyway); `+` tells a key id from a null one.
    const key =
      `${input.accountId}\0${input.keyId === null ? '' : `+${input.keyId}`}\0${input.period}\0${input.limit}` +
      `\0${input.analyticId}\0${input.analyticName}\0${input.version}\0${input.ownerId}\0${input.origin}` +
      `\0${money.credits}\0${money.ownerShare}\0${money.platformShare}\0${isServed}`;
    let group = groupOf.get(key);
    if (group === undefined) {
      accountIds.push(input.accountId);
      keyIds.push(input.keyId);
      periods.push(input.period);
      limits.push(input.limit);
      analyticIds.push(input.analyticId);
      analyticNames.push(input.analyticName);
      versions.push(input.version);
      ownerIds.push(input.ownerId);
      origins.push(input.origin);
      credits.push(money.credits);
      ownerShares.push(money.ownerShare);
      platformShares.push(money.platformShare);
      served.push(isServed);
      calls.push(0);
      group = calls.length;
      groupOf.set(key, group);
    }
    calls[group - 1] = (calls[group - 1] as number) + 1;
    requestIds[i] = input.requestId;
    groups[i] = group;
    latencies[i] = input.served === undefined ? null : Math.round(input.served.latencyMs * 1000) / 1000;
    if (input.origin === 'api') {
      const k = (apiCalls.get(counterKey) ?? 0) + 1;
      apiCalls.set(counterKey, k);
      ranks[i] = k;
    } else {
      ranks[i] = 0;
    }
  }
  const rows = await sql.query<{ o_account: string; o_period: string; o_calls: number | null }>(
    CHARGE_CALLS,
    [
      accountIds,
      keyIds,
      periods,
      limits,
      analyticIds,
      analyticNames,
      versions,
      ownerIds,
      origins,
      credits,
      ownerShares,
      platformShares,
      served,
      calls,
      requestIds,
      groups,
      latencies,
    ],
    // Parsed and planned once per connection (a named statement; bench/README.md has the saving).
    { name: 'quarry_charge_calls' },
  );
  const counters = new Map<string, number | null>();
  for (const row of rows) counters.set(counterKeyOf(row.o_account, row.o_period), row.o_calls);
  const results = new Map<number, ReserveResult | Error>();
  for (let i = 0; i < n; i++) {
    const item = items[i] as Checked;
    const counter = counters.get(item.counterKey);
    if (counter === undefined)
      throw new Error(`quarry_charge_calls returned no counter for ${item.counterKey}`);
    const k = ranks[i] as number;
    // An api call's counter is never NULL (it was just bumped). A marketplace call's is NULL when
    // its (account, period) had only marketplace calls and no counter row: passed on as NULL.
    const used =
      k === 0 ? (counter as number) : (counter as number) - ((apiCalls.get(item.counterKey) as number) - k);
    results.set(item.index, {
      ok: true,
      used,
      remaining: remainingOf(item.input.limit, used),
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
  const rows = await sql.query<{ ord: number; outcome: BatchOutcome; used: number }>(
    `SELECT ord, outcome, used FROM quarry_reserve_calls(
       $1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::integer[],
       $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[], $14::boolean[],
       $15::double precision[])`,
    [
      column((i) => i.input.requestId),
      column((i) => i.input.accountId),
      column((i) => i.input.keyId),
      column((i) => i.input.period),
      column((i) => i.input.limit),
      column((i) => i.input.analyticId),
      column((i) => i.input.analyticName),
      column((i) => i.input.version),
      column((i) => i.input.ownerId),
      column((i) => i.input.origin),
      column((i) => i.money.credits),
      column((i) => i.money.ownerShare),
      column((i) => i.money.platformShare),
      column((i) => i.input.served !== undefined),
      column((i) =>
        i.input.served === undefined ? null : Math.round(i.input.served.latencyMs * 1000) / 1000,
      ),
    ],
  );
  const results = new Map<number, ReserveResult | Error>();
  for (const row of rows) {
    const item = items[row.ord - 1] as Checked;
    const { limit, requestId } = item.input;
    const used = row.used;
    results.set(
      item.index,
      row.outcome === 'ok' || row.outcome === 'replayed'
        ? { ok: true, used, remaining: remainingOf(limit, used), replayed: row.outcome === 'replayed' }
        : row.outcome === 'conflict'
          ? new StoreError('CONFLICT', `request id ${requestId} is already in use`)
          : { ok: false, reason: row.outcome, used },
    );
  }
  return results;
}

/** Builds the usage repository over `sql`. */
export function createUsageRepository(sql: SqlExecutor): UsageRepository {
  const counterIn = async (tx: SqlExecutor, accountId: string, period: string) => {
    const [row] = await tx.query<{ calls: number }>(
      'SELECT calls FROM usage_counters WHERE account_id = $1 AND period = $2',
      [accountId, period],
    );
    return row?.calls ?? 0;
  };

  // Calls left per `account period`, from the last batch that counted there: a batch that might
  // reach an account's limit is decided exactly at once rather than tried optimistically first.
  const headroom = new Map<string, number>();
  const mayBeOptimistic = (items: readonly Checked[]) => {
    const wanted = new Map<string, number>();
    for (const item of items) {
      if (item.input.origin !== 'api' || item.input.limit === null) continue;
      wanted.set(item.counterKey, (wanted.get(item.counterKey) ?? 0) + 1);
    }
    for (const [key, calls] of wanted) {
      const left = headroom.get(key);
      if (left === undefined || left < 2 * calls) return false;
    }
    return true;
  };
  const remember = (items: readonly Checked[], decided: ReadonlyMap<number, ReserveResult | Error>) => {
    if (headroom.size > 10_000) headroom.clear();
    for (const item of items) {
      const result = decided.get(item.index);
      if (item.input.limit === null || result === undefined || result instanceof Error) continue;
      headroom.set(item.counterKey, item.input.limit - result.used);
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

  const commitMany = async (inputs: readonly CommitRequest[]): Promise<CommitResult[]> => {
    if (inputs.length === 0) return [];
    const updated = new Set(
      (
        await sql.query<{ request_id: string }>(
          `UPDATE usage_events e SET status = 'ok', completed_at = now(), latency_ms = u.latency_ms
             FROM unnest($1::text[], $2::double precision[]) AS u(request_id, latency_ms)
            WHERE e.request_id = u.request_id AND e.status = 'pending'
           RETURNING e.request_id`,
          [inputs.map((i) => i.requestId), inputs.map((i) => i.latencyMs)],
        )
      ).map((r) => r.request_id),
    );
    const others = inputs.filter((i) => !updated.has(i.requestId)).map((i) => i.requestId);
    const existing =
      others.length === 0
        ? new Set<string>()
        : new Set(
            (
              await sql.query<{ request_id: string }>(
                'SELECT request_id FROM usage_events WHERE request_id = ANY($1::text[])',
                [others],
              )
            ).map((r) => r.request_id),
          );
    const firstCommit = new Set<string>();
    return inputs.map((i) => {
      if (updated.has(i.requestId) && !firstCommit.has(i.requestId)) {
        firstCommit.add(i.requestId);
        return 'committed';
      }
      return updated.has(i.requestId) || existing.has(i.requestId) ? 'already_committed' : 'missing';
    });
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

    release(requestId) {
      return sql.transaction(async (tx) => {
        // Only a pending event: a final one is never undone. A concurrent commit holds the row
        // lock; this DELETE then re-checks the row and finds it final.
        const [gone] = await tx.query<{ account_id: string; period: string; origin: UsageOrigin }>(
          `DELETE FROM usage_events WHERE request_id = $1 AND status = 'pending'
           RETURNING account_id, period, origin`,
          [requestId],
        );
        if (gone === undefined) {
          const existing = await tx.query('SELECT 1 FROM usage_events WHERE request_id = $1', [requestId]);
          return existing.length > 0 ? 'committed' : 'missing';
        }
        if (gone.origin === 'api') {
          await tx.query(
            'UPDATE usage_counters SET calls = calls - 1 WHERE account_id = $1 AND period = $2',
            [gone.account_id, gone.period],
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
             SELECT request_id FROM usage_events
              WHERE status = 'pending' AND reserved_at < now() - $1::double precision * interval '1 millisecond'
              FOR UPDATE SKIP LOCKED
           ), gone AS (
             DELETE FROM usage_events e USING doomed d WHERE e.request_id = d.request_id
             RETURNING e.account_id, e.period, e.origin
           ), freed AS (
             SELECT account_id, period, count(*)::integer AS n FROM gone WHERE origin = 'api'
              GROUP BY account_id, period
           ), decremented AS (
             UPDATE usage_counters c SET calls = c.calls - f.n FROM freed f
              WHERE c.account_id = f.account_id AND c.period = f.period RETURNING 1
           )
           SELECT count(*)::integer AS reaped FROM gone`,
          [olderThanMs],
        );
        return row?.reaped ?? 0;
      });
    },

    counter: (accountId, period) => counterIn(sql, accountId, period),

    async usageFor(accountId, period) {
      assertPeriod(period);
      const served = `FROM usage_events WHERE account_id = $1 AND period = $2 AND status = 'ok'`;
      const [totals] = await sql.query<{ calls: number; credits: number; marketplace_calls: number }>(
        `SELECT count(*) FILTER (WHERE origin = 'api')::integer AS calls,
                coalesce(sum(credits), 0)::bigint AS credits,
                count(*) FILTER (WHERE origin = 'marketplace')::integer AS marketplace_calls
           ${served}`,
        [accountId, period],
      );
      const byAnalytic = await sql.query<UsageTotals & { name: string }>(
        `SELECT analytic_name AS name, count(*)::integer AS calls, sum(credits)::bigint AS credits
           ${served} AND origin = 'api' GROUP BY analytic_name ORDER BY analytic_name`,
        [accountId, period],
      );
      const byDay = await sql.query<UsageTotals & { date: string }>(
        `SELECT to_char(reserved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, count(*)::integer AS calls,
                sum(credits)::bigint AS credits
           ${served} AND origin = 'api' GROUP BY 1 ORDER BY 1`,
        [accountId, period],
      );
      return {
        period,
        totals: {
          calls: totals?.calls ?? 0,
          credits: totals?.credits ?? 0,
          marketplaceCalls: totals?.marketplace_calls ?? 0,
        },
        byAnalytic,
        byDay,
      };
    },
  };
}
