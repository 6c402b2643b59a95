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
import type { AlertSettings, WebhookRepository } from '../store/webhook-repository.js';
import { createAlertSettingsMemo } from './alert-settings.js';

export const HEALTH_WINDOW_MS = 5 * 60_000;
const BUCKET_MS = 1_000;
/** One bucket a second over the window: slot `second % SLOTS` holds `second`. */
const SLOTS = HEALTH_WINDOW_MS / BUCKET_MS;
const DONE: Promise<void> = Promise.resolve();

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

/**
 * An analytic's calls and failures over the window: a ring of per-second buckets and their
 * running sums, so a call costs the same whether the window holds one second or three hundred
 * (it used to walk every bucket on every call).
 */
export interface HealthWindow {
  readonly seconds: Float64Array;
  readonly calls: Uint32Array;
  readonly failures: Uint32Array;
  /** The newest second counted; buckets of seconds ≤ `newest - SLOTS` are out of the sums. */
  newest: number;
  sumCalls: number;
  sumFailures: number;
  failing: boolean | undefined;
  busy: boolean;
}

/** A window with no call in it (exported for its test). */
export function newWindow(): HealthWindow {
  return {
    seconds: new Float64Array(SLOTS).fill(-1),
    calls: new Uint32Array(SLOTS),
    failures: new Uint32Array(SLOTS),
    newest: Number.NEGATIVE_INFINITY,
    sumCalls: 0,
    sumFailures: 0,
    failing: undefined,
    busy: false,
  };
}

/** Empties the bucket in `slot` (out of the sums) and gives it to `second`. */
function reuse(w: HealthWindow, slot: number, second: number): void {
  w.sumCalls -= w.calls[slot] as number;
  w.sumFailures -= w.failures[slot] as number;
  w.calls[slot] = 0;
  w.failures[slot] = 0;
  w.seconds[slot] = second;
}

/** Counts one call at `second`, first letting the seconds that left the window go (exported for its test). */
export function count(w: HealthWindow, second: number, failed: boolean): void {
  if (second > w.newest) {
    if (second - w.newest >= SLOTS) {
      // The whole window went by since the last call.
      w.seconds.fill(-1);
      w.calls.fill(0);
      w.failures.fill(0);
      w.sumCalls = 0;
      w.sumFailures = 0;
    } else {
      // Each second that left the window since the last call.
      for (let gone = w.newest - SLOTS + 1; gone <= second - SLOTS; gone++) {
        const slot = ((gone % SLOTS) + SLOTS) % SLOTS;
        if (w.seconds[slot] === gone) reuse(w, slot, -1);
      }
    }
    w.newest = second;
  } else if (second <= w.newest - SLOTS) {
    return; // A clock that went back past the window: nothing of it counts any more.
  }
  const slot = ((second % SLOTS) + SLOTS) % SLOTS;
  if (w.seconds[slot] !== second) reuse(w, slot, second);
  w.calls[slot] = (w.calls[slot] as number) + 1;
  w.sumCalls++;
  if (failed) {
    w.failures[slot] = (w.failures[slot] as number) + 1;
    w.sumFailures++;
  }
}

export function createAnalyticHealth(options: AnalyticHealthOptions): AnalyticHealth {
  const now = options.now ?? Date.now;
  const minCalls = options.minCalls ?? 5;
  const windows = new Map<string, HealthWindow>();
  const thresholdOf = createAlertSettingsMemo(options.repository);

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

  /** Turns the analytic failing or recovered if its rate says so; the call that saw it waits. */
  async function decide(
    entry: Pick<CatalogEntry, 'analyticId' | 'name' | 'ownerId'>,
    w: HealthWindow,
    threshold: AlertSettings | Promise<AlertSettings>,
  ): Promise<void> {
    const { errorRatePercent } = await threshold;
    const calls = w.sumCalls;
    const failures = w.sumFailures;
    const rate = calls === 0 ? 0 : (failures * 100) / calls;
    const failingNow = rate > errorRatePercent;
    if (w.failing === failingNow || w.busy) return;
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
      options.logger.warn({ err: error, analytic: entry.name }, 'recording an analytic health change failed');
    } finally {
      w.busy = false;
    }
  }

  return {
    record(entry, failed) {
      const t = now();
      let w = windows.get(entry.analyticId);
      if (w === undefined) {
        if (windows.size > 10_000) windows.clear();
        w = newWindow();
        windows.set(entry.analyticId, w);
      }
      count(w, Math.floor(t / BUCKET_MS), failed);
      if (w.sumCalls < minCalls || w.busy) return DONE;
      const threshold = thresholdOf(entry.ownerId, t);
      const known = threshold.known;
      // The usual call: settings at hand and nothing changed, so no promise and no store.
      if (known !== undefined && w.failing === (w.sumFailures * 100) / w.sumCalls > known.errorRatePercent) {
        return DONE;
      }
      return decide(entry, w, known ?? threshold.value);
    },
  };
}
