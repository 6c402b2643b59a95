// The raw ledger's months (docs/scale.md): usage_events is partitioned by month (migration 017).
// Each tick of the billing scheduler creates this month's partition and the next two ahead, and
// drops the raw events of closed months older than QUARRY_LEDGER_RETENTION_MONTHS. What a month
// sums to outlives its raw events: the day rollups (statements, usage pages, invoices, refunds)
// and the frozen statement lines of a closed month are never dropped.

import type { Logger } from '../observability/logger.js';
import { periodOf } from './billing-period.js';
import type { UsageRepository } from './usage-repository.js';

/** Months created ahead of the current one, so a month's first call never waits for DDL. */
export const MONTHS_AHEAD = 2;

/** `period` (`YYYY-MM`) moved by `months` (negative: back). */
export function addMonths(period: string, months: number): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return periodOf(new Date(Date.UTC(year, month - 1 + months, 1)));
}

/** What one {@link LedgerMaintenance.tick} did. */
export interface LedgerTick {
  readonly created: readonly string[];
  readonly dropped: readonly string[];
}

export interface LedgerMaintenance {
  tick(): Promise<LedgerTick>;
}

export interface LedgerMaintenanceOptions {
  readonly usage: Pick<UsageRepository, 'ledgerMonths' | 'prepareMonths' | 'dropMonth'>;
  /** Months whose closed periods' raw events are closed: closePeriod's own `closedAt`. */
  readonly closedAt: (period: string) => Promise<Date | null>;
  /** QUARRY_LEDGER_RETENTION_MONTHS: the current month and this many before it keep raw events. */
  readonly retentionMonths: number;
  readonly logger: Logger;
  readonly now?: () => Date;
}

export function createLedgerMaintenance(options: LedgerMaintenanceOptions): LedgerMaintenance {
  const now = options.now ?? (() => new Date());
  return {
    async tick() {
      const current = periodOf(now());
      const wanted = Array.from({ length: MONTHS_AHEAD + 1 }, (_, k) => addMonths(current, k));
      const created = await options.usage.prepareMonths(wanted);
      if (created.length > 0) options.logger.info({ months: created }, 'ledger partitions created');
      // Older than the retention and closed: a month still open keeps its events until it closes.
      const oldestKept = addMonths(current, -options.retentionMonths);
      const dropped: string[] = [];
      for (const month of await options.usage.ledgerMonths()) {
        if (month >= oldestKept) break;
        if ((await options.closedAt(month)) === null) continue;
        if (await options.usage.dropMonth(month)) dropped.push(month);
      }
      if (dropped.length > 0) options.logger.info({ months: dropped }, 'raw usage events dropped');
      return { created, dropped };
    },
  };
}
