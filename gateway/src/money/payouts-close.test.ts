// One instance never runs two closes of one month at once: its own scheduler's tick, finding the
// month's payouts pending while the operator's close on this instance is still at work, used to
// re-take its own claim and close the month a second time beside it. Money stayed safe (invoice
// and payout claims), but the operator's close then reported only what it did itself (a Pay as
// you Go invoice the tick raised was missing from its totals).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PeriodInvoices } from './payments-service.js';
import type { PayoutRepository } from './payout-repository.js';
import { createPayoutsService } from './payouts.js';

const logger = pino({ level: 'silent' });

/** The claim rules of period_closes (payout-repository.ts), in memory. */
function claims() {
  const rows = new Map<string, { by: string; until: number; finished: boolean }>();
  return {
    async claimClose(period: string, instance: string, until: Date) {
      const row = rows.get(period);
      if (row !== undefined && (row.finished || (row.until >= Date.now() && row.by !== instance)))
        return false;
      rows.set(period, { by: instance, until: until.getTime(), finished: false });
      return true;
    },
    async finishClose(period: string) {
      const row = rows.get(period);
      if (row !== undefined) row.finished = true;
    },
    async closeFinished(period: string) {
      return rows.get(period)?.finished ?? false;
    },
  };
}

describe('closing a month on one instance', () => {
  it("runs once: the scheduler's tick does not close again beside the operator's close", async () => {
    const period = '2026-10';
    let invoicing = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const repository = {
      ...claims(),
      // The close's statements left the month's payouts pending: the tick looks for those.
      async periodsWithPending() {
        return [period];
      },
      async payoutsOf() {
        return [];
      },
      async announceHeld() {},
    } as unknown as PayoutRepository;
    const payouts = createPayoutsService({
      provider: undefined,
      kind: 'sandbox',
      repository,
      statements: {
        closePeriod: async () => ({ period, closedAt: new Date(), alreadyClosed: false }) as never,
      },
      invoicePeriod: async (): Promise<PeriodInvoices> => {
        invoicing++;
        await gate;
        return { invoiced: 2, paid: 1, failed: 1, totalCents: 100 };
      },
      minimumCents: 0,
      closeGraceMs: 0,
      autoClose: false,
      leaseMs: 60_000,
      publicUrl: 'http://localhost',
      logger,
    });
    const operators = payouts.closeNow(period);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(invoicing).toBe(1);
    // The tick, while the operator's close waits on its invoices.
    const ticked = payouts.tick();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(invoicing).toBe(1);
    release();
    expect(await ticked).toBeNull();
    expect((await operators).invoices).toEqual({ invoiced: 2, paid: 1, failed: 1, totalCents: 100 });
    expect(invoicing).toBe(1);
  });
});
