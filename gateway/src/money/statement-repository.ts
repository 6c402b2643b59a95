// Owner statements, payouts and closing a billing period (docs/money.md). Until a period is
// closed an owner's statement is summed live from the ledger (served calls of the owner's
// analytics, by analytic and origin); closing it writes a snapshot of every owner's lines,
// computes each owner's payout in whole cents (the sub-cent remainder carried into the owner's
// next payout) and refuses new reservations for the period, so nothing can change a closed
// statement afterwards.

import { StoreError } from '../errors/store-error.js';
import type { SqlExecutor } from '../store/sql-client.js';
import type { UsageOrigin } from './revenue-split.js';
import { assertPeriod, PERIOD_LOCK_KEY } from './usage-repository.js';

/** Calls, credits, money and their splits, for one analytic or in total. */
export interface StatementAmounts {
  /** Served calls of every origin. */
  readonly calls: number;
  readonly callsByOrigin: Readonly<Record<UsageOrigin, number>>;
  readonly millicredits: number;
  readonly ownerMillicredits: number;
  readonly platformMillicredits: number;
  /** What the callers paid for those credits, in micro-USD. */
  readonly valueMicroUsd: number;
  readonly ownerMicroUsd: number;
  readonly platformMicroUsd: number;
}

/** An owner's payout of a closed period: whole cents, the sub-cent rest carried on. */
export interface Payout {
  readonly carriedInMicroUsd: number;
  readonly earnedMicroUsd: number;
  readonly payoutCents: number;
  readonly carriedOutMicroUsd: number;
}

/** An owner's earnings in one period. */
export interface OwnerStatement {
  readonly period: string;
  readonly ownerId: string;
  /** Set once the period is closed: the statement is then frozen. */
  readonly closedAt: Date | null;
  /** By analytic name. */
  readonly analytics: readonly (StatementAmounts & { readonly name: string })[];
  readonly totals: StatementAmounts;
  /**
   * By UTC day (of the call's reservation) and analytic name, in date then name order: only days
   * and analytics with calls. Closed periods too: a closed period's served calls never change.
   */
  readonly byDay: readonly (StatementAmounts & { readonly date: string; readonly name: string })[];
  /** Once closed (and the owner earned or carried something): the payout. */
  readonly payout: Payout | null;
}

/** What {@link StatementRepository.closePeriod} did. */
export interface ClosedPeriod {
  readonly period: string;
  readonly closedAt: Date;
  /** True when the period had already been closed: nothing was written. */
  readonly alreadyClosed: boolean;
}

/** Owner statements and period closing. */
export interface StatementRepository {
  ownerStatement(ownerId: string, period: string): Promise<OwnerStatement>;
  /**
   * Freezes every owner's statement of `period`, computes their payouts and refuses later
   * reservations in it. Idempotent. CONFLICT while calls of the period are still in flight
   * (pending reservations): retry once they finish or are reaped.
   */
  closePeriod(period: string): Promise<ClosedPeriod>;
  /** When the period was closed, or null when it is open. */
  closedAt(period: string): Promise<Date | null>;
}

interface LineRow {
  readonly name: string;
  readonly origin: UsageOrigin;
  readonly calls: number;
  readonly millicredits: number;
  readonly owner_millicredits: number;
  readonly platform_millicredits: number;
  readonly value_musd: number;
  readonly owner_musd: number;
  readonly platform_musd: number;
}

const ORIGINS: readonly UsageOrigin[] = ['paid', 'free', 'marketplace', 'owner'];

const zero = (): StatementAmounts => ({
  calls: 0,
  callsByOrigin: { paid: 0, free: 0, marketplace: 0, owner: 0 },
  millicredits: 0,
  ownerMillicredits: 0,
  platformMillicredits: 0,
  valueMicroUsd: 0,
  ownerMicroUsd: 0,
  platformMicroUsd: 0,
});

const add = (a: StatementAmounts, row: LineRow): StatementAmounts => ({
  calls: a.calls + Number(row.calls),
  callsByOrigin: { ...a.callsByOrigin, [row.origin]: a.callsByOrigin[row.origin] + Number(row.calls) },
  millicredits: a.millicredits + Number(row.millicredits),
  ownerMillicredits: a.ownerMillicredits + Number(row.owner_millicredits),
  platformMillicredits: a.platformMillicredits + Number(row.platform_millicredits),
  valueMicroUsd: a.valueMicroUsd + Number(row.value_musd),
  ownerMicroUsd: a.ownerMicroUsd + Number(row.owner_musd),
  platformMicroUsd: a.platformMicroUsd + Number(row.platform_musd),
});

/**
 * Sums of the served calls of `$1`'s period per owner, UTC day (of the reservation), analytic and
 * origin: the lines of a statement, live or frozen.
 */
const LEDGER_LINES = `SELECT owner_id, (reserved_at AT TIME ZONE 'UTC')::date AS day, analytic_name AS name, origin,
                             count(*)::integer AS calls, sum(millicredits)::bigint AS millicredits,
                             sum(owner_millicredits)::bigint AS owner_millicredits,
                             sum(platform_millicredits)::bigint AS platform_millicredits,
                             sum(value_musd)::bigint AS value_musd, sum(owner_musd)::bigint AS owner_musd,
                             sum(platform_musd)::bigint AS platform_musd
                        FROM usage_events WHERE period = $1 AND status = 'ok'`;
const LEDGER_GROUPS = 'GROUP BY owner_id, 2, analytic_name, origin';

/** Builds the statement repository over `sql`. */
export function createStatementRepository(sql: SqlExecutor): StatementRepository {
  const closedAtIn = async (tx: SqlExecutor, period: string) => {
    const [row] = await tx.query<{ closed_at: Date }>(
      'SELECT closed_at FROM closed_periods WHERE period = $1',
      [period],
    );
    return row?.closed_at ?? null;
  };

  return {
    ownerStatement(ownerId, period) {
      assertPeriod(period);
      // One transaction so a close landing in between cannot mix live rows and the snapshot.
      return sql.transaction(async (tx) => {
        const closedAt = await closedAtIn(tx, period);
        // Day lines in day then name order (a frozen line from before days were kept has none).
        const rows = await tx.query<LineRow & { date: string | null }>(
          closedAt === null
            ? `SELECT to_char(day, 'YYYY-MM-DD') AS date, name, origin, calls, millicredits, owner_millicredits,
                      platform_millicredits, value_musd, owner_musd, platform_musd
                 FROM (${LEDGER_LINES} AND owner_id = $2 ${LEDGER_GROUPS}) lines ORDER BY day, name, origin`
            : `SELECT to_char(day, 'YYYY-MM-DD') AS date, analytic_name AS name, origin, calls, millicredits,
                      owner_millicredits, platform_millicredits, value_musd, owner_musd, platform_musd
                 FROM owner_statement_lines WHERE period = $1 AND owner_id = $2
                ORDER BY day NULLS FIRST, analytic_name, origin`,
          [period, ownerId],
        );
        const byName = new Map<string, StatementAmounts>();
        const byDay = new Map<string, StatementAmounts & { date: string; name: string }>();
        let totals = zero();
        for (const row of rows) {
          if (!ORIGINS.includes(row.origin)) continue;
          byName.set(row.name, add(byName.get(row.name) ?? zero(), row));
          totals = add(totals, row);
          if (row.date === null) continue;
          const key = `${row.date} ${row.name}`;
          byDay.set(key, { date: row.date, name: row.name, ...add(byDay.get(key) ?? zero(), row) });
        }
        let payout: Payout | null = null;
        if (closedAt !== null) {
          const [p] = await tx.query<{
            carried_in_musd: number;
            earned_musd: number;
            payout_cents: number;
            carried_out_musd: number;
          }>(
            `SELECT carried_in_musd, earned_musd, payout_cents, carried_out_musd FROM owner_payouts
              WHERE period = $1 AND owner_id = $2`,
            [period, ownerId],
          );
          if (p !== undefined) {
            payout = {
              carriedInMicroUsd: Number(p.carried_in_musd),
              earnedMicroUsd: Number(p.earned_musd),
              payoutCents: Number(p.payout_cents),
              carriedOutMicroUsd: Number(p.carried_out_musd),
            };
          }
        }
        return {
          period,
          ownerId,
          closedAt,
          analytics: [...byName]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([name, amounts]) => ({ name, ...amounts })),
          totals,
          byDay: [...byDay.values()],
          payout,
        };
      });
    },

    closePeriod(period) {
      assertPeriod(period);
      return sql.transaction(async (tx) => {
        // Exclusive: waits for reservations of the period under way, and holds off new ones.
        await tx.query(`SELECT pg_advisory_xact_lock(${PERIOD_LOCK_KEY})`, [period]);
        const existing = await closedAtIn(tx, period);
        if (existing !== null) return { period, closedAt: existing, alreadyClosed: true };
        const [pending] = await tx.query<{ n: number }>(
          `SELECT count(*)::integer AS n FROM usage_events WHERE period = $1 AND status = 'pending'`,
          [period],
        );
        if ((pending?.n ?? 0) > 0) {
          throw new StoreError(
            'CONFLICT',
            `period ${period} still has ${pending?.n} calls in flight; retry shortly`,
          );
        }
        // One close at a time computes payouts: each carries in the owner's previous carry.
        await tx.query(
          `SELECT pg_advisory_xact_lock(hashtext('quarry.payouts:' || coalesce(current_schema(), '')))`,
        );
        const [closed] = await tx.query<{ closed_at: Date }>(
          'INSERT INTO closed_periods (period) VALUES ($1) RETURNING closed_at',
          [period],
        );
        await tx.query(
          `INSERT INTO owner_statement_lines (period, owner_id, day, analytic_name, origin, calls, millicredits,
                                             owner_millicredits, platform_millicredits, value_musd, owner_musd,
                                             platform_musd)
           SELECT $1, owner_id, day, name, origin, calls, millicredits, owner_millicredits, platform_millicredits,
                  value_musd, owner_musd, platform_musd
             FROM (${LEDGER_LINES} ${LEDGER_GROUPS}) lines`,
          [period],
        );
        // Payable = what the owner carried from its last payout + what it earned now; paid in
        // whole cents (10,000 µUSD), the rest carried on.
        await tx.query(
          `INSERT INTO owner_payouts (period, owner_id, carried_in_musd, earned_musd, payout_cents, carried_out_musd)
           SELECT $1, e.owner_id, coalesce(prev.carried_out_musd, 0), e.earned,
                  (coalesce(prev.carried_out_musd, 0) + e.earned) / 10000,
                  (coalesce(prev.carried_out_musd, 0) + e.earned) % 10000
             FROM (SELECT owner_id, sum(owner_musd)::bigint AS earned FROM owner_statement_lines
                    WHERE period = $1 GROUP BY owner_id) e
             LEFT JOIN LATERAL (SELECT p.carried_out_musd FROM owner_payouts p
                                 WHERE p.owner_id = e.owner_id ORDER BY p.seq DESC LIMIT 1) prev ON true
            ORDER BY e.owner_id`,
          [period],
        );
        return { period, closedAt: closed!.closed_at, alreadyClosed: false };
      });
    },

    closedAt(period) {
      assertPeriod(period);
      return closedAtIn(sql, period);
    },
  };
}
