// The money tables' repositories over one SQL client: quota counters and the usage ledger,
// owner statements and closed periods, payments. Nothing outside gateway/src/money/ writes these tables
// (docs/money.md); the rest of the gateway reads money through this store and the billing service.
import type { SqlExecutor } from '../store/sql-client.js';
import { type CallLogRepository, createCallLogRepository } from './call-log-repository.js';
import { createPaymentRepository, type PaymentRepository } from './payment-repository.js';
import { createPayoutRepository, type PayoutRepository } from './payout-repository.js';
import { createStatementRepository, type StatementRepository } from './statement-repository.js';
import { createUsageRepository, type UsageRepository } from './usage-repository.js';

/** Every money repository over one database. */
export interface MoneyStore {
  /** Quota counters and the usage ledger. */
  readonly usage: UsageRepository;
  /** Owner statements and closing billing periods. */
  readonly statements: StatementRepository;
  /** Standing with the payment provider, its events, Pay as you Go invoices, reversals. */
  readonly payments: PaymentRepository;
  /** Where owners are paid, adjustments, payouts' states, month-close claims. */
  readonly payouts: PayoutRepository;
  /** An account's recent served and failed calls (read only). */
  readonly calls: CallLogRepository;
}

/** Builds the money store over `sql` (the control plane's client, migrated). */
export function createMoneyStore(sql: SqlExecutor): MoneyStore {
  return {
    usage: createUsageRepository(sql),
    statements: createStatementRepository(sql),
    payments: createPaymentRepository(sql),
    payouts: createPayoutRepository(sql),
    calls: createCallLogRepository(sql),
  };
}
