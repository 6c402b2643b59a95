// Marketplace listings: an owner publishes one of their analytics with a title, description,
// category, tags, price and example params; unpublishing keeps the row so re-publishing is an
// upsert. The marketplace shows only published listings of live, public analytics, searched by
// text and category and sorted by popularity (distinct paying callers in the last 30 days, then
// their paid calls) or newest.

import { StoreError } from '../errors/store-error.js';
import { type AnalyticDefinition, pricingOf } from './analytic-repository.js';
import { createChangeLogRepository } from './change-log-repository.js';
import { definitionOf } from './definition-codec.js';
import type { PriceSchedule } from './price-schedule.js';
import type { SqlExecutor } from './sql-client.js';

/** What an owner sets when publishing. */
export interface ListingFields {
  readonly title: string;
  readonly description?: string;
  readonly category: string;
  readonly tags?: readonly string[];
  /** Credits per call, a non-negative integer. */
  readonly price: number;
  readonly exampleParams?: Readonly<Record<string, unknown>>;
  /** Whether callers may preview it for free (try-tokens); default true. */
  readonly previews?: boolean;
}

/** A listing as stored. */
export interface Listing {
  readonly analyticId: string;
  /** The analytic's name: how callers and the marketplace address it. */
  readonly name: string;
  readonly ownerId: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly price: number;
  readonly exampleParams: Readonly<Record<string, unknown>>;
  /** Whether callers may preview it for free (try-tokens). */
  readonly previews: boolean;
  /** When it was (last) published; re-publishing after an unpublish moves it. */
  readonly publishedAt: Date;
  /** Set while unpublished. */
  readonly unpublishedAt: Date | null;
  readonly updatedAt: Date;
}

/** A listing on the marketplace, with its popularity. */
export interface MarketplaceListing extends Listing {
  /**
   * Paid calls of the analytic in the last 30 days: on a paying plan, by someone other than its
   * owner. Owners' own calls, previews and Free-plan calls cost nothing to make, so they would
   * let anyone climb the ranking.
   */
  readonly calls30d: number;
  /** Distinct accounts that made those paid calls. */
  readonly callers30d: number;
  /** The owner's account name, as the marketplace shows it (owner text: never HTML). */
  readonly ownerName: string;
}

/** A marketplace listing with its analytic's current definition (for the param schema). */
export interface ListingDetail extends MarketplaceListing {
  readonly version: number;
  readonly definition: AnalyticDefinition;
  /** What a call pays, now and after a scheduled rise. */
  readonly pricing: PriceSchedule;
}

/** Input of {@link ListingRepository.search}. */
export interface ListingQuery {
  /** Matched case-insensitively as a substring of the title, description, name or a tag. */
  readonly text?: string;
  /** Exact category, case-insensitive. */
  readonly category?: string;
  /** Default `popular`. */
  readonly sort?: 'popular' | 'newest';
  /** 1–100, default 20. */
  readonly limit?: number;
  readonly offset?: number;
}

/** One page of search results. */
export interface ListingPage {
  readonly items: readonly MarketplaceListing[];
  /** Matches in all pages. */
  readonly total: number;
}

/** Listing rows. */
export interface ListingRepository {
  /** Creates or updates the listing of the owner's live analytic; NOT_FOUND when it is not theirs. */
  publish(ownerId: string, analyticId: string, fields: ListingFields): Promise<Listing>;
  /** Takes the listing off the marketplace (repeating it changes nothing); NOT_FOUND when there is none. */
  unpublish(ownerId: string, analyticId: string): Promise<Listing>;
  /** The owner's listing of an analytic, published or not. */
  getForOwner(ownerId: string, analyticId: string): Promise<Listing | null>;
  /** A published listing of a live public analytic, by analytic name; null otherwise. */
  get(name: string): Promise<ListingDetail | null>;
  /** The published listings of live public analytics among `names` (any order; no popularity). */
  listed(names: readonly string[]): Promise<readonly Listing[]>;
  search(query?: ListingQuery): Promise<ListingPage>;
}

interface ListingRow {
  readonly analytic_id: string;
  readonly name: string;
  readonly owner_id: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: string[];
  readonly price: number;
  readonly example_params: Record<string, unknown>;
  readonly previews: boolean;
  readonly published_at: Date;
  readonly unpublished_at: Date | null;
  readonly updated_at: Date;
}

type MarketRow = ListingRow & {
  readonly calls_30d: number;
  readonly callers_30d: number;
  readonly owner_name: string;
};

const COLUMNS = `l.analytic_id, a.name, l.owner_id, l.title, l.description, l.category, l.tags, l.price,
                 l.example_params, l.previews, l.published_at, l.unpublished_at, l.updated_at`;

// From the rollups of migration 017, never the raw events: paid calls by analytic and day, and
// the paying callers counted on their last paid day; the last 30 UTC days, today included.
const POPULARITY = `LEFT JOIN LATERAL (
    SELECT (SELECT coalesce(sum(r.calls), 0) FROM usage_owner_days r
             WHERE r.analytic_id = l.analytic_id AND r.origin = 'paid'
               AND r.day > (now() AT TIME ZONE 'UTC')::date - 30)::integer AS calls_30d,
           (SELECT coalesce(sum(c.callers), 0) FROM usage_analytic_caller_days c
             WHERE c.analytic_id = l.analytic_id AND c.day > (now() AT TIME ZONE 'UTC')::date - 30)::integer
             AS callers_30d
  ) p ON true`;

const OWNER_NAME = '(SELECT o.name FROM accounts o WHERE o.id = l.owner_id) AS owner_name';

const ON_MARKET = `l.unpublished_at IS NULL AND a.deleted_at IS NULL AND a.visibility = 'public'`;

function toListing(row: ListingRow): Listing {
  return {
    analyticId: row.analytic_id,
    name: row.name,
    ownerId: row.owner_id,
    title: row.title,
    description: row.description,
    category: row.category,
    tags: row.tags,
    price: row.price,
    exampleParams: row.example_params,
    previews: row.previews,
    publishedAt: row.published_at,
    unpublishedAt: row.unpublished_at,
    updatedAt: row.updated_at,
  };
}

const toMarketListing = (row: MarketRow): MarketplaceListing => ({
  ...toListing(row),
  calls30d: row.calls_30d,
  callers30d: row.callers_30d,
  ownerName: row.owner_name,
});

/** `text` as a LIKE pattern matching it anywhere, its wildcards taken literally. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Builds the listing repository over `sql`. */
export function createListingRepository(sql: SqlExecutor): ListingRepository {
  const getForOwner = async (ownerId: string, analyticId: string) => {
    const [row] = await sql.query<ListingRow>(
      `SELECT ${COLUMNS} FROM listings l JOIN analytics a ON a.id = l.analytic_id
        WHERE l.analytic_id = $1 AND l.owner_id = $2`,
      [analyticId, ownerId],
    );
    return row === undefined ? null : toListing(row);
  };

  return {
    async publish(ownerId, analyticId, fields) {
      if (!Number.isSafeInteger(fields.price) || fields.price < 0) {
        throw new RangeError(`price must be a non-negative integer, got ${fields.price}`);
      }
      // The SELECT proves the analytic is live and the owner's; nothing is written otherwise.
      // Recorded in the change log with it: open MCP sessions show the listing's title and text.
      const rows = await sql.transaction(async (tx) => {
        const written = await tx.query(
          `INSERT INTO listings AS l (analytic_id, owner_id, title, description, category, tags, price, example_params, previews)
         SELECT a.id, a.account_id, $3, $4, $5, $6, $7, $8::jsonb, $9 FROM analytics a
          WHERE a.id = $1 AND a.account_id = $2 AND a.deleted_at IS NULL
         ON CONFLICT (analytic_id) DO UPDATE
            SET title = excluded.title, description = excluded.description, category = excluded.category,
                tags = excluded.tags, price = excluded.price, example_params = excluded.example_params,
                previews = excluded.previews,
                published_at = CASE WHEN l.unpublished_at IS NULL THEN l.published_at ELSE now() END,
                unpublished_at = NULL, updated_at = now()
         RETURNING l.analytic_id`,
          [
            analyticId,
            ownerId,
            fields.title,
            fields.description ?? '',
            fields.category,
            [...(fields.tags ?? [])],
            fields.price,
            JSON.stringify(fields.exampleParams ?? {}),
            fields.previews ?? true,
          ],
        );
        if (written.length > 0) await createChangeLogRepository(tx).append('listing', analyticId);
        return written;
      });
      if (rows.length === 0) throw new StoreError('NOT_FOUND', `analytic ${analyticId} not found`);
      return (await getForOwner(ownerId, analyticId))!;
    },

    async unpublish(ownerId, analyticId) {
      await sql.transaction(async (tx) => {
        const unpublished = await tx.query(
          `UPDATE listings SET unpublished_at = now(), updated_at = now()
            WHERE analytic_id = $1 AND owner_id = $2 AND unpublished_at IS NULL RETURNING analytic_id`,
          [analyticId, ownerId],
        );
        if (unpublished.length > 0) await createChangeLogRepository(tx).append('listing', analyticId);
      });
      const listing = await getForOwner(ownerId, analyticId);
      if (listing === null) throw new StoreError('NOT_FOUND', `no listing for analytic ${analyticId}`);
      return listing;
    },

    getForOwner,

    async get(name) {
      const [row] = await sql.query<
        MarketRow & {
          version: number;
          definition: AnalyticDefinition;
          a_price: number | null;
          next_price: number | null;
          next_price_at: Date | null;
        }
      >(
        `SELECT ${COLUMNS}, p.calls_30d, p.callers_30d, ${OWNER_NAME}, v.version, v.definition,
                a.price AS a_price, a.next_price, a.next_price_at
           FROM listings l
           JOIN analytics a ON a.id = l.analytic_id
           JOIN analytic_versions v ON v.analytic_id = a.id AND v.version = a.current_version
           ${POPULARITY}
          WHERE a.name = $1 AND ${ON_MARKET}`,
        [name],
      );
      if (row === undefined) return null;
      return {
        ...toMarketListing(row),
        version: row.version,
        definition: definitionOf(row.definition),
        pricing: pricingOf({ ...row, price: row.a_price }),
      };
    },

    async listed(names) {
      if (names.length === 0) return [];
      const rows = await sql.query<ListingRow>(
        `SELECT ${COLUMNS} FROM listings l JOIN analytics a ON a.id = l.analytic_id
          WHERE a.name = ANY ($1::text[]) AND ${ON_MARKET}`,
        [[...names]],
      );
      return rows.map(toListing);
    },

    async search(query = {}) {
      const limit = Math.min(100, Math.max(1, Math.trunc(query.limit ?? 20)));
      const offset = Math.max(0, Math.trunc(query.offset ?? 0));
      const text = query.text?.trim() ? containsPattern(query.text.trim()) : null;
      const from = 'FROM listings l JOIN analytics a ON a.id = l.analytic_id';
      const where = `WHERE ${ON_MARKET}
          AND ($1::text IS NULL OR l.title ILIKE $1 OR l.description ILIKE $1 OR a.name ILIKE $1
               OR EXISTS (SELECT 1 FROM unnest(l.tags) AS t (tag) WHERE t.tag ILIKE $1))
          AND ($2::text IS NULL OR lower(l.category) = lower($2))`;
      const params = [text, query.category ?? null];
      const order =
        (query.sort ?? 'popular') === 'popular'
          ? 'p.callers_30d DESC, p.calls_30d DESC, l.published_at DESC, a.name'
          : 'l.published_at DESC, a.name';
      const rows = await sql.query<MarketRow>(
        `SELECT ${COLUMNS}, p.calls_30d, p.callers_30d, ${OWNER_NAME} ${from} ${POPULARITY} ${where}
          ORDER BY ${order} LIMIT $3 OFFSET $4`,
        [...params, limit, offset],
      );
      const [count] = await sql.query<{ n: number }>(
        `SELECT count(*)::integer AS n ${from} ${where}`,
        params,
      );
      return { items: rows.map(toMarketListing), total: count?.n ?? 0 };
    },
  };
}
