// A process-wide budget of warehouse result bytes in flight. One result is bounded by
// QUARRY_MAX_RESULT_BYTES, and a connection's pool bounds its queries in flight, but several
// connections answering near the bound at once could still outgrow the capped heap and kill the
// process with every call on it. Each warehouse query takes its expected size from the budget
// before it runs and gives it back once its result has been shaped; a query that does not fit
// waits (first come, first served) for at most `waitMs`, then fails with 503 SOURCE_UNAVAILABLE
// and a retry_after. A query always fits when nothing else is in flight, so one result as large
// as the bound is never refused here.
//
// The expected size of an analytic's result is the size of its last one (rows × the first row's
// JSON + 64 bytes a row), and the bound itself until it has answered once: small results
// cost the budget little, so only calls of large ones queue.
import { ApiError } from '../errors/api-error.js';

export interface ResultBudgetOptions {
  /** Bytes of results in flight at once (QUARRY_RESULT_BYTES_IN_FLIGHT). */
  readonly limitBytes: number;
  /** How long a query may wait for room before 503 (default 5,000 ms). */
  readonly waitMs?: number;
}

export interface ResultBudgetStats {
  readonly limitBytes: number;
  readonly inFlightBytes: number;
  readonly waiting: number;
}

export interface ResultBudget {
  /**
   * Takes `bytes` from the budget: the release function at once when it fits, else a promise of
   * it, rejected with SOURCE_UNAVAILABLE after the wait (QUERY_TIMEOUT when `signal` aborts it).
   * Call the release function once (later calls do nothing).
   */
  take(bytes: number, signal?: AbortSignal): (() => void) | Promise<() => void>;
  stats(): ResultBudgetStats;
}

interface Waiter {
  readonly bytes: number;
  readonly resolve: (release: () => void) => void;
  readonly reject: (error: unknown) => void;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

export function createResultBudget(options: ResultBudgetOptions): ResultBudget {
  const limit = Math.max(1, options.limitBytes);
  const waitMs = options.waitMs ?? 5_000;
  let inFlight = 0;
  const queue: Waiter[] = [];

  const fits = (bytes: number) => inFlight === 0 || inFlight + bytes <= limit;

  function grant(bytes: number): () => void {
    inFlight += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inFlight -= bytes;
      serve();
    };
  }

  function serve(): void {
    while (queue.length > 0) {
      const next = queue[0] as Waiter;
      if (next.done) {
        queue.shift();
        continue;
      }
      if (!fits(next.bytes)) return;
      queue.shift();
      next.done = true;
      clearTimeout(next.timer);
      next.resolve(grant(next.bytes));
    }
  }

  return {
    take(bytes, signal) {
      if (queue.length === 0 && fits(bytes)) return grant(bytes);
      return new Promise<() => void>((resolve, reject) => {
        const waiter: Waiter = { bytes, resolve, reject, timer: undefined, done: false };
        const give = (error: unknown) => {
          if (waiter.done) return;
          waiter.done = true;
          clearTimeout(waiter.timer);
          reject(error);
          serve();
        };
        waiter.timer = setTimeout(
          () =>
            give(
              new ApiError(
                'SOURCE_UNAVAILABLE',
                'The gateway is answering many large results right now; retry shortly.',
                { retryAfter: 1 },
              ),
            ),
          waitMs,
        );
        // The caller left (or the coalesced load lost its last caller): as a cancelled query.
        signal?.addEventListener(
          'abort',
          () => give(new ApiError('QUERY_TIMEOUT', 'The query was cancelled before it finished.')),
          { once: true },
        );
        queue.push(waiter);
      });
    },
    stats: () => ({
      limitBytes: limit,
      inFlightBytes: inFlight,
      waiting: queue.filter((w) => !w.done).length,
    }),
  };
}
