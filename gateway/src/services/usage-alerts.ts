// The spending alerts (docs/webhooks.md): `usage.threshold` when an account's month passes one of
// its thresholds (percent of the plan's credits; Pay as you Go: of the budget), `quota.exhausted`
// and `budget.reached` when a call is refused for want of them. Metering hands every counted
// decision's counter here (money/metering.ts `onCounted`), from what its batch already returned:
// the hot path gains no store round trip. Work starts only when a counter is at or past a
// threshold this instance has not yet seen written; the event is then written with a dedupe key
// (account, month, threshold), so it happens once whichever instance and however many calls see
// it, and an instance that restarts writes nothing twice. The alert is written just after the
// batch that crossed it, not inside it: a process that dies in between leaves it to the
// account's next call, which finds the counter still past the threshold.
import type { CounterObservation } from '../money/metering.js';
import type { Logger } from '../observability/logger.js';
import type { AlertSettings, WebhookRepository } from '../store/webhook-repository.js';
import { createAlertSettingsMemo } from './alert-settings.js';

/** Most alerts remembered as written (then the memo starts over). */
const MAX_REMEMBERED = 10_000;

export interface UsageAlertsOptions {
  readonly repository: WebhookRepository;
  readonly logger: Logger;
  /** Called after an event is written (this instance's deliverer sends it at once). */
  readonly onEmitted?: () => void;
}

export interface UsageAlerts {
  observe(observation: CounterObservation): void;
}

const usd = (microUsd: number) => Math.round(microUsd / 10_000) / 100;

export function createUsageAlerts(options: UsageAlertsOptions): UsageAlerts {
  const { repository, logger } = options;
  // Alerts known written: `account period kind`.
  const written = new Set<string>();
  const settingsOf = createAlertSettingsMemo(repository);

  /** Whether a threshold at or under `percent` is not yet known written (the usual call: none). */
  function anyNew(o: CounterObservation, percent: number, thresholds: readonly number[]): boolean {
    for (const threshold of thresholds) {
      if (percent < threshold) return false;
      if (!written.has(`${o.accountId} ${o.period} usage.threshold ${threshold}`)) return true;
    }
    return false;
  }

  async function write(key: string, event: Parameters<WebhookRepository['emit']>[0]): Promise<void> {
    if (written.has(key)) return;
    if (written.size >= MAX_REMEMBERED) written.clear();
    written.add(key);
    try {
      const id = await repository.emit(event);
      if (id !== undefined) options.onEmitted?.();
    } catch (error) {
      // Not remembered: the account's next call tries again.
      written.delete(key);
      logger.warn({ err: error, alert: key }, 'writing a usage alert failed');
    }
  }

  async function check(
    o: CounterObservation,
    percent: number,
    thresholds: Promise<AlertSettings>,
  ): Promise<void> {
    const { usageThresholds } = await thresholds;
    const budgeted = o.budgetMicroUsd !== null;
    for (const threshold of usageThresholds) {
      if (percent < threshold) break;
      const key = `${o.accountId} ${o.period} usage.threshold ${threshold}`;
      if (written.has(key)) continue;
      await write(key, {
        accountId: o.accountId,
        type: 'usage.threshold',
        dedupeKey: `usage.threshold:${o.accountId}:${o.period}:${threshold}`,
        data: {
          period: o.period,
          threshold_percent: threshold,
          basis: budgeted ? 'budget' : 'credits',
          credits_used: o.usedMillicredits / 1000,
          credits_limit: o.limitCredits,
          spent_usd: budgeted ? usd(o.usedMicroUsd) : null,
          budget_usd: budgeted ? usd(o.budgetMicroUsd ?? 0) : null,
        },
      });
    }
  }

  return {
    observe(o) {
      const budgeted = o.budgetMicroUsd !== null;
      const whole = budgeted ? (o.budgetMicroUsd ?? 0) : o.limitCredits === null ? 0 : o.limitCredits * 1000;
      if (whole <= 0 && !o.refused) return;
      const used = budgeted ? o.usedMicroUsd : o.usedMillicredits;
      const percent = whole > 0 ? (used * 100) / whole : 100;
      if (o.refused) {
        const kind = budgeted ? 'budget.reached' : 'quota.exhausted';
        void write(`${o.accountId} ${o.period} ${kind}`, {
          accountId: o.accountId,
          type: kind,
          dedupeKey: `${kind}:${o.accountId}:${o.period}`,
          data: budgeted
            ? { period: o.period, spent_usd: usd(o.usedMicroUsd), budget_usd: usd(o.budgetMicroUsd ?? 0) }
            : {
                period: o.period,
                credits_used: o.usedMillicredits / 1000,
                credits_limit: o.limitCredits ?? 0,
              },
        });
      }
      // Under 1% (the lowest threshold there can be): nothing to look at. Past it, the account's
      // thresholds are read at most once a minute, and each is written once.
      if (percent < 1) return;
      const known = settingsOf(o.accountId, Date.now());
      // Thresholds at hand and every one passed already written: nothing to do, no promise made.
      if (known.known !== undefined && !anyNew(o, percent, known.known.usageThresholds)) return;
      void check(o, percent, known.value).catch((error) =>
        logger.warn({ err: error }, 'checking usage alerts failed'),
      );
    },
  };
}
