// The catalog resolves a source name to the analytic's current version, its connection and its
// template parsed for that connection's dialect. Entries are cached in process and dropped when
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
  readonly ownerId: string;
  readonly visibility: Visibility;
  readonly sharedWith: readonly string[];
  readonly definition: AnalyticDefinition;
  readonly connectionId: string;
  readonly connectionType: string;
  readonly template: SqlTemplate;
  /** What a call pays (priceAt): the analytic's, not this version's `definition.price`. */
  readonly pricing: PriceSchedule;
}

export interface Catalog {
  /** The current version of the named analytic, or undefined when none exists. */
  resolve(name: string): Promise<CatalogEntry | undefined>;
  /** The cached entry for `name`, synchronously; undefined when not cached (or cached absent). */
  peek(name: string): CatalogEntry | undefined;
  /** Drops cached entries (all, or one name). */
  invalidate(name?: string): void;
}
