// Deleting a connection that analytics use. Without `force` it is refused (409 naming them), so
// an owner cannot break published listings by accident; with it, the connection goes, and the
// listings of the analytics on it are taken off the marketplace first: their callers then get a
// 404 naming the missing connection (catalog), never a 503 inviting retries. The analytics stay
// (with their versions): deploying them on another connection, or connecting it again under the
// same name, brings them back; their listings are published again by hand.
import { ApiError } from '../errors/api-error.js';
import type { AnalyticsService } from './analytics-service.js';
import type { ConnectionService } from './connection-service.js';
import type { MarketplaceService } from './marketplace-service.js';

export interface ConnectionRemoval {
  readonly deleted: string;
  /** The owner's analytics that were on the connection (they answer 404 until redeployed). */
  readonly analytics: readonly string[];
  /** Those of them whose listing was taken off the marketplace. */
  readonly unlisted: readonly string[];
}

export interface ConnectionRemovalDeps {
  readonly connections: Pick<ConnectionService, 'get' | 'delete'>;
  readonly analytics: Pick<AnalyticsService, 'list'>;
  readonly marketplace: Pick<MarketplaceService, 'ownerListing' | 'unpublish'>;
}

export async function removeConnection(
  deps: ConnectionRemovalDeps,
  accountId: string,
  id: string,
  options: { readonly force: boolean },
): Promise<ConnectionRemoval> {
  const connection = await deps.connections.get(accountId, id);
  const users = (await deps.analytics.list(accountId)).filter(
    (a) => a.definition.connection === connection.name,
  );
  const names = users.map((a) => a.name);
  if (users.length > 0 && !options.force) {
    throw new ApiError(
      'CONFLICT',
      `The connection "${connection.name}" is used by ${names.join(', ')}. Deploy them on another connection first, change its config in place (PATCH), or delete it with ?force=true, which takes their listings off the marketplace.`,
      { details: names.map((name) => ({ field: 'analytics', message: name })) },
    );
  }
  const unlisted: string[] = [];
  for (const analytic of users) {
    const listing = await deps.marketplace.ownerListing(accountId, analytic.id);
    if (listing !== null && listing.unpublishedAt === null) {
      await deps.marketplace.unpublish(accountId, analytic.id);
      unlisted.push(analytic.name);
    }
  }
  await deps.connections.delete(accountId, id);
  return { deleted: id, analytics: names, unlisted };
}
