// When and how long the client waits before retrying a failed call: bounded attempts,
// exponential backoff with full jitter, and never sooner than the gateway's `retry_after`.
import {
  NetworkError,
  type QuarryError,
  RateLimitError,
  SourceUnavailableError,
  TimeoutError,
} from './errors.js';

/** How the client retries. `retries: 0` turns retries off. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  readonly retries: number;
  /** The first backoff's upper bound in ms; it doubles per retry (default 250). */
  readonly baseDelayMs: number;
  /**
   * The largest backoff in ms (default 30 000). A `retry_after` longer than this is not waited
   * out: the error is thrown at once, with its `retryAfter` for the caller to act on.
   */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { retries: 3, baseDelayMs: 250, maxDelayMs: 30_000 };

const RETRYABLE_STATUSES = new Set([502, 503, 504]);

/**
 * Whether an error may be retried. A rate-limited call was refused before any work, so it is
 * retried whatever its method; unavailable sources, network errors and 502/503/504 only on
 * idempotent calls. Never any other 4xx: not `QUOTA_EXCEEDED` (it resets monthly), nor a
 * client timeout (the caller's time is spent).
 */
export function isRetryable(error: QuarryError, idempotent: boolean): boolean {
  if (error instanceof RateLimitError) return true;
  if (error instanceof TimeoutError) return false;
  if (!idempotent) return false;
  return (
    error instanceof SourceUnavailableError ||
    error instanceof NetworkError ||
    RETRYABLE_STATUSES.has(error.status)
  );
}

/**
 * Milliseconds to wait before retry number `retry` (0 for the first), or undefined when the
 * error must be thrown instead. Full jitter: a random wait up to `baseDelayMs × 2^retry`
 * (capped at `maxDelayMs`), added on top of `retry_after` when the gateway sent one, so
 * clients refused together do not come back together and none comes back early.
 */
export function retryDelayMs(
  error: QuarryError,
  retry: number,
  idempotent: boolean,
  policy: RetryOptions,
  random: () => number = Math.random,
): number | undefined {
  if (retry >= policy.retries || !isRetryable(error, idempotent)) return undefined;
  const floorMs = (error.retryAfter ?? 0) * 1000;
  if (floorMs > policy.maxDelayMs) return undefined;
  const capMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return floorMs + random() * capMs;
}
