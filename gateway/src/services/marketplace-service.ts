// The marketplace for routes: public search and listing pages (each with the price a call pays
// now and any scheduled rise), and an owner's listings (publish, unpublish, read).
import type { AnalyticDefinition } from '../store/analytic-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type {
  Listing,
  ListingDetail,
  ListingFields,
  ListingQuery,
  MarketplaceListing,
} from '../store/listing-repository.js';
import { type PriceSchedule, pendingRise, priceAt } from '../store/price-schedule.js';

/** The price a definition charges, in credits a call (1 when the stored value is unusable). */
export function definitionPrice(definition: AnalyticDefinition): number {
  const price = definition.price;
  return typeof price === 'number' && Number.isSafeInteger(price) && price >= 0 ? price : 1;
}

/** How a listing shows its price: in force now, and a scheduled rise with its date (else nulls). */
export function priceJson(pricing: PriceSchedule, nowMs = Date.now()) {
  const rise = pendingRise(pricing, nowMs);
  return {
    price: priceAt(pricing, nowMs),
    scheduled_price: rise === undefined ? null : rise.price,
    price_effective_at: rise === undefined ? null : new Date(rise.at).toISOString(),
  };
}

export interface MarketplaceService {
  /** A page of public listings, each with its analytic's current price. */
  search(query: ListingQuery): Promise<{
    readonly items: readonly { readonly listing: MarketplaceListing; readonly pricing: PriceSchedule }[];
    readonly total: number;
  }>;
  /** One public listing; null when nothing by that name is listed. */
  listing(name: string): Promise<ListingDetail | null>;
  ownerListing(ownerId: string, analyticId: string): Promise<Listing | null>;
  publish(ownerId: string, analyticId: string, fields: ListingFields): Promise<Listing>;
  unpublish(ownerId: string, analyticId: string): Promise<Listing>;
}

export function createMarketplaceService(store: ControlPlaneStore): MarketplaceService {
  return {
    async search(query) {
      const page = await store.listings.search(query);
      const items = await Promise.all(
        page.items.map(async (listing) => {
          const analytic = await store.analytics.get(listing.name);
          return { listing, pricing: analytic === null ? { price: listing.price } : analytic.pricing };
        }),
      );
      return { items, total: Number(page.total) };
    },
    listing: (name) => store.listings.get(name),
    ownerListing: (ownerId, analyticId) => store.listings.getForOwner(ownerId, analyticId),
    publish: (ownerId, analyticId, fields) => store.listings.publish(ownerId, analyticId, fields),
    unpublish: (ownerId, analyticId) => store.listings.unpublish(ownerId, analyticId),
  };
}
