// Metering on the query path (DESIGN.md §4): before the warehouse is asked, one call of the
// plan's monthly quota is reserved atomically in the store (exact across any number of
// instances) together with a pending usage event keyed by the request id; a served call commits
// the event before the answer leaves, a failed one releases both, so a failed call is never
// charged and never counted. Instances killed between the two leave pending events that the
// reaper releases.

import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../http/api-error.js';
import type { Principal } from '../http/app-env.js';
import type { UsageRepository } from '../store/usage-repository.js';
import { periodOf, secondsToPeriodEnd } from './billing-period.js';
import type { PlanCatalog } from './plan-catalog.js';

export interface MeteredCall {
  /** Credits this call spends (0 from the marketplace). */
  readonly credits: number;
  /** Calls left in the period after this one; null when the plan has no cap. */
  readonly remaining: number | null;
  readonly limit: number | null;
  /** Seconds until the period (and so the quota) resets. */
  readonly resetSeconds: number;
  /** Makes the usage event final; resolves once it is durable. */
  commit(latencyMs: number): Promise<void>;
  /** The call failed: the event and the quota unit are given back. Idempotent. */
  release(): Promise<void>;
}

export interface Metering {
  /** Reserves the call or throws QUOTA_EXCEEDED (with `retry_after` = seconds to the period end). */
  begin(principal: Principal, entry: CatalogEntry, requestId: string): Promise<MeteredCall>;
}

export interface MeteringOptions {
  readonly usage: UsageRepository;
  readonly plans: PlanCatalog;
  readonly now?: () => Date;
}

export function createMetering(options: MeteringOptions): Metering {
  const now = options.now ?? (() => new Date());
  const { usage, plans } = options;

  return {
    async begin(principal, entry, requestId) {
      const at = now();
      const period = periodOf(at);
      const resetSeconds = secondsToPeriodEnd(at);
      const marketplace = principal.origin === 'marketplace';
      const plan = plans.resolve(principal.plan);
      const limit = marketplace ? null : plan.included_calls;
      const credits = marketplace ? 0 : entry.definition.price;
      const result = await usage.reserve({
        requestId,
        accountId: principal.accountId,
        keyId: marketplace ? null : principal.keyId,
        period,
        limit,
        analyticId: entry.analyticId,
        analyticName: entry.name,
        version: entry.version,
        ownerId: entry.ownerId,
        origin: principal.origin,
        credits,
      });
      if (!result.ok) {
        if (result.reason === 'quota_exceeded') {
          throw new ApiError(
            'QUOTA_EXCEEDED',
            `The ${plan.name} plan's ${limit ?? 0} calls for ${period} are used up; the quota resets at the start of next month (UTC).`,
            { retryAfter: resetSeconds },
          );
        }
        throw new ApiError('CONFLICT', `The billing period ${period} is closed.`);
      }
      let settled = false;
      return {
        credits,
        remaining: result.remaining,
        limit,
        resetSeconds,
        async commit(latencyMs) {
          settled = true;
          const outcome = await usage.commit(requestId, { latencyMs: Math.round(latencyMs), status: 'ok' });
          // 'missing': the reservation was reaped (the call outlived the reaper's bound). The
          // answer must not leave without its event, so the call fails uncharged.
          if (outcome === 'missing') {
            throw new ApiError('INTERNAL', 'The call could not be recorded; it was not charged.');
          }
        },
        async release() {
          if (settled) return;
          settled = true;
          await usage.release(requestId);
        },
      };
    },
  };
}
