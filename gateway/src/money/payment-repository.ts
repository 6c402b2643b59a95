// The payments tables (migration 013): each account's standing with the payment provider, the
// provider events applied (once each), Pay as you Go invoices and payment reversals. Only the
// payments service (payments-service.ts) calls this.

export type { BillingAccount, BillingStatus } from './billing-account.js';

import type { SqlExecutor } from '../store/sql-client.js';
import { emitWebhookEvent } from '../store/webhook-repository.js';
import type { BillingAccount, BillingStatus } from './billing-account.js';
import type { InvoiceLine } from './payment-provider.js';
import type { Cents, MicroUsd } from './units.js';

/** The standing fields a fact changes (undefined: unchanged). */
export type StandingChange = Partial<
  Pick<
    BillingAccount,
    | 'subscriptionId'
    | 'subscriptionPlan'
    | 'status'
    | 'currentPeriodEnd'
    | 'cancelAtPeriodEnd'
    | 'pendingPlan'
    | 'pendingAt'
    | 'pastDueSince'
    | 'cardOnFile'
  >
>;

export type PaygInvoiceStatus = 'pending' | 'paid' | 'failed' | 'nothing_due';

/** A Pay as you Go account's invoice for one period. */
export interface PaygInvoice {
  readonly accountId: string;
  readonly period: string;
  readonly provider: string;
  readonly amountMicroUsd: MicroUsd;
  readonly amountCents: Cents;
  /** The sub-cent rest carried to the next invoice. */
  readonly carryMicroUsd: MicroUsd;
  readonly lines: readonly InvoiceLine[];
  readonly invoiceId: string | null;
  readonly status: PaygInvoiceStatus;
}

/** One account's Pay as you Go spending on one analytic in a period. */
export interface PaygUsage {
  readonly accountId: string;
  readonly analytic: string;
  readonly calls: number;
  readonly millicredits: number;
  readonly valueMicroUsd: MicroUsd;
}

export interface PaymentAdjustment {
  readonly provider: string;
  readonly kind: 'refund' | 'dispute';
  readonly reference: string;
  readonly accountId: string;
  readonly chargeId: string | null;
  readonly invoiceId: string | null;
  readonly amountCents: Cents;
  /** What the reversed payment paid, and the period of the calls it paid for. */
  readonly paidCents: Cents;
  readonly usagePeriod: string;
}

export interface PaymentRepository {
  get(accountId: string): Promise<BillingAccount | null>;
  byCustomer(provider: string, customerId: string): Promise<BillingAccount | null>;
  /** The account's customer at `provider`: the one it has, or `customerId` from now on. */
  linkCustomer(
    accountId: string,
    provider: 'sandbox' | 'stripe',
    customerId: string,
  ): Promise<BillingAccount>;
  /**
   * Changes the standing; returns it, or null when the account has no billing row. When the
   * plan, the status, the plan at the period's end or the period's end changed, the account's
   * `subscription.updated` event commits with it. `plan` is the account's plan before and after
   * this change, when the caller moves it (without: the plan the subscription pays for).
   */
  update(
    accountId: string,
    change: StandingChange,
    plan?: { readonly from: string; readonly to: string },
  ): Promise<BillingAccount | null>;
  /** Accounts with a pending plan due by `now`, or past due since before `pastDueBefore`. */
  due(now: Date, pastDueBefore: Date): Promise<readonly BillingAccount[]>;
  /** Whether the provider event was applied already. */
  seen(provider: string, eventId: string): Promise<boolean>;
  /** Records an applied event; false when it was recorded already. */
  recordEvent(provider: string, eventId: string, type: string, accountId: string | null): Promise<boolean>;
  /** Pay as you Go spending of `period` on the budgeted plans, by account and analytic. */
  paygUsage(period: string, planIds: readonly string[]): Promise<readonly PaygUsage[]>;
  /** The carry of the account's latest invoice before `period` (0 without one). */
  carryBefore(accountId: string, period: string): Promise<MicroUsd>;
  /** Claims the invoice of (account, period): false when it exists already. */
  claimInvoice(invoice: PaygInvoice): Promise<boolean>;
  invoice(accountId: string, period: string): Promise<PaygInvoice | null>;
  settleInvoice(
    accountId: string,
    period: string,
    outcome: { readonly invoiceId: string | null; readonly status: PaygInvoiceStatus },
  ): Promise<void>;
  /** Takes over a pending invoice last touched before `before` (its close stopped half-way); false otherwise. */
  retakeStale(accountId: string, period: string, before: Date): Promise<boolean>;
  /** The account's invoices, newest first. */
  invoicesOf(accountId: string, limit?: number): Promise<readonly PaygInvoice[]>;
  /** Records a reversal once; false when it was recorded already. */
  recordAdjustment(adjustment: PaymentAdjustment): Promise<boolean>;
}

interface BillingRow {
  readonly account_id: string;
  readonly provider: 'sandbox' | 'stripe';
  readonly customer_id: string;
  readonly subscription_id: string | null;
  readonly subscription_plan: string | null;
  readonly status: BillingStatus;
  readonly current_period_end: Date | null;
  readonly cancel_at_period_end: boolean;
  readonly pending_plan: string | null;
  readonly pending_at: Date | null;
  readonly past_due_since: Date | null;
  readonly card_on_file: boolean;
}

const BILLING_COLUMNS =
  'account_id, provider, customer_id, subscription_id, subscription_plan, status, current_period_end, ' +
  'cancel_at_period_end, pending_plan, pending_at, past_due_since, card_on_file';

const toBilling = (r: BillingRow): BillingAccount => ({
  accountId: r.account_id,
  provider: r.provider,
  customerId: r.customer_id,
  subscriptionId: r.subscription_id,
  subscriptionPlan: r.subscription_plan,
  status: r.status,
  currentPeriodEnd: r.current_period_end,
  cancelAtPeriodEnd: r.cancel_at_period_end,
  pendingPlan: r.pending_plan,
  pendingAt: r.pending_at,
  pastDueSince: r.past_due_since,
  cardOnFile: r.card_on_file,
});

/** The column of each standing field. */
const CHANGE_COLUMNS: Readonly<Record<keyof StandingChange, string>> = {
  subscriptionId: 'subscription_id',
  subscriptionPlan: 'subscription_plan',
  status: 'status',
  currentPeriodEnd: 'current_period_end',
  cancelAtPeriodEnd: 'cancel_at_period_end',
  pendingPlan: 'pending_plan',
  pendingAt: 'pending_at',
  pastDueSince: 'past_due_since',
  cardOnFile: 'card_on_file',
};

interface InvoiceRow {
  readonly account_id: string;
  readonly period: string;
  readonly provider: string;
  readonly amount_musd: string | number;
  readonly amount_cents: string | number;
  readonly carry_musd: string | number;
  readonly lines: readonly InvoiceLine[] | string;
  readonly invoice_id: string | null;
  readonly status: PaygInvoiceStatus;
}

const INVOICE_COLUMNS =
  'account_id, period, provider, amount_musd, amount_cents, carry_musd, lines, invoice_id, status';

const toInvoice = (r: InvoiceRow): PaygInvoice => ({
  accountId: r.account_id,
  period: r.period,
  provider: r.provider,
  amountMicroUsd: Number(r.amount_musd),
  amountCents: Number(r.amount_cents),
  carryMicroUsd: Number(r.carry_musd),
  lines: typeof r.lines === 'string' ? (JSON.parse(r.lines) as InvoiceLine[]) : r.lines,
  invoiceId: r.invoice_id,
  status: r.status,
});

/** The data of `subscription.updated` for a standing (and the account's plan, when known). */
const subscriptionEvent = (billing: BillingAccount, plan: string | undefined) => ({
  plan: plan ?? billing.subscriptionPlan ?? 'free',
  status: billing.status,
  pending_plan: billing.pendingPlan,
  period_end: billing.currentPeriodEnd?.toISOString() ?? null,
});

export function createPaymentRepository(sql: SqlExecutor): PaymentRepository {
  const oneBilling = async (query: string, params: readonly unknown[]) => {
    const [row] = await sql.query<BillingRow>(query, params);
    return row === undefined ? null : toBilling(row);
  };
  return {
    get: (accountId) =>
      oneBilling(`SELECT ${BILLING_COLUMNS} FROM billing_accounts WHERE account_id = $1`, [accountId]),
    byCustomer: (provider, customerId) =>
      oneBilling(`SELECT ${BILLING_COLUMNS} FROM billing_accounts WHERE provider = $1 AND customer_id = $2`, [
        provider,
        customerId,
      ]),
    async linkCustomer(accountId, provider, customerId) {
      // A provider switched (sandbox → stripe) starts the account afresh with the new customer.
      const row = await oneBilling(
        `INSERT INTO billing_accounts (account_id, provider, customer_id) VALUES ($1, $2, $3)
         ON CONFLICT (account_id) DO UPDATE SET provider = EXCLUDED.provider, customer_id = EXCLUDED.customer_id,
           updated_at = now()
         WHERE billing_accounts.provider <> EXCLUDED.provider
         RETURNING ${BILLING_COLUMNS}`,
        [accountId, provider, customerId],
      );
      return (
        row ??
        (await oneBilling(`SELECT ${BILLING_COLUMNS} FROM billing_accounts WHERE account_id = $1`, [
          accountId,
        ]))!
      );
    },
    async update(accountId, change, plan) {
      const sets: string[] = [];
      const params: unknown[] = [accountId];
      for (const [field, column] of Object.entries(CHANGE_COLUMNS) as [keyof StandingChange, string][]) {
        if (change[field] === undefined) continue;
        params.push(change[field]);
        sets.push(`${column} = $${params.length}`);
      }
      sets.push('updated_at = now()');
      // `subscription.updated` commits with the change it reports, and only with a change of what
      // it reports: a card saved, a grace period's start or the same state told again send none.
      return sql.transaction(async (tx) => {
        const [old] = await tx.query<BillingRow>(
          `SELECT ${BILLING_COLUMNS} FROM billing_accounts WHERE account_id = $1 FOR UPDATE`,
          [accountId],
        );
        if (old === undefined) return null;
        const [row] = await tx.query<BillingRow>(
          `UPDATE billing_accounts SET ${sets.join(', ')} WHERE account_id = $1 RETURNING ${BILLING_COLUMNS}`,
          params,
        );
        if (row === undefined) return null;
        const billing = toBilling(row);
        const before = subscriptionEvent(toBilling(old), plan?.from);
        const after = subscriptionEvent(billing, plan?.to);
        if (JSON.stringify(before) !== JSON.stringify(after)) {
          await emitWebhookEvent(tx, { accountId, type: 'subscription.updated', data: after });
        }
        return billing;
      });
    },
    async due(now, pastDueBefore) {
      const rows = await sql.query<BillingRow>(
        `SELECT ${BILLING_COLUMNS} FROM billing_accounts
         WHERE pending_at <= $1 OR (status = 'past_due' AND past_due_since <= $2) ORDER BY account_id LIMIT 1000`,
        [now, pastDueBefore],
      );
      return rows.map(toBilling);
    },
    async seen(provider, eventId) {
      const rows = await sql.query('SELECT 1 FROM payment_events WHERE provider = $1 AND event_id = $2', [
        provider,
        eventId,
      ]);
      return rows.length > 0;
    },
    async recordEvent(provider, eventId, type, accountId) {
      const rows = await sql.query(
        `INSERT INTO payment_events (provider, event_id, type, account_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [provider, eventId, type, accountId],
      );
      return rows.length > 0;
    },
    async paygUsage(period, planIds) {
      const rows = await sql.query<{
        account_id: string;
        analytic_name: string;
        calls: string | number;
        millicredits: string | number;
        value_musd: string | number;
      }>(
        `SELECT account_id, analytic_name, sum(calls) AS calls, sum(millicredits) AS millicredits,
                sum(value_musd) AS value_musd
         FROM usage_account_days
         WHERE period = $1 AND origin = 'paid' AND plan = ANY ($2::text[])
         GROUP BY account_id, analytic_name ORDER BY account_id, analytic_name`,
        [period, planIds],
      );
      return rows.map((r) => ({
        accountId: r.account_id,
        analytic: r.analytic_name,
        calls: Number(r.calls),
        millicredits: Number(r.millicredits),
        valueMicroUsd: Number(r.value_musd),
      }));
    },
    async carryBefore(accountId, period) {
      const [row] = await sql.query<{ carry_musd: string | number }>(
        `SELECT carry_musd FROM payg_invoices WHERE account_id = $1 AND period < $2 ORDER BY period DESC LIMIT 1`,
        [accountId, period],
      );
      return row === undefined ? 0 : Number(row.carry_musd);
    },
    async claimInvoice(i) {
      const rows = await sql.query(
        `INSERT INTO payg_invoices (account_id, period, provider, amount_musd, amount_cents, carry_musd, lines, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) ON CONFLICT DO NOTHING RETURNING 1`,
        [
          i.accountId,
          i.period,
          i.provider,
          i.amountMicroUsd,
          i.amountCents,
          i.carryMicroUsd,
          JSON.stringify(i.lines),
          i.status,
        ],
      );
      return rows.length > 0;
    },
    async invoice(accountId, period) {
      const [row] = await sql.query<InvoiceRow>(
        `SELECT ${INVOICE_COLUMNS} FROM payg_invoices WHERE account_id = $1 AND period = $2`,
        [accountId, period],
      );
      return row === undefined ? null : toInvoice(row);
    },
    settleInvoice(accountId, period, outcome) {
      // `invoice.paid` / `invoice.failed` commits with the invoice's state.
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<{ invoice_id: string | null; amount_cents: number }>(
          `UPDATE payg_invoices SET invoice_id = coalesce($3, invoice_id), status = $4, updated_at = now()
           WHERE account_id = $1 AND period = $2 RETURNING invoice_id, amount_cents`,
          [accountId, period, outcome.invoiceId, outcome.status],
        );
        if (row === undefined || (outcome.status !== 'paid' && outcome.status !== 'failed')) return;
        await emitWebhookEvent(tx, {
          accountId,
          type: outcome.status === 'paid' ? 'invoice.paid' : 'invoice.failed',
          dedupeKey: `invoice:${accountId}:${period}:${outcome.status}`,
          data: { period, invoice_id: row.invoice_id ?? '', amount_usd: Number(row.amount_cents) / 100 },
        });
      });
    },
    async retakeStale(accountId, period, before) {
      const rows = await sql.query(
        `UPDATE payg_invoices SET updated_at = now()
         WHERE account_id = $1 AND period = $2 AND status = 'pending' AND updated_at < $3 RETURNING 1`,
        [accountId, period, before],
      );
      return rows.length > 0;
    },
    async invoicesOf(accountId, limit = 24) {
      const rows = await sql.query<InvoiceRow>(
        `SELECT ${INVOICE_COLUMNS} FROM payg_invoices WHERE account_id = $1 ORDER BY period DESC LIMIT $2`,
        [accountId, limit],
      );
      return rows.map(toInvoice);
    },
    async recordAdjustment(a) {
      const rows = await sql.query(
        `INSERT INTO payment_adjustments (provider, kind, reference, account_id, charge_id, invoice_id, amount_cents,
                                          paid_cents, usage_period)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING 1`,
        [
          a.provider,
          a.kind,
          a.reference,
          a.accountId,
          a.chargeId,
          a.invoiceId,
          a.amountCents,
          a.paidCents,
          a.usagePeriod,
        ],
      );
      return rows.length > 0;
    },
  };
}
