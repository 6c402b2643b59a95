// Whether a try-token's analytic may be previewed now: listed on the marketplace with its owner's
// previews on. A token outlives an unpublish, or previews turned off, by up to its 5 minutes, so
// every preview call asks; the answer per name is kept in memory until the change feed reports a
// listing or analytic change (on any instance: `invalidate`), and at most `ttlMs` in case a change
// was missed. A load that began before an invalidation is not kept.
import { LRUCache } from 'lru-cache';
import type { ListingRepository } from '../store/listing-repository.js';

export interface PreviewListings {
  /** Whether `name` is listed with previews on; synchronous when the answer is kept. */
  previewable(name: string): boolean | Promise<boolean>;
  /** Forgets every kept answer (a listing or an analytic changed somewhere). */
  invalidate(): void;
}

export interface PreviewListingsOptions {
  /** Upper bound on how long an answer is trusted (default 60 s, as the catalog's entries). */
  readonly ttlMs?: number;
  readonly maxEntries?: number;
}

export function createPreviewListings(
  listings: Pick<ListingRepository, 'listed'>,
  options: PreviewListingsOptions = {},
): PreviewListings {
  const kept = new LRUCache<string, boolean>({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? 60_000,
  });
  let generation = 0;

  async function load(name: string): Promise<boolean> {
    const started = generation;
    const [listing] = await listings.listed([name]);
    const answer = listing?.previews === true;
    if (generation === started) kept.set(name, answer);
    return answer;
  }

  return {
    previewable(name) {
      return kept.get(name) ?? load(name);
    },
    invalidate() {
      generation++;
      kept.clear();
    },
  };
}
