// Failed calls after the warehouse did the work (issue 29; docs/security.md, "Failed calls"):
// a call that timed out, came back too large or was failed by the warehouse is free for its
// caller, yet it kept the owner's warehouse busy. Its warehouse time is added to the caller's
// window (failed-call-window.ts) and recorded for the owner's statement; past the budget, the
// caller's next call that would run a query is refused (429 FAILED_CALLS_THROTTLED) before it
// reserves anything. Cache hits never ask: they run nothing. An owner's calls of its own
// analytics are neither throttled nor recorded: it is its own warehouse.
import { isConnectorError } from '@quarry/sdk-connector';
import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import type { ErrorLogger } from '../errors/error-payload.js';
import type { FailedCallWindow } from '../rate-limit/failed-call-window.js';
import type { FailedCallRepository } from '../store/failed-call-repository.js';

export interface FailedCalls {
  /** Throws FAILED_CALLS_THROTTLED while the caller's failed calls are over the budget. */
  admit(principal: Principal, entry: CatalogEntry): void | Promise<void>;
  /** Counts and records a call that failed after `warehouseMs` on the warehouse; never throws. */
  failed(
    principal: Principal,
    entry: CatalogEntry,
    requestId: string,
    error: unknown,
    warehouseMs: number,
  ): Promise<void>;
}

export interface FailedCallsDeps {
  readonly window: FailedCallWindow;
  readonly records: Pick<FailedCallRepository, 'record'>;
  readonly budgetSeconds: number;
  readonly windowSeconds: number;
  readonly logger: ErrorLogger;
}

/**
 * The API code of a failure that ran in the warehouse, or undefined for one that did not (the
 * source unreachable, its pool full, a circuit open, the read-only check, bad params).
 */
export function warehouseFailureCode(error: unknown): string | undefined {
  if (error instanceof ApiError)
    return error.code === 'RESULT_TOO_LARGE' || error.code === 'QUERY_TIMEOUT' ? error.code : undefined;
  if (!isConnectorError(error)) return undefined;
  switch (error.code) {
    case 'QUERY_TIMEOUT':
    case 'QUERY_ABORTED':
      return 'QUERY_TIMEOUT';
    case 'RESULT_TOO_LARGE':
      return 'RESULT_TOO_LARGE';
    case 'QUERY_FAILED':
      return error.driverCode === 'READ_ONLY' ? undefined : 'UPSTREAM_ERROR';
    default:
      return undefined;
  }
}

const ownCall = (principal: Principal, entry: CatalogEntry) => principal.accountId === entry.ownerId;

export function createFailedCalls(deps: FailedCallsDeps): FailedCalls {
  const { window } = deps;
  const refuse = (seconds: number) => {
    if (seconds <= 0) return;
    throw new ApiError(
      'FAILED_CALLS_THROTTLED',
      `Your failed calls (timeouts, results too large, warehouse errors) used more than ${deps.budgetSeconds} s of owners' warehouse time in ${deps.windowSeconds} s: calls that would run a query wait until it is under. Cached answers are still served; nothing was run or charged.`,
      { retryAfter: Number(seconds.toFixed(3)) },
    );
  };
  return {
    admit(principal, entry) {
      if (ownCall(principal, entry)) return;
      const wait = window.lockedFor(principal.accountId);
      return wait instanceof Promise ? wait.then(refuse) : refuse(wait);
    },
    async failed(principal, entry, requestId, error, warehouseMs) {
      if (ownCall(principal, entry)) return;
      const code = warehouseFailureCode(error);
      if (code === undefined) return;
      try {
        await Promise.all([
          window.add(principal.accountId, warehouseMs),
          deps.records.record({
            requestId,
            ownerId: entry.ownerId,
            analyticId: entry.analyticId,
            analyticName: entry.name,
            accountId: principal.accountId,
            code,
            warehouseMs,
          }),
        ]);
      } catch (recordError) {
        deps.logger.warn({ err: recordError, request_id: requestId }, 'failed call not recorded');
      }
    },
  };
}
