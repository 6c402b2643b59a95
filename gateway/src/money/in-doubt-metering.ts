// Charges whose outcome the store did not tell us. A usage write whose connection failed after
// the statement was sent (the store reset or stopped answering mid-write) may have committed
// unheard: answering the call with an error then could leave an event for a call never served,
// and answering 200 could serve a call without its event. Neither is allowed, so such a write is
// asked again, with the same request id, until the store answers: the ledger's key is the
// request id and repeating a charge replays it (counted once), so the answer it gives is the
// truth either way. Meanwhile the caller waits, up to `maxWaitMs`; only past that is it answered
// 503, and the request id logged at error level for the operator (that event, if it exists, then
// belongs to a call answered with an error). A write that failed before anything was sent (the
// store refused the connection) was not made, and fails at once.
//
// Wraps a Metering without changing it: only the final writes of served calls (`chargeServed`,
// `commit`) are retried; a reservation in doubt fails the call (its pending event, if any, is
// released by the reaper and never charged).
import { isStoreUnavailable } from '../errors/store-error.js';
import type { Metering, PendingCharge } from './metering.js';

export interface InDoubtOptions {
  /** How long a caller may wait for a write in doubt to be settled (default 30,000 ms). */
  readonly maxWaitMs?: number;
  /** First pause between attempts; doubles up to 1 s (default 100 ms). */
  readonly retryBaseMs?: number;
  readonly logger: { error(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function settleInDoubt(inner: Metering, options: InDoubtOptions): Metering {
  const maxWaitMs = options.maxWaitMs ?? 30_000;
  const baseMs = options.retryBaseMs ?? 100;

  /**
   * Runs `write`; once it failed in doubt, asks again until the store answers or time is up. One
   * `.catch` on the way of a write that succeeds (a cache hit's charge): no async frame.
   */
  function settled<T>(requestId: string, write: () => Promise<T>): Promise<T> {
    return write().catch((error: unknown) => askAgain(requestId, error, write));
  }

  async function askAgain<T>(requestId: string, error: unknown, write: () => Promise<T>): Promise<T> {
    if (!isStoreUnavailable(error) || !error.inDoubt) throw error;
    options.logger.warn({ request_id: requestId }, 'usage write in doubt: asking the store again');
    const deadline = performance.now() + maxWaitMs;
    let delay = baseMs;
    let last: unknown = error;
    while (performance.now() + delay < deadline) {
      await sleep(delay);
      delay = Math.min(delay * 2, 1_000);
      try {
        return await write();
      } catch (retryError) {
        // The store answered (a refusal, a conflict): that is the outcome.
        if (!isStoreUnavailable(retryError)) throw retryError;
        last = retryError;
      }
    }
    options.logger.error(
      { request_id: requestId, waited_ms: maxWaitMs },
      'usage write still in doubt: the call is answered 503; if its event exists, it was not served',
    );
    throw last;
  }

  return {
    async begin(principal, entry, requestId) {
      const pending = await inner.begin(principal, entry, requestId);
      const wrapped: PendingCharge = {
        credits: pending.credits,
        reserved: pending.reserved,
        commit(latencyMs, completion) {
          let first = true;
          return settled(requestId, () => {
            if (first) {
              first = false;
              return pending.commit(latencyMs, completion);
            }
            // A reserved call's commit is idempotent; a charged-after call's commit is the same
            // write as a cache hit's charge, which replays by request id.
            return pending.reserved
              ? pending.commit(latencyMs, completion)
              : inner.chargeServed(principal, entry, requestId, latencyMs, completion);
          });
        },
        release: () => pending.release(),
      };
      return wrapped;
    },
    chargeServed: (principal, entry, requestId, latencyMs, completion) =>
      settled(requestId, () => inner.chargeServed(principal, entry, requestId, latencyMs, completion)),
    creditsOf: (principal, entry) => inner.creditsOf(principal, entry),
    drain: () => inner.drain(),
    stats: () => inner.stats(),
  };
}
