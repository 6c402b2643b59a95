// Metering: quota reserved before the warehouse is asked, and the usage ledger. A call first
// `reserve`s (one transaction: a pending usage event keyed by its request id, and one slot of
// the account's monthly counter, taken only while it is below the plan's limit), then either
// `commit`s (served: the event becomes final) or is `release`d (failed: event deleted, slot
// given back). `reapStale` releases the reservations of an instance that died in between.
// The counter always equals the account's api-origin events (pending or final) in the period;
// every query below is race-free under READ COMMITTED across any number of gateway instances.
import { PERIOD_PATTERN } from '../billing/billing-period.js';
import { splitCredits } from './revenue-split.js';
import type { SqlExecutor } from './sql-client.js';
import { StoreError } from './store-error.js';

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

/** Quota counters and the usage ledger. */
export interface UsageRepository {
  /**
   * Reserves one call: refused when the period is closed or the counter has reached `limit`.
   * Repeating a request id returns the standing reservation (`replayed`) and counts nothing;
   * CONFLICT if that id belongs to another account.
   */
  reserve(input: Reservation): Promise<ReserveResult>;
  /**
   * Marks a reserved call served. Idempotent. `missing` means the reservation was released or
   * reaped: the call was not recorded, so the gateway must not serve it as a success.
   */
  commit(
    requestId: string,
    outcome: { readonly latencyMs: number; readonly status: 'ok' },
  ): Promise<CommitResult>;
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

/** Thrown inside the reserve transaction to roll back its event insert. */
class QuotaRefused extends Error {
  constructor(readonly used: number) {
    super('quota exceeded');
  }
}

function shares(input: Reservation): { credits: number; ownerShare: number; platformShare: number } {
  if (input.origin === 'marketplace') return { credits: 0, ownerShare: 0, platformShare: 0 };
  if (input.ownerShare === undefined && input.platformShare === undefined) {
    return { credits: input.credits, ...splitCredits(input.credits) };
  }
  if (input.ownerShare === undefined || input.platformShare === undefined) {
    throw new RangeError('give both ownerShare and platformShare, or neither');
  }
  return { credits: input.credits, ownerShare: input.ownerShare, platformShare: input.platformShare };
}

const remainingOf = (limit: number | null, used: number) =>
  limit === null ? null : Math.max(0, limit - used);

/** Builds the usage repository over `sql`. */
export function createUsageRepository(sql: SqlExecutor): UsageRepository {
  const counterIn = async (tx: SqlExecutor, accountId: string, period: string) => {
    const [row] = await tx.query<{ calls: number }>(
      'SELECT calls FROM usage_counters WHERE account_id = $1 AND period = $2',
      [accountId, period],
    );
    return row?.calls ?? 0;
  };

  const reserveIn = async (tx: SqlExecutor, input: Reservation): Promise<ReserveResult> => {
    const money = shares(input);
    // Shared: reservations never wait for each other; closePeriod takes it exclusively, so a
    // period is never closed between this check and this reservation's commit.
    await tx.query(`SELECT pg_advisory_xact_lock_shared(${PERIOD_LOCK_KEY})`, [input.period]);
    const closed = await tx.query('SELECT 1 FROM closed_periods WHERE period = $1', [input.period]);
    if (closed.length > 0) {
      return { ok: false, reason: 'period_closed', used: await counterIn(tx, input.accountId, input.period) };
    }
    // The event first, then the counter: release and reap lock in the same order.
    const inserted = await tx.query(
      `INSERT INTO usage_events (request_id, account_id, key_id, period, analytic_id, analytic_name, version,
                                 owner_id, origin, credits, owner_share, platform_share, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending')
       ON CONFLICT (request_id) DO NOTHING RETURNING request_id`,
      [
        input.requestId,
        input.accountId,
        input.keyId,
        input.period,
        input.analyticId,
        input.analyticName,
        input.version,
        input.ownerId,
        input.origin,
        money.credits,
        money.ownerShare,
        money.platformShare,
      ],
    );
    if (inserted.length === 0) {
      const [existing] = await tx.query<{ account_id: string }>(
        'SELECT account_id FROM usage_events WHERE request_id = $1',
        [input.requestId],
      );
      if (existing !== undefined && existing.account_id !== input.accountId) {
        throw new StoreError('CONFLICT', `request id ${input.requestId} is already in use`);
      }
      const used = await counterIn(tx, input.accountId, input.period);
      return { ok: true, used, remaining: remainingOf(input.limit, used), replayed: true };
    }
    if (input.origin === 'marketplace') {
      const used = await counterIn(tx, input.accountId, input.period);
      return { ok: true, used, remaining: remainingOf(input.limit, used), replayed: false };
    }
    // A first insert would write calls = 1, which a zero limit forbids.
    if (input.limit !== null && input.limit <= 0) {
      throw new QuotaRefused(await counterIn(tx, input.accountId, input.period));
    }
    // ON CONFLICT locks the existing row and evaluates WHERE on its latest committed version, so
    // concurrent reservations queue on the row and the limit is never crossed.
    const [row] = await tx.query<{ calls: number }>(
      `INSERT INTO usage_counters AS c (account_id, period, calls) VALUES ($1, $2, 1)
       ON CONFLICT (account_id, period) DO UPDATE SET calls = c.calls + 1
        WHERE $3::integer IS NULL OR c.calls < $3::integer
       RETURNING c.calls`,
      [input.accountId, input.period, input.limit],
    );
    if (row === undefined) throw new QuotaRefused(await counterIn(tx, input.accountId, input.period));
    return { ok: true, used: row.calls, remaining: remainingOf(input.limit, row.calls), replayed: false };
  };

  return {
    async reserve(input) {
      assertPeriod(input.period);
      if (input.limit !== null && !Number.isSafeInteger(input.limit)) {
        throw new RangeError(`limit must be an integer or null, got ${input.limit}`);
      }
      try {
        return await sql.transaction((tx) => reserveIn(tx, input));
      } catch (error) {
        if (error instanceof QuotaRefused) return { ok: false, reason: 'quota_exceeded', used: error.used };
        throw error;
      }
    },

    async commit(requestId, outcome) {
      const updated = await sql.query(
        `UPDATE usage_events SET status = 'ok', completed_at = now(), latency_ms = $2
          WHERE request_id = $1 AND status = 'pending' RETURNING request_id`,
        [requestId, outcome.latencyMs],
      );
      if (updated.length > 0) return 'committed';
      const existing = await sql.query('SELECT 1 FROM usage_events WHERE request_id = $1', [requestId]);
      return existing.length > 0 ? 'already_committed' : 'missing';
    },

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
