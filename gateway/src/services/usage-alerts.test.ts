// The usage alerts on the real store (PGlite), fed the counters metering hands them: each
// threshold once per account and month (also from two instances, and after a restart), measured
// against the plan's credits or, on Pay as you Go, against the budget; quota.exhausted and
// budget.reached once a month; the account's own thresholds.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CounterObservation } from '../money/metering.js';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import { createPgliteClient } from '../store/pglite-client.js';
import type { SqlClient } from '../store/sql-client.js';
import { createUsageAlerts } from './usage-alerts.js';

let sql: SqlClient;
let store: ControlPlaneStore;
const logger = pino({ level: 'silent' });
const settle = () => new Promise((r) => setTimeout(r, 100));

beforeAll(async () => {
  sql = await createPgliteClient();
  await migrate(sql);
  store = createControlPlaneStore(sql, {
    secretBox: createSecretBox({ keys: { k: randomBytes(32) }, current: 'k' }),
  });
});
afterAll(() => sql.close());

const eventsOf = async (accountId: string) =>
  (
    await sql.query<{ type: string; payload: Record<string, unknown> }>(
      'SELECT type, payload FROM webhook_events WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    )
  ).map((e) => ({ type: e.type, ...e.payload }));

describe('usage alerts', () => {
  it("passes each of a plan's thresholds once, whichever instance sees it, and the quota once", async () => {
    const account = await store.accounts.create({ email: 'u1@example.com', name: 'u' });
    const one = createUsageAlerts({ repository: store.webhooks, logger });
    const two = createUsageAlerts({ repository: store.webhooks, logger });
    const at = (credits: number, refused = false): CounterObservation => ({
      accountId: account.id,
      period: '2026-11',
      limitCredits: 30,
      usedMillicredits: credits * 1000,
      budgetMicroUsd: null,
      usedMicroUsd: 0,
      refused,
    });
    for (let c = 1; c <= 30; c++) {
      one.observe(at(c));
      two.observe(at(c));
      await settle();
    }
    one.observe(at(30, true));
    two.observe(at(30, true));
    // A restarted instance remembers nothing: the store's dedupe keys hold.
    createUsageAlerts({ repository: store.webhooks, logger }).observe(at(30, true));
    await settle();
    expect(await eventsOf(account.id)).toEqual([
      expect.objectContaining({
        type: 'usage.threshold',
        threshold_percent: 50,
        credits_used: 15,
        basis: 'credits',
      }),
      expect.objectContaining({ type: 'usage.threshold', threshold_percent: 80, credits_used: 24 }),
      expect.objectContaining({ type: 'usage.threshold', threshold_percent: 100, credits_used: 30 }),
      expect.objectContaining({ type: 'quota.exhausted', credits_used: 30, credits_limit: 30 }),
    ]);
  });

  it("measures Pay as you Go against the budget, with the account's own thresholds", async () => {
    const account = await store.accounts.create({ email: 'u2@example.com', name: 'u' });
    await store.webhooks.setAlerts(account.id, { usageThresholds: [25, 90], errorRatePercent: 50 });
    const alerts = createUsageAlerts({ repository: store.webhooks, logger });
    const spent = (usd: number, refused = false): CounterObservation => ({
      accountId: account.id,
      period: '2026-11',
      limitCredits: null,
      usedMillicredits: usd * 2000,
      budgetMicroUsd: 10_000_000,
      usedMicroUsd: usd * 1_000_000,
      refused,
    });
    for (const usd of [1, 2, 3, 5, 8, 9, 10]) {
      alerts.observe(spent(usd));
      await settle();
    }
    alerts.observe(spent(10, true));
    await settle();
    expect(await eventsOf(account.id)).toEqual([
      expect.objectContaining({
        type: 'usage.threshold',
        threshold_percent: 25,
        basis: 'budget',
        spent_usd: 3,
        budget_usd: 10,
      }),
      expect.objectContaining({ type: 'usage.threshold', threshold_percent: 90, spent_usd: 9 }),
      expect.objectContaining({ type: 'budget.reached', spent_usd: 10, budget_usd: 10 }),
    ]);
  });
});
