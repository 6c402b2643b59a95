// `analytic.failing` and `analytic.recovered` (docs/webhooks.md): each instance counts its
// warehouse queries per analytic over the last 5 minutes (one-second buckets; the clock is
// injectable), and when an analytic with at least `minCalls` queries in the window fails more than
// its owner's threshold (PUT /v1/account/alerts, default 50%), or a failing one is back under it,
// it records the change in the store. The change is a conditional update of `analytic_health`
// and the event is written in the same transaction, so an analytic turns failing (or recovered)
// once whichever instance saw it first.
import type { CatalogEntry } from '../catalog/catalog.js';
import type { Logger } from '../observability/logger.js';
import type { SqlClient } from '../store/sql-client.js';
import { type AlertSettings, DEFAULT_ALERTS, type WebhookRepository } from '../store/webhook-repository.js';

export const HEALTH_WINDOW_MS = 5 * 60_000;
const BUCKET_MS = 1_000;
const SETTINGS_TTL_MS = 60_000;

export interface AnalyticHealthOptions {
  readonly sql: SqlClient;
  readonly repository: WebhookRepository;
  readonly logger: Logger;
  /** Queries an analytic needs in the window before its error rate counts (default 5). */
  readonly minCalls?: number;
  readonly now?: () => number;
  readonly onEmitted?: () => void;
}

export interface AnalyticHealth {
  /** One warehouse query of `entry` ended; resolves once any change it caused is written. */
  record(entry: Pick<CatalogEntry, 'analyticId' | 'name' | 'ownerId'>, failed: boolean): Promise<void>;
}

interface Window {
  // Ring of per-second buckets: [second, calls, failures].
  readonly buckets: Map<number, { calls: number; failures: number }>;
  failing: boolean | undefined;
  busy: boolean;
}

export function createAnalyticHealth(options: AnalyticHealthOptions): AnalyticHealth {
  const now = options.now ?? Date.now;
  const minCalls = options.minCalls ?? 5;
  const windows = new Map<string, Window>();
  const settings = new Map<string, { at: number; value: Promise<AlertSettings> }>();

  function thresholdOf(ownerId: string): Promise<AlertSettings> {
    const t = now();
    const known = settings.get(ownerId);
    if (known !== undefined && t - known.at < SETTINGS_TTL_MS) return known.value;
    if (settings.size > 10_000) settings.clear();
    const value = options.repository.alerts(ownerId).catch(() => DEFAULT_ALERTS);
    settings.set(ownerId, { at: t, value });
    return value;
  }

  function totals(w: Window, t: number): { calls: number; failures: number } {
    const oldest = Math.floor((t - HEALTH_WINDOW_MS) / BUCKET_MS);
    let calls = 0;
    let failures = 0;
    for (const [second, b] of w.buckets) {
      if (second <= oldest) w.buckets.delete(second);
      else {
        calls += b.calls;
        failures += b.failures;
      }
    }
    return { calls, failures };
  }

  async function change(
    entry: Pick<CatalogEntry, 'analyticId' | 'name' | 'ownerId'>,
    failing: boolean,
    data: Record<string, unknown>,
  ): Promise<boolean> {
    return options.sql.transaction(async (tx) => {
      const rows = await tx.query(
        `INSERT INTO analytic_health (analytic_id, failing) VALUES ($1, $2)
         ON CONFLICT (analytic_id) DO UPDATE SET failing = EXCLUDED.failing, changed_at = now()
           WHERE analytic_health.failing IS DISTINCT FROM EXCLUDED.failing
         RETURNING 1`,
        [entry.analyticId, failing],
      );
      if (rows.length === 0) return false;
      await options.repository.emit(
        { accountId: entry.ownerId, type: failing ? 'analytic.failing' : 'analytic.recovered', data },
        tx,
      );
      return true;
    });
  }

  return {
    async record(entry, failed) {
      const t = now();
      let w = windows.get(entry.analyticId);
      if (w === undefined) {
        if (windows.size > 10_000) windows.clear();
        w = { buckets: new Map(), failing: undefined, busy: false };
        windows.set(entry.analyticId, w);
      }
      const second = Math.floor(t / BUCKET_MS);
      const bucket = w.buckets.get(second) ?? { calls: 0, failures: 0 };
      bucket.calls += 1;
      if (failed) bucket.failures += 1;
      w.buckets.set(second, bucket);
      const { calls, failures } = totals(w, t);
      if (calls < minCalls || w.busy) return;
      const { errorRatePercent } = await thresholdOf(entry.ownerId);
      const rate = (failures * 100) / calls;
      const failingNow = rate > errorRatePercent;
      if (w.failing === failingNow) return;
      // Not known yet on this instance, and healthy: nothing to tell (a first failing is news).
      if (w.failing === undefined && !failingNow) {
        w.failing = false;
        return;
      }
      w.busy = true;
      try {
        const changed = await change(entry, failingNow, {
          analytic: entry.name,
          error_rate_percent: Math.round(rate * 10) / 10,
          threshold_percent: errorRatePercent,
          calls,
          failures,
          window_seconds: HEALTH_WINDOW_MS / 1000,
        });
        w.failing = failingNow;
        if (changed) options.onEmitted?.();
      } catch (error) {
        options.logger.warn(
          { err: error, analytic: entry.name },
          'recording an analytic health change failed',
        );
      } finally {
        w.busy = false;
      }
    },
  };
}
