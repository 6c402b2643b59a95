// Cross-instance invalidation: polls the change log about once a second and hands each new
// change to a callback (evict a cached key, reload an analytic, close a connection's pool).
// Polling works the same on PGlite and PostgreSQL; it starts at the newest id when started,
// because a fresh instance has nothing cached to invalidate.
//
// On PostgreSQL, ids are taken at insert but become visible at commit, so id 7 can appear
// after 8 was already seen. The feed remembers skipped ids for `gapTimeoutMs` and asks for
// them again; a gap still empty after that was a rolled-back transaction.
import type { ChangeEvent, ChangeLogRepository } from './change-log-repository.js';

/** Options for {@link createChangeFeed}. */
export interface ChangeFeedOptions {
  readonly changes: ChangeLogRepository;
  /** Called once per change; a throw is reported to `onError` and skipped. */
  readonly onChange: (event: ChangeEvent) => void;
  /** Time between polls (default 1000 ms). */
  readonly intervalMs?: number;
  /** How long a skipped id is waited for (default 60,000 ms). */
  readonly gapTimeoutMs?: number;
  /** Called when a poll or a callback fails; the feed keeps running. */
  readonly onError?: (error: unknown) => void;
}

/** A running poller. */
export interface ChangeFeed {
  /** The highest change id handed to `onChange` (or the starting point). */
  readonly lastSeenId: number;
  /** Polls now instead of waiting for the timer (tests, or right after a local write). */
  poll(): Promise<void>;
  /** Stops polling; resolves after any poll in flight has finished. */
  stop(): Promise<void>;
}

const PAGE = 1000;
// A jump this large means a sequence restart or bulk load, not in-flight transactions.
const MAX_TRACKED_GAP = 10_000;

/** Starts polling; resolves once the starting id is known. */
export async function createChangeFeed(options: ChangeFeedOptions): Promise<ChangeFeed> {
  const { changes, onChange, onError = () => {} } = options;
  const gapTimeoutMs = options.gapTimeoutMs ?? 60_000;
  let lastSeenId = await changes.latestId();
  const gaps = new Map<number, number>(); // skipped id → when it was first skipped
  let running: Promise<void> | undefined;
  let stopped = false;

  const deliver = (event: ChangeEvent) => {
    try {
      onChange(event);
    } catch (error) {
      onError(error);
    }
  };

  const pollOnce = async () => {
    const now = Date.now();
    for (const [id, since] of gaps) if (now - since > gapTimeoutMs) gaps.delete(id);
    for (;;) {
      const events = await changes.since(lastSeenId, { limit: PAGE, alsoIds: [...gaps.keys()] });
      for (const event of events) {
        if (gaps.delete(event.id)) {
          deliver(event);
        } else if (event.id > lastSeenId) {
          if (event.id - lastSeenId <= MAX_TRACKED_GAP) {
            for (let id = lastSeenId + 1; id < event.id; id += 1) gaps.set(id, now);
          }
          lastSeenId = event.id;
          deliver(event);
        }
      }
      if (events.length < PAGE || stopped) return;
    }
  };

  // One poll at a time: a slow database must not stack overlapping polls.
  const poll = () => {
    running ??= pollOnce()
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const timer = setInterval(() => void poll(), options.intervalMs ?? 1000);
  timer.unref();

  return {
    get lastSeenId() {
      return lastSeenId;
    },
    poll,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
