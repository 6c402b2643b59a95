// Owner revenue statements and closing a billing period. Until a period is closed an owner's
// statement is summed live from the ledger (served, api-origin calls of the owner's
// analytics); closing it writes a snapshot of every owner's rows and refuses new reservations
// for the period, so nothing can change a closed statement afterwards.

import { StoreError } from '../errors/store-error.js';
import type { SqlExecutor } from './sql-client.js';
import { assertPeriod, PERIOD_LOCK_KEY } from './usage-repository.js';

/** Calls, credits and their split, for one analytic or in total. */
export interface StatementAmounts {
  readonly calls: number;
  readonly credits: number;
  readonly ownerShare: number;
  readonly platformShare: number;
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
   * Freezes every owner's statement of `period` and refuses later reservations in it.
   * Idempotent. CONFLICT while calls of the period are still in flight (pending reservations):
   * retry once they finish or are reaped.
   */
  closePeriod(period: string): Promise<ClosedPeriod>;
  /** When the period was closed, or null when it is open. */
  closedAt(period: string): Promise<Date | null>;
}

interface AmountRow {
  readonly name: string;
  readonly calls: number;
  readonly credits: number;
  readonly owner_share: number;
  readonly platform_share: number;
}

const toAmounts = (row: Omit<AmountRow, 'name'>): StatementAmounts => ({
  calls: row.calls,
  credits: row.credits,
  ownerShare: row.owner_share,
  platformShare: row.platform_share,
});

/** Sums of the served, charged calls of `$1`'s period per owner and analytic. */
const LEDGER_SUMS = `SELECT owner_id, analytic_name AS name, count(*)::integer AS calls, sum(credits)::bigint AS credits,
                            sum(owner_share)::bigint AS owner_share, sum(platform_share)::bigint AS platform_share
                       FROM usage_events WHERE period = $1 AND status = 'ok' AND origin = 'api'`;

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
        const rows = await tx.query<AmountRow>(
          closedAt === null
            ? `${LEDGER_SUMS} AND owner_id = $2 GROUP BY owner_id, analytic_name ORDER BY analytic_name`
            : `SELECT analytic_name AS name, calls, credits, owner_share, platform_share FROM owner_statements
                WHERE period = $1 AND owner_id = $2 ORDER BY analytic_name`,
          [period, ownerId],
        );
        const analytics = rows.map((row) => ({ name: row.name, ...toAmounts(row) }));
        const totals = analytics.reduce(
          (sum, row) => ({
            calls: sum.calls + row.calls,
            credits: sum.credits + row.credits,
            ownerShare: sum.ownerShare + row.ownerShare,
            platformShare: sum.platformShare + row.platformShare,
          }),
          { calls: 0, credits: 0, ownerShare: 0, platformShare: 0 },
        );
        return { period, ownerId, closedAt, analytics, totals };
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
        const [closed] = await tx.query<{ closed_at: Date }>(
          'INSERT INTO closed_periods (period) VALUES ($1) RETURNING closed_at',
          [period],
        );
        await tx.query(
          `INSERT INTO owner_statements (period, owner_id, analytic_name, calls, credits, owner_share, platform_share)
           SELECT $1, owner_id, name, calls, credits, owner_share, platform_share
             FROM (${LEDGER_SUMS} GROUP BY owner_id, analytic_name) sums`,
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
