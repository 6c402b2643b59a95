// The payouts tables (migration 014): where owners are paid, the owner shares a refund or dispute
// takes back, each payout's state and transfer, and which instance closes a month. Only the
// payouts service (payouts.ts) calls this; statement-repository.ts decides the payouts.
import type { SqlExecutor } from '../store/sql-client.js';
import { emitWebhookEvent } from '../store/webhook-repository.js';
import type { PayoutStatus } from './payout-rules.js';
import { PAYOUT_COLUMNS, type Payout, toPayout } from './statement-repository.js';
import type { MicroUsd } from './units.js';

/** Where an owner is paid, as the gateway last read it from the provider. */
export interface PayoutAccount {
  readonly ownerId: string;
  readonly provider: 'sandbox' | 'stripe';
  readonly connectedAccountId: string;
  readonly detailsSubmitted: boolean;
  readonly payoutsEnabled: boolean;
  readonly requirements: readonly string[];
}

/** A payout with whose it is and which period. */
export interface OwnerPayout extends Payout {
  readonly period: string;
  readonly ownerId: string;
  readonly ownerEmail: string;
}

export interface PayoutRepository {
  accountOf(ownerId: string): Promise<PayoutAccount | null>;
  byConnectedAccount(provider: string, connectedAccountId: string): Promise<PayoutAccount | null>;
  /** The owner's connected account: the one it has at `provider`, or `connectedAccountId` from now on. */
  linkAccount(
    ownerId: string,
    provider: 'sandbox' | 'stripe',
    connectedAccountId: string,
  ): Promise<PayoutAccount>;
  updateAccount(
    connectedAccountId: string,
    state: Pick<PayoutAccount, 'detailsSubmitted' | 'payoutsEnabled' | 'requirements'>,
  ): Promise<PayoutAccount | null>;
  /**
   * Takes back the owner (and platform) shares of the `payerId`'s paid calls in `usagePeriod`, in
   * proportion `share` (refunded ÷ paid, 1 for all), one row an owner and analytic; once per
   * reversal (`reference`): false when it was recorded already.
   */
  recordAdjustments(reversal: {
    readonly provider: string;
    readonly kind: 'refund' | 'dispute';
    readonly reference: string;
    readonly payerId: string;
    readonly usagePeriod: string;
    readonly share: { readonly numerator: number; readonly denominator: number };
  }): Promise<boolean>;
  /** Payouts of `period`, every owner, or those in `statuses`. */
  payoutsOf(period: string, statuses?: readonly PayoutStatus[]): Promise<readonly OwnerPayout[]>;
  /** The owner's payouts, newest first. */
  payoutsFor(ownerId: string, limit?: number): Promise<readonly OwnerPayout[]>;
  /** The owner's balance now: its last payout's carried-out amount. */
  balanceOf(ownerId: string): Promise<MicroUsd>;
  /**
   * What the owner is still to be paid: its balance, plus its shares of months not closed yet,
   * less shares taken back and not netted yet (negative when refunds took more).
   */
  unpaidOf(ownerId: string): Promise<MicroUsd>;
  /** A pending payout's transfer: paid, or failed (its amount carried whole to the next close). */
  settlePayout(
    period: string,
    ownerId: string,
    outcome: { readonly transferId: string } | { readonly failure: string },
  ): Promise<void>;
  /** Writes the owner's `payout.held` event of a held payout (once). */
  announceHeld(period: string, payout: OwnerPayout): Promise<void>;
  /** Periods with payouts still pending (a close that stopped before paying). */
  periodsWithPending(): Promise<readonly string[]>;
  /** Claims closing `period` for `instance` until `until`: false while another holds it or it is done. */
  claimClose(period: string, instance: string, until: Date): Promise<boolean>;
  finishClose(period: string, instance: string): Promise<void>;
  /** Whether closing `period` finished (statements, invoices, payouts). */
  closeFinished(period: string): Promise<boolean>;
  /** Payouts by state with their cents, and what owners hold now (held or failed, carried): for /metrics. */
  totals(): Promise<{
    readonly byStatus: readonly {
      readonly status: PayoutStatus;
      readonly count: number;
      readonly cents: number;
    }[];
    readonly heldMicroUsd: MicroUsd;
  }>;
}

interface AccountRow {
  readonly owner_id: string;
  readonly provider: 'sandbox' | 'stripe';
  readonly connected_account_id: string;
  readonly details_submitted: boolean;
  readonly payouts_enabled: boolean;
  readonly requirements: readonly string[] | string;
}

const ACCOUNT_COLUMNS =
  'owner_id, provider, connected_account_id, details_submitted, payouts_enabled, requirements';

const toAccount = (r: AccountRow): PayoutAccount => ({
  ownerId: r.owner_id,
  provider: r.provider,
  connectedAccountId: r.connected_account_id,
  detailsSubmitted: r.details_submitted,
  payoutsEnabled: r.payouts_enabled,
  requirements:
    typeof r.requirements === 'string' ? (JSON.parse(r.requirements) as string[]) : r.requirements,
});

const OWNER_PAYOUT = `SELECT p.period, p.owner_id, a.email AS owner_email, ${PAYOUT_COLUMNS.split(', ')
  .map((c) => `p.${c}`)
  .join(', ')} FROM owner_payouts p JOIN accounts a ON a.id = p.owner_id`;

type OwnerPayoutRow = Parameters<typeof toPayout>[0] & {
  readonly period: string;
  readonly owner_id: string;
  readonly owner_email: string;
};

const toOwnerPayout = (r: OwnerPayoutRow): OwnerPayout => ({
  period: r.period,
  ownerId: r.owner_id,
  ownerEmail: r.owner_email,
  ...toPayout(r),
});

export function createPayoutRepository(sql: SqlExecutor): PayoutRepository {
  const oneAccount = async (query: string, params: readonly unknown[]) => {
    const [row] = await sql.query<AccountRow>(query, params);
    return row === undefined ? null : toAccount(row);
  };
  return {
    accountOf: (ownerId) =>
      oneAccount(`SELECT ${ACCOUNT_COLUMNS} FROM payout_accounts WHERE owner_id = $1`, [ownerId]),
    byConnectedAccount: (provider, id) =>
      oneAccount(
        `SELECT ${ACCOUNT_COLUMNS} FROM payout_accounts WHERE provider = $1 AND connected_account_id = $2`,
        [provider, id],
      ),
    async linkAccount(ownerId, provider, connectedAccountId) {
      // A provider switched starts the owner afresh with the new account.
      const row = await oneAccount(
        `INSERT INTO payout_accounts (owner_id, provider, connected_account_id) VALUES ($1, $2, $3)
         ON CONFLICT (owner_id) DO UPDATE SET provider = EXCLUDED.provider,
           connected_account_id = EXCLUDED.connected_account_id, details_submitted = false,
           payouts_enabled = false, requirements = '[]', updated_at = now()
         WHERE payout_accounts.provider <> EXCLUDED.provider
         RETURNING ${ACCOUNT_COLUMNS}`,
        [ownerId, provider, connectedAccountId],
      );
      return (
        row ??
        (await oneAccount(`SELECT ${ACCOUNT_COLUMNS} FROM payout_accounts WHERE owner_id = $1`, [ownerId]))!
      );
    },
    updateAccount: (connectedAccountId, state) =>
      oneAccount(
        `UPDATE payout_accounts SET details_submitted = $2, payouts_enabled = $3, requirements = $4::jsonb,
                updated_at = now()
          WHERE connected_account_id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
        [
          connectedAccountId,
          state.detailsSubmitted,
          state.payoutsEnabled,
          JSON.stringify(state.requirements),
        ],
      ),
    async recordAdjustments(r) {
      // floor(shares × numerator ÷ denominator): never more taken back than the reversal covers.
      const rows = await sql.query(
        `INSERT INTO owner_adjustments (provider, kind, reference, owner_id, analytic_name, payer_id, usage_period,
                                        owner_musd, platform_musd)
         SELECT $1, $2, $3, owner_id, analytic_name, account_id, period,
                floor(sum(owner_musd) * $6 / $7)::bigint, floor(sum(platform_musd) * $6 / $7)::bigint
           FROM usage_account_days
          WHERE account_id = $4 AND period = $5 AND origin = 'paid' AND value_musd > 0
          GROUP BY owner_id, analytic_name, account_id, period
         ON CONFLICT DO NOTHING RETURNING 1`,
        [r.provider, r.kind, r.reference, r.payerId, r.usagePeriod, r.share.numerator, r.share.denominator],
      );
      return rows.length > 0;
    },
    async payoutsOf(period, statuses) {
      const rows = await sql.query<OwnerPayoutRow>(
        `${OWNER_PAYOUT} WHERE p.period = $1 ${statuses ? 'AND p.status = ANY ($2::text[])' : ''} ORDER BY p.owner_id`,
        statuses ? [period, statuses] : [period],
      );
      return rows.map(toOwnerPayout);
    },
    async payoutsFor(ownerId, limit = 24) {
      const rows = await sql.query<OwnerPayoutRow>(
        `${OWNER_PAYOUT} WHERE p.owner_id = $1 ORDER BY p.seq DESC LIMIT $2`,
        [ownerId, limit],
      );
      return rows.map(toOwnerPayout);
    },
    async balanceOf(ownerId) {
      const [row] = await sql.query<{ carried_out_musd: string | number }>(
        'SELECT carried_out_musd FROM owner_payouts WHERE owner_id = $1 ORDER BY seq DESC LIMIT 1',
        [ownerId],
      );
      return row === undefined ? 0 : Number(row.carried_out_musd);
    },
    async unpaidOf(ownerId) {
      const [row] = await sql.query<{ unpaid: string | number }>(
        `SELECT coalesce((SELECT carried_out_musd FROM owner_payouts WHERE owner_id = $1 ORDER BY seq DESC LIMIT 1), 0)
              + coalesce((SELECT sum(owner_musd) FROM usage_owner_days d
                           WHERE d.owner_id = $1 AND NOT EXISTS (SELECT 1 FROM closed_periods c WHERE c.period = d.period)), 0)
              - coalesce((SELECT sum(owner_musd) FROM owner_adjustments WHERE owner_id = $1 AND applied_period IS NULL), 0)
              AS unpaid`,
        [ownerId],
      );
      return Number(row?.unpaid ?? 0);
    },
    settlePayout(period, ownerId, outcome) {
      // The owner's `payout.paid` / `payout.failed` event commits with the payout's new state.
      return sql.transaction(async (tx) => {
        const paid = 'transferId' in outcome;
        const [row] = await tx.query<{ payout_cents: number; carried_out_musd: number }>(
          paid
            ? `UPDATE owner_payouts SET status = 'paid', transfer_id = $3, paid_at = now(), updated_at = now()
                WHERE period = $1 AND owner_id = $2 AND status = 'pending' RETURNING payout_cents, carried_out_musd`
            : // Failed: nothing was paid; the cents join the carried balance, for the next close to pay.
              `UPDATE owner_payouts SET status = 'failed', reason = $3,
                      carried_out_musd = carried_out_musd + payout_cents * 10000, payout_cents = 0, updated_at = now()
                WHERE period = $1 AND owner_id = $2 AND status = 'pending' RETURNING payout_cents, carried_out_musd`,
          [period, ownerId, paid ? outcome.transferId : outcome.failure],
        );
        if (row === undefined) return;
        await emitWebhookEvent(tx, {
          accountId: ownerId,
          type: paid ? 'payout.paid' : 'payout.failed',
          dedupeKey: `payout:${ownerId}:${period}:${paid ? 'paid' : 'failed'}`,
          data: {
            period,
            amount_usd: paid ? Number(row.payout_cents) / 100 : Number(row.carried_out_musd) / 1_000_000,
            reason: paid ? null : outcome.failure,
          },
        });
      });
    },
    async announceHeld(period, payout) {
      await emitWebhookEvent(sql, {
        accountId: payout.ownerId,
        type: 'payout.held',
        dedupeKey: `payout:${payout.ownerId}:${period}:held`,
        data: { period, amount_usd: payout.carriedOutMicroUsd / 1_000_000, reason: payout.reason },
      });
    },
    async periodsWithPending() {
      const rows = await sql.query<{ period: string }>(
        `SELECT DISTINCT period FROM owner_payouts WHERE status = 'pending' ORDER BY period`,
      );
      return rows.map((r) => r.period);
    },
    async claimClose(period, instance, until) {
      const rows = await sql.query(
        `INSERT INTO period_closes (period, claimed_by, claimed_until) VALUES ($1, $2, $3)
         ON CONFLICT (period) DO UPDATE SET claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until
         WHERE period_closes.finished_at IS NULL
           AND (period_closes.claimed_until < now() OR period_closes.claimed_by = EXCLUDED.claimed_by)
         RETURNING 1`,
        [period, instance, until],
      );
      return rows.length > 0;
    },
    async finishClose(period, instance) {
      await sql.query(
        `INSERT INTO period_closes (period, claimed_by, claimed_until, finished_at) VALUES ($1, $2, now(), now())
         ON CONFLICT (period) DO UPDATE SET finished_at = now() WHERE period_closes.finished_at IS NULL`,
        [period, instance],
      );
    },
    async closeFinished(period) {
      const rows = await sql.query(
        'SELECT 1 FROM period_closes WHERE period = $1 AND finished_at IS NOT NULL',
        [period],
      );
      return rows.length > 0;
    },
    async totals() {
      const rows = await sql.query<{ status: PayoutStatus; count: string | number; cents: string | number }>(
        'SELECT status, count(*) AS count, sum(payout_cents) AS cents FROM owner_payouts GROUP BY status ORDER BY status',
      );
      const [held] = await sql.query<{ held: string | number | null }>(
        `SELECT sum(carried_out_musd) AS held
           FROM (SELECT DISTINCT ON (owner_id) carried_out_musd, status FROM owner_payouts ORDER BY owner_id, seq DESC) l
          WHERE status IN ('held', 'failed') AND carried_out_musd > 0`,
      );
      return {
        byStatus: rows.map((r) => ({ status: r.status, count: Number(r.count), cents: Number(r.cents) })),
        heldMicroUsd: Number(held?.held ?? 0),
      };
    },
  };
}
