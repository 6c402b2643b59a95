// A key's `last_used_at`, kept without a write per call: the keys used since the last flush are
// remembered in a set (one add on the hot path) and written in one UPDATE every `intervalMs`, so
// the time shown is at most that much older than the last use. The last flush runs at close.
import type { ApiKeyRepository } from '../store/api-key-repository.js';

export interface KeyUsage {
  /** Notes that the key was used now. */
  record(keyId: string): void;
  /** Writes what was noted so far (also on the timer). */
  flush(): Promise<void>;
  /** Stops the timer and flushes. */
  close(): Promise<void>;
}

export interface KeyUsageOptions {
  readonly keys: Pick<ApiKeyRepository, 'markUsed'>;
  /** How often the noted keys are written (default 10 s). */
  readonly intervalMs?: number;
  readonly onError?: (error: unknown) => void;
}

/** At most this many keys are held between flushes; past it a flush starts at once. */
const MAX_PENDING = 10_000;

export function createKeyUsage(options: KeyUsageOptions): KeyUsage {
  let pending = new Set<string>();
  let writing: Promise<void> = Promise.resolve();
  const flush = () => {
    if (pending.size === 0) return writing;
    const batch = [...pending];
    pending = new Set();
    writing = writing
      .then(() => options.keys.markUsed(batch))
      .catch((error: unknown) => options.onError?.(error));
    return writing;
  };
  const timer = setInterval(() => void flush(), options.intervalMs ?? 10_000);
  timer.unref();
  return {
    record(keyId) {
      pending.add(keyId);
      if (pending.size >= MAX_PENDING) void flush();
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
