// analytic.failing / analytic.recovered with an injected clock, on the real store (PGlite):
// failures over the 5-minute window past the owner's threshold turn the analytic failing once,
// however many instances see it; failures older than the window no longer count; a second
// instance seeing the same change writes nothing.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import { createPgliteClient } from '../store/pglite-client.js';
import type { SqlClient } from '../store/sql-client.js';
import { count, createAnalyticHealth, HEALTH_WINDOW_MS, newWindow } from './analytic-health.js';

let sql: SqlClient;
let store: ControlPlaneStore;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  sql = await createPgliteClient();
  await migrate(sql);
  store = createControlPlaneStore(sql, {
    secretBox: createSecretBox({ keys: { k: randomBytes(32) }, current: 'k' }),
  });
});
afterAll(() => sql.close());

const events = async (ownerId: string) =>
  (
    await sql.query<{ type: string; payload: { failures: number; calls: number } }>(
      'SELECT type, payload FROM webhook_events WHERE account_id = $1 ORDER BY created_at, id',
      [ownerId],
    )
  ).map((e) => e.type);

describe('analytic health alerts', () => {
  it('turns failing past the threshold within the window, recovers under it, each once', async () => {
    const owner = await store.accounts.create({ email: 'h@example.com', name: 'h' });
    await store.webhooks.setAlerts(owner.id, { usageThresholds: [80], errorRatePercent: 40 });
    let now = Date.UTC(2026, 10, 27, 12);
    const clock = () => now;
    const entry = { analyticId: 'ana_h', name: 'sales', ownerId: owner.id };
    const a = createAnalyticHealth({ sql, repository: store.webhooks, logger, now: clock, minCalls: 5 });
    const b = createAnalyticHealth({ sql, repository: store.webhooks, logger, now: clock, minCalls: 5 });
    // 6 good calls, then failures a second apart: 4 of 10 (40%) is not past 40%, 5 of 11 is.
    for (let i = 0; i < 6; i++) await a.record(entry, false);
    for (let i = 0; i < 4; i++) {
      now += 1_000;
      await a.record(entry, true);
    }
    expect(await events(owner.id)).toEqual([]);
    await a.record(entry, true);
    expect(await events(owner.id)).toEqual(['analytic.failing']);
    // Another instance seeing failures too writes nothing more.
    for (let i = 0; i < 6; i++) await b.record(entry, true);
    expect(await events(owner.id)).toEqual(['analytic.failing']);
    // Five minutes on, the old calls are out of the window: good calls alone recover it.
    now += HEALTH_WINDOW_MS + 1_000;
    for (let i = 0; i < 5; i++) await a.record(entry, false);
    expect(await events(owner.id)).toEqual(['analytic.failing', 'analytic.recovered']);
    const [failing] = await sql.query<{ payload: Record<string, unknown> }>(
      "SELECT payload FROM webhook_events WHERE account_id = $1 AND type = 'analytic.failing'",
      [owner.id],
    );
    expect(failing?.payload).toMatchObject({
      analytic: 'sales',
      calls: 11,
      failures: 5,
      threshold_percent: 40,
    });
  });
});

describe("an analytic's window", () => {
  it('sums exactly the calls and failures of the last 300 seconds, whatever the clock does', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // Mostly small steps, some long silences, and a clock that goes back a little.
            step: fc.oneof(
              fc.integer({ min: 0, max: 3 }),
              fc.integer({ min: 250, max: 700 }),
              fc.constant(-2),
            ),
            failed: fc.boolean(),
          }),
          { maxLength: 400 },
        ),
        (calls) => {
          const w = newWindow();
          const seen: { second: number; failed: boolean }[] = [];
          let second = 1_800_000_000;
          let newest = Number.NEGATIVE_INFINITY;
          for (const { step, failed } of calls) {
            second += step;
            count(w, second, failed);
            seen.push({ second, failed });
            newest = Math.max(newest, second);
            // The window as of the newest second seen: (newest - 300, newest].
            const inside = seen.filter((c) => c.second > newest - HEALTH_WINDOW_MS / 1000);
            expect(w.sumCalls).toBe(inside.length);
            expect(w.sumFailures).toBe(inside.filter((c) => c.failed).length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
