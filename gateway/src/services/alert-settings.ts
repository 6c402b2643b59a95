// An account's alert settings (PUT /v1/account/alerts), as the usage alerts and the analytic
// health read them for every counted call and warehouse query: read from the store at most once
// a minute per account (a failed read counts as the defaults), and the read's answer kept beside
// its promise, so the usual call decides without waiting on anything.
import { type AlertSettings, DEFAULT_ALERTS, type WebhookRepository } from '../store/webhook-repository.js';

/** How long an account's settings are kept before they are read again. */
const SETTINGS_TTL_MS = 60_000;
/** Most accounts remembered (then the memo starts over). */
const MAX_REMEMBERED = 10_000;

/** One account's settings: the read, and its answer once it came. */
export interface RememberedSettings {
  readonly at: number;
  readonly value: Promise<AlertSettings>;
  known: AlertSettings | undefined;
}

/** `settingsOf(accountId, now)`: the account's settings read within the last minute, or read now. */
export function createAlertSettingsMemo(
  repository: Pick<WebhookRepository, 'alerts'>,
): (accountId: string, now: number) => RememberedSettings {
  const settings = new Map<string, RememberedSettings>();
  return (accountId, now) => {
    const remembered = settings.get(accountId);
    if (remembered !== undefined && now - remembered.at < SETTINGS_TTL_MS) return remembered;
    if (settings.size >= MAX_REMEMBERED) settings.clear();
    const value = repository.alerts(accountId).catch(() => DEFAULT_ALERTS);
    const fresh: RememberedSettings = { at: now, value, known: undefined };
    void value.then((read) => {
      fresh.known = read;
    });
    settings.set(accountId, fresh);
    return fresh;
  };
}
