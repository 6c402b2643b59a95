// The catalog resolves a source name to the analytic's current version (or the version a caller
// pinned, `name@3`), its connection and its template parsed for that connection's dialect. Entries are cached in process and dropped when
// the change feed says an analytic or connection changed (on this or any other instance).
import type { SqlTemplate } from '@quarry/sdk-connector';
import type { Visibility } from '../store/analytic-repository.js';
import type { PriceSchedule } from '../store/price-schedule.js';
import type { AnalyticDefinition } from './analytic-definition.js';

/** Everything the query path needs about one analytic version. */
export interface CatalogEntry {
  readonly analyticId: string;
  readonly name: string;
  readonly version: number;
  /** The analytic's current version when this entry was loaded (`version` unless pinned). */
  readonly currentVersion: number;
  /** The owner's deprecation of this version, in ms since the epoch; undefined when none. */
  readonly deprecation?: { readonly deprecatedAt: number; readonly sunsetAt: number } | undefined;
  readonly ownerId: string;
  readonly visibility: Visibility;
  readonly sharedWith: readonly string[];
  readonly definition: AnalyticDefinition;
  readonly connectionId: string;
  readonly connectionType: string;
  readonly template: SqlTemplate;
  /** What a call of this version pays (priceAt): not its `definition.price` (store/analytic-repository.ts). */
  readonly pricing: PriceSchedule;
}

export interface Catalog {
  /**
   * The named analytic at its current version, or at `version` when given; undefined when the
   * analytic or that version does not exist.
   */
  resolve(name: string, version?: number): Promise<CatalogEntry | undefined>;
  /** The cached entry for `name` (at `version`), synchronously; undefined when not cached (or cached absent). */
  peek(name: string, version?: number): CatalogEntry | undefined;
  /** Drops cached entries (all, or one name at every version). */
  invalidate(name?: string): void;
}
