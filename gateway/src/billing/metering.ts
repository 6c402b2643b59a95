// Metering on the query path (DESIGN.md §4): before the warehouse is asked, one call of the
// plan's monthly quota is reserved atomically in the store (exact across any number of
// instances) together with a pending usage event keyed by the request id; a served call commits
// the event before the answer leaves, a failed one releases both, so a failed call is never
// charged and never counted. Instances killed between the two leave pending events that the
// reaper releases.
//
// Reservations and commits are group-committed (billing/group-commit.ts): concurrent calls share
// one store transaction per batch, and each call still answers only once its own event is
// durable. A call answered from the cache is charged with one write that reserves and finalises
// its event together (`chargeServed`).

import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../http/api-error.js';
import type { Principal } from '../http/app-env.js';
import type {
  CommitRequest,
  CommitResult,
  ReserveRequest,
  ReserveResult,
  UsageRepository,
} from '../store/usage-repository.js';
import { periodOf, secondsToPeriodEnd } from './billing-period.js';
import { createGroupCommit, type GroupCommitStats } from './group-commit.js';
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

/** A call charged after it was served (from the cache). */
export interface ChargedCall {
  readonly credits: number;
  readonly remaining: number | null;
  readonly limit: number | null;
  readonly resetSeconds: number;
}

export interface Metering {
  /** Reserves the call or throws QUOTA_EXCEEDED (with `retry_after` = seconds to the period end). */
  begin(principal: Principal, entry: CatalogEntry, requestId: string): Promise<MeteredCall>;
  /**
   * Charges a call whose answer is already at hand (a cache hit): reserves and finalises its
   * usage event in one durable write, or throws QUOTA_EXCEEDED and records nothing.
   */
  chargeServed(
    principal: Principal,
    entry: CatalogEntry,
    requestId: string,
    latencyMs: number,
  ): Promise<ChargedCall>;
  /** Waits until every write submitted so far is durable (shutdown). */
  drain(): Promise<void>;
  /** Batching counters, for metrics and the benchmark. */
  stats(): { readonly reserves: GroupCommitStats; readonly commits: GroupCommitStats };
}

export interface MeteringOptions {
  readonly usage: UsageRepository;
  readonly plans: PlanCatalog;
  readonly now?: () => Date;
  /** Most calls per group-committed write (default 512). */
  readonly maxBatch?: number;
}

export function createMetering(options: MeteringOptions): Metering {
  const now = options.now ?? (() => new Date());
  const { usage, plans } = options;
  // Several reserve batches in flight: the store decides most of them optimistically, locking an
  // account's counter only for its final bump, so batches of one account overlap.
  const reserves = createGroupCommit<ReserveRequest, ReserveResult>({
    write: (items) => usage.reserveMany(items),
    maxBatch: options.maxBatch,
    maxInFlight: 4,
  });
  const commits = createGroupCommit<CommitRequest, CommitResult>({
    write: (items) => usage.commitMany(items),
    maxBatch: options.maxBatch,
  });

  /** Reserves (or, with `served`, charges) one call; QUOTA_EXCEEDED or CONFLICT when refused. */
  async function reserve(principal: Principal, entry: CatalogEntry, requestId: string, served?: number) {
    const at = now();
    const period = periodOf(at);
    const resetSeconds = secondsToPeriodEnd(at);
    const marketplace = principal.origin === 'marketplace';
    const plan = plans.resolve(principal.plan);
    const limit = marketplace ? null : plan.included_calls;
    const credits = marketplace ? 0 : entry.definition.price;
    const result = await reserves.submit({
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
      ...(served === undefined ? {} : { served: { latencyMs: served } }),
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
    return { credits, remaining: result.remaining, limit, resetSeconds };
  }

  return {
    async begin(principal, entry, requestId) {
      const reserved = await reserve(principal, entry, requestId);
      let settled = false;
      return {
        ...reserved,
        async commit(latencyMs) {
          settled = true;
          const outcome = await commits.submit({ requestId, latencyMs: Math.round(latencyMs * 1000) / 1000 });
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
    chargeServed: (principal, entry, requestId, latencyMs) => reserve(principal, entry, requestId, latencyMs),
    async drain() {
      await Promise.all([reserves.drain(), commits.drain()]);
    },
    stats: () => ({ reserves: reserves.stats(), commits: commits.stats() }),
  };
}
