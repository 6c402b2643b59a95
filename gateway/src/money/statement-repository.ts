// Owner statements, payouts and closing a billing period (docs/money.md). Until a period is
// closed an owner's statement is summed live from the ledger (served calls of the owner's
// analytics, by analytic and origin); closing it writes a snapshot of every owner's lines,
// computes each owner's payout in whole cents (the sub-cent remainder carried into the owner's
// next payout) and refuses new reservations for the period, so nothing can change a closed
// statement afterwards.

import { StoreError } from '../errors/store-error.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { decidePayout, type PayoutPolicy, type PayoutStatus } from './payout-rules.js';
import type { UsageOrigin } from './revenue-split.js';
import { assertPeriod, PERIOD_LOCK_KEY } from './usage-repository.js';

/** Before payment providers: every payout listed for the operator, no minimum (the default). */
const OPERATOR_PAYS: PayoutPolicy = { provider: 'none', minimumCents: 0 };

interface PayoutRow {
  readonly carried_in_musd: string | number;
  readonly earned_musd: string | number;
  readonly adjusted_musd: string | number;
  readonly payout_cents: string | number;
  readonly carried_out_musd: string | number;
  readonly status: PayoutStatus;
  readonly reason: string | null;
  readonly transfer_id: string | null;
  readonly paid_at: Date | null;
}

export const PAYOUT_COLUMNS =
  'carried_in_musd, earned_musd, adjusted_musd, payout_cents, carried_out_musd, status, reason, transfer_id, paid_at';

export const toPayout = (p: PayoutRow): Payout => ({
  carriedInMicroUsd: Number(p.carried_in_musd),
  earnedMicroUsd: Number(p.earned_musd),
  adjustedMicroUsd: Number(p.adjusted_musd),
  payoutCents: Number(p.payout_cents),
  carriedOutMicroUsd: Number(p.carried_out_musd),
  status: p.status,
  reason: p.reason,
  transferId: p.transfer_id,
  paidAt: p.paid_at,
});

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

/** An owner's payout of a closed period: whole cents, the rest carried on (payout-rules.ts). */
export interface Payout {
  /** The previous payout's carried-out balance: may be negative, or a held amount. */
  readonly carriedInMicroUsd: number;
  readonly earnedMicroUsd: number;
  /** Owner shares taken back by refunds and disputes, netted here. */
  readonly adjustedMicroUsd: number;
  readonly payoutCents: number;
  readonly carriedOutMicroUsd: number;
  readonly status: PayoutStatus;
  readonly reason: string | null;
  readonly transferId: string | null;
  readonly paidAt: Date | null;
}

/** A reversal of owner shares (a refunded or disputed caller payment), by analytic. */
export interface OwnerAdjustment {
  readonly analytic: string;
  /** The period of the calls whose payment was reversed. */
  readonly usagePeriod: string;
  readonly reason: 'refund' | 'dispute';
  readonly ownerMicroUsd: number;
  readonly platformMicroUsd: number;
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
  /**
   * Shares taken back: netted by this period's payout once closed; while it is open, those the
   * next close will net.
   */
  readonly adjustments: readonly OwnerAdjustment[];
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
  closePeriod(period: string, policy?: PayoutPolicy): Promise<ClosedPeriod>;
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
 * origin: the lines of a statement, live or frozen. Read from the owner day rollup (migration
 * 017), which the batch that serves a call updates in its transaction, so it equals the sums of
 * the raw events to the unit.
 */
const LEDGER_LINES = `SELECT owner_id, day, analytic_name AS name, origin,
                             sum(calls)::bigint AS calls, sum(millicredits)::bigint AS millicredits,
                             sum(owner_millicredits)::bigint AS owner_millicredits,
                             sum(platform_millicredits)::bigint AS platform_millicredits,
                             sum(value_musd)::bigint AS value_musd, sum(owner_musd)::bigint AS owner_musd,
                             sum(platform_musd)::bigint AS platform_musd
                        FROM usage_owner_days WHERE period = $1`;
const LEDGER_GROUPS = 'GROUP BY owner_id, day, analytic_name, origin';

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
          const [p] = await tx.query<PayoutRow>(
            `SELECT ${PAYOUT_COLUMNS} FROM owner_payouts WHERE period = $1 AND owner_id = $2`,
            [period, ownerId],
          );
          if (p !== undefined) payout = toPayout(p);
        }
        const adjustments = await tx.query<{
          analytic_name: string;
          usage_period: string;
          kind: 'refund' | 'dispute';
          owner_musd: string | number;
          platform_musd: string | number;
        }>(
          `SELECT analytic_name, usage_period, kind, owner_musd, platform_musd FROM owner_adjustments
            WHERE owner_id = $1 AND ${closedAt === null ? 'applied_period IS NULL' : 'applied_period = $2'}
            ORDER BY created_at, analytic_name`,
          closedAt === null ? [ownerId] : [ownerId, period],
        );
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
          adjustments: adjustments.map((a) => ({
            analytic: a.analytic_name,
            usagePeriod: a.usage_period,
            reason: a.kind,
            ownerMicroUsd: Number(a.owner_musd),
            platformMicroUsd: Number(a.platform_musd),
          })),
        };
      });
    },

    closePeriod(period, policy = OPERATOR_PAYS) {
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
        // The adjustments this close nets: taken first, so one recorded meanwhile waits for the next.
        await tx.query('UPDATE owner_adjustments SET applied_period = $1 WHERE applied_period IS NULL', [
          period,
        ]);
        // Each owner that earned, had shares taken back, or still holds a balance: payable = its
        // last carried-out balance + what it earned − what was taken back (payout-rules.ts).
        const owners = await tx.query<{
          owner_id: string;
          carried_in: string | number;
          earned: string | number;
          adjusted: string | number;
          onboarded: boolean;
          closed: boolean;
        }>(
          `WITH earned AS (SELECT owner_id, sum(owner_musd)::bigint AS earned FROM owner_statement_lines
                            WHERE period = $1 GROUP BY owner_id),
                adjusted AS (SELECT owner_id, sum(owner_musd)::bigint AS adjusted FROM owner_adjustments
                              WHERE applied_period = $1 GROUP BY owner_id),
                last AS (SELECT DISTINCT ON (owner_id) owner_id, carried_out_musd, status FROM owner_payouts
                          ORDER BY owner_id, seq DESC),
                owners AS (SELECT owner_id FROM earned UNION SELECT owner_id FROM adjusted
                           UNION SELECT owner_id FROM last WHERE status IN ('held', 'failed'))
           SELECT o.owner_id, coalesce(l.carried_out_musd, 0) AS carried_in, coalesce(e.earned, 0) AS earned,
                  coalesce(a.adjusted, 0) AS adjusted,
                  coalesce(pa.payouts_enabled AND pa.provider = $2, false) AS onboarded,
                  acc.closed_at IS NOT NULL AS closed
             FROM owners o LEFT JOIN earned e USING (owner_id) LEFT JOIN adjusted a USING (owner_id)
             LEFT JOIN last l USING (owner_id) LEFT JOIN payout_accounts pa USING (owner_id)
             LEFT JOIN accounts acc ON acc.id = o.owner_id
            ORDER BY o.owner_id`,
          [period, policy.provider],
        );
        for (const o of owners) {
          const input = {
            carriedInMicroUsd: Number(o.carried_in),
            earnedMicroUsd: Number(o.earned),
            adjustedMicroUsd: Number(o.adjusted),
          };
          const decision = decidePayout(input, policy, o.onboarded, o.closed === true);
          await tx.query(
            `INSERT INTO owner_payouts (period, owner_id, carried_in_musd, earned_musd, adjusted_musd, payout_cents,
                                        carried_out_musd, status, reason)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [
              period,
              o.owner_id,
              input.carriedInMicroUsd,
              input.earnedMicroUsd,
              input.adjustedMicroUsd,
              decision.payoutCents,
              decision.carriedOutMicroUsd,
              decision.status,
              decision.reason,
            ],
          );
        }
        return { period, closedAt: closed!.closed_at, alreadyClosed: false };
      });
    },

    closedAt(period) {
      assertPeriod(period);
      return closedAtIn(sql, period);
    },
  };
}
