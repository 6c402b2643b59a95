// Analytics: owners' named, parameterised queries. Names are global among live analytics
// (callers address them by name alone); every update adds a version and keeps the old ones,
// so a caller or an audit can still see exactly what ran. Deleting is soft, and the name stays
// its owner's (analytic_names, migration 007): integrations that call it must never reach another
// owner's SQL or price, so only the account that first used a name may create under it again.
// The definition (SQL, params, limits, …) is opaque JSON here: the catalog validates it.

import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import {
  type AccountBound,
  type AccountLimits,
  checkAccountBound,
  DEFAULT_ACCOUNT_LIMITS,
} from './account-limits.js';
import type { VersionDeprecation } from './analytic-version-repository.js';
import { pruneVersions } from './analytic-version-repository.js';
import { createChangeLogRepository } from './change-log-repository.js';
import { definitionOf, storedDefinition } from './definition-codec.js';
import { newId } from './new-id.js';
import { type PriceSchedule, schedulePrice } from './price-schedule.js';
import type { SqlExecutor } from './sql-client.js';
import { emitWebhookEvent } from './webhook-repository.js';

/** Who may call an analytic: everyone, its owner only, or its owner and an allow-list. */
export type Visibility = 'public' | 'private' | 'shared';

/** An analytic's definition as the owner deployed it. */
export type AnalyticDefinition = Readonly<Record<string, unknown>>;

/** An analytic at one version (the current one unless another was asked for). */
export interface Analytic {
  readonly id: string;
  /** The owner. */
  readonly accountId: string;
  readonly name: string;
  /** The version `definition` belongs to. */
  readonly version: number;
  readonly currentVersion: number;
  readonly definition: AnalyticDefinition;
  readonly visibility: Visibility;
  /** Account ids allowed when `visibility` is `shared`. */
  readonly sharedWith: readonly string[];
  /**
   * What a call of this version pays, now and after a scheduled rise (migrations 016, 024): not
   * the definition's `price`. The current version's is the analytic's; an older one keeps the
   * schedule it had when it was deployed (one deployed before migration 024: the analytic's).
   */
  readonly pricing: PriceSchedule;
  /** The owner's deprecation of this version, if any (never of the current one). */
  readonly deprecation: VersionDeprecation | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Input of {@link AnalyticRepository.create}. */
export interface NewAnalytic {
  readonly accountId: string;
  readonly name: string;
  readonly definition: AnalyticDefinition;
  /** Defaults to `private`. */
  readonly visibility?: Visibility;
  readonly sharedWith?: readonly string[];
  /** The first price, applied at once; default the definition's `price`. */
  readonly price?: number;
}

/** Input of {@link AnalyticRepository.update}: a new definition, and optionally new access. */
export interface AnalyticUpdate {
  readonly definition: AnalyticDefinition;
  readonly visibility?: Visibility;
  readonly sharedWith?: readonly string[];
  /**
   * The new price (default the definition's `price`): a rise is scheduled `priceNoticeMs` ahead
   * (default 0: at once), see store/price-schedule.ts.
   */
  readonly price?: number;
  readonly priceNoticeMs?: number;
  /** Now, in ms (tests); default Date.now(). */
  readonly nowMs?: number;
}

/** One kept version, for history listings. */
export interface AnalyticVersion {
  readonly version: number;
  readonly definition: AnalyticDefinition;
  /** What a call of this version pays (see {@link Analytic.pricing}). */
  readonly pricing: PriceSchedule;
  readonly deprecation: VersionDeprecation | undefined;
  readonly createdAt: Date;
}

/** Analytic rows. */
export interface AnalyticRepository {
  /**
   * Creates version 1; CONFLICT when another account holds the name (live, private or deleted:
   * one message for all, see {@link analyticNameTaken}) or the owner already has a live one.
   */
  create(input: NewAnalytic): Promise<Analytic>;
  /** Adds a version to the owner's analytic; NOT_FOUND when the owner has none of that name. */
  update(accountId: string, name: string, change: AnalyticUpdate): Promise<Analytic>;
  /** A live analytic by name at its current or the given version; null when either is missing. */
  get(name: string, options?: { readonly version?: number }): Promise<Analytic | null>;
  /** The owner's live analytics at their current versions, by name. */
  listByOwner(accountId: string): Promise<readonly Analytic[]>;
  /** Live analytics `accountId` may call (public, its own, shared with it), by name. */
  listVisibleTo(accountId: string): Promise<readonly Analytic[]>;
  /**
   * The account's agent tools (docs/mcp.md): its own live analytics and those it added
   * (account_tools) that it may still call, by name.
   */
  listToolsOf(accountId: string): Promise<readonly Analytic[]>;
  /** Every version of the owner's analytic, oldest first; NOT_FOUND when absent. */
  listVersions(accountId: string, name: string): Promise<readonly AnalyticVersion[]>;
  /** Soft-deletes the owner's analytic (the name stays the owner's); NOT_FOUND when absent. */
  delete(accountId: string, name: string): Promise<void>;
}

/**
 * The refusal of a name another account holds. Deliberately the same whether that account's
 * analytic is public, private or deleted, so the answer reveals no more than "taken".
 */
export function analyticNameTaken(name: string): StoreError {
  return new StoreError('CONFLICT', `The analytic name "${name}" is taken.`);
}

/** Whether `accountId` may call `analytic` (the same rule listVisibleTo applies in SQL). */
export function isVisibleTo(analytic: Analytic, accountId: string): boolean {
  return mayCall(analytic.accountId, analytic.visibility, analytic.sharedWith, accountId);
}

/** The visibility rule itself: the owner always; everyone when public; the allow-list when shared. */
export function mayCall(
  ownerId: string,
  visibility: Visibility,
  sharedWith: readonly string[],
  accountId: string,
): boolean {
  return (
    visibility === 'public' ||
    ownerId === accountId ||
    (visibility === 'shared' && sharedWith.includes(accountId))
  );
}

interface AnalyticRow {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly version: number;
  readonly current_version: number;
  readonly definition: AnalyticDefinition;
  readonly visibility: Visibility;
  readonly shared_with: string[];
  readonly price: number | null;
  readonly next_price: number | null;
  readonly next_price_at: Date | null;
  readonly v_price: number | null;
  readonly v_next_price: number | null;
  readonly v_next_price_at: Date | null;
  readonly deprecated_at: Date | null;
  readonly sunset_at: Date | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

const SELECT = `SELECT a.id, a.account_id, a.name, v.version, a.current_version, v.definition, a.visibility,
                       a.shared_with, a.price, a.next_price, a.next_price_at,
                       v.price AS v_price, v.next_price AS v_next_price, v.next_price_at AS v_next_price_at,
                       v.deprecated_at, v.sunset_at, a.created_at, a.updated_at
                  FROM analytics a JOIN analytic_versions v ON v.analytic_id = a.id`;
const CURRENT = 'v.version = a.current_version AND a.deleted_at IS NULL';

/** A definition's own price; 1 (the schema's default) when it has no usable one. */
function definitionPrice(definition: AnalyticDefinition): number {
  const price = definition.price;
  return typeof price === 'number' && Number.isSafeInteger(price) && price >= 0 ? price : 1;
}

/** An analytic row's price schedule (its definition's price for a row migration 016 left unpriced). */
export function pricingOf(
  row: Pick<AnalyticRow, 'price' | 'next_price' | 'next_price_at' | 'definition'>,
): PriceSchedule {
  const price = row.price ?? definitionPrice(row.definition);
  return row.next_price === null || row.next_price_at === null
    ? { price }
    : { price, nextPrice: row.next_price, nextPriceAt: row.next_price_at.getTime() };
}

/**
 * The schedule a call of one version pays: the analytic's for its current version (and for a
 * version deployed before migration 024, which has none of its own), else the version's own.
 */
function versionPricing(
  row: Pick<AnalyticRow, 'price' | 'next_price' | 'next_price_at' | 'definition'>,
  current: boolean,
  own: {
    readonly price: number | null;
    readonly nextPrice: number | null;
    readonly nextPriceAt: Date | null;
  },
): PriceSchedule {
  if (current || own.price === null) return pricingOf(row);
  return own.nextPrice === null || own.nextPriceAt === null
    ? { price: own.price }
    : { price: own.price, nextPrice: own.nextPrice, nextPriceAt: own.nextPriceAt.getTime() };
}

const deprecationOf = (row: {
  readonly deprecated_at: Date | null;
  readonly sunset_at: Date | null;
}): VersionDeprecation | undefined =>
  row.deprecated_at === null || row.sunset_at === null
    ? undefined
    : { deprecatedAt: row.deprecated_at, sunsetAt: row.sunset_at };

function toAnalytic(row: AnalyticRow): Analytic {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    version: row.version,
    currentVersion: row.current_version,
    definition: definitionOf(row.definition),
    visibility: row.visibility,
    sharedWith: row.shared_with,
    pricing: versionPricing(row, row.version === row.current_version, {
      price: row.v_price,
      nextPrice: row.v_next_price,
      nextPriceAt: row.v_next_price_at,
    }),
    deprecation: deprecationOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Builds the analytic repository over `sql`. */
export function createAnalyticRepository(
  sql: SqlExecutor,
  limits: AccountLimits = DEFAULT_ACCOUNT_LIMITS,
): AnalyticRepository {
  const names: AccountBound = {
    what: 'analytics (names held, deleted ones included)',
    max: limits.analytics,
    setting: 'QUARRY_MAX_ANALYTICS_PER_ACCOUNT',
    // Re-creating one of the account's own deleted names takes no new room.
    countSql: 'SELECT count(*)::int AS n FROM analytic_names WHERE account_id = $1 AND name <> $2',
  };
  const many = async (query: string, params: readonly unknown[]) =>
    (await sql.query<AnalyticRow>(query, params)).map(toAnalytic);

  const get = async (name: string, options: { readonly version?: number } = {}) => {
    const [row] = await sql.query<AnalyticRow>(
      options.version === undefined
        ? `${SELECT} WHERE a.name = $1 AND ${CURRENT}`
        : `${SELECT} WHERE a.name = $1 AND a.deleted_at IS NULL AND v.version = $2`,
      options.version === undefined ? [name] : [name, options.version],
    );
    return row === undefined ? null : toAnalytic(row);
  };

  return {
    create(input) {
      return withConstraintErrors(
        {
          // Only the holder reaches the insert, so a duplicate is the owner's own live analytic.
          conflict: `You already have an analytic named "${input.name}"; update it instead.`,
          missing: `account ${input.accountId} not found`,
        },
        () =>
          sql.transaction(async (tx) => {
            await checkAccountBound(tx, input.accountId, names, [input.name]);
            // The first account to use a name holds it for good. A concurrent claim waits on this
            // row's insert and, once it commits, does nothing: the SELECT then sees the holder.
            await tx.query(
              'INSERT INTO analytic_names (name, account_id) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING',
              [input.name, input.accountId],
            );
            const [holder] = await tx.query<{ readonly account_id: string }>(
              'SELECT account_id FROM analytic_names WHERE name = $1',
              [input.name],
            );
            if (holder?.account_id !== input.accountId) throw analyticNameTaken(input.name);
            const id = newId('ana');
            await tx.query(
              `INSERT INTO analytics (id, account_id, name, current_version, visibility, shared_with, price)
             VALUES ($1, $2, $3, 1, $4, $5, $6)`,
              [
                id,
                input.accountId,
                input.name,
                input.visibility ?? 'private',
                [...(input.sharedWith ?? [])],
                input.price ?? definitionPrice(input.definition),
              ],
            );
            await tx.query(
              'INSERT INTO analytic_versions (analytic_id, version, definition, price) VALUES ($1, 1, $2::jsonb, $3)',
              [id, storedDefinition(input.definition), input.price ?? definitionPrice(input.definition)],
            );
            await createChangeLogRepository(tx).append('analytic', input.name);
            return (await createAnalyticRepository(tx, limits).get(input.name))!;
          }),
      );
    },

    update(accountId, name, change) {
      return sql.transaction(async (tx) => {
        // The row lock serialises concurrent updates: versions never collide, and a price is
        // scheduled from the schedule it replaces, not from one another deploy is replacing.
        // The lock on the analytics row alone: joined to its version, a concurrent deploy's wait
        // would end with the join re-checked against the new current_version and no row found.
        const [locked] = await tx.query<
          Pick<AnalyticRow, 'id' | 'price' | 'next_price' | 'next_price_at' | 'current_version'>
        >(
          `SELECT id, price, next_price, next_price_at, current_version FROM analytics
            WHERE name = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE`,
          [name, accountId],
        );
        if (locked === undefined) throw new StoreError('NOT_FOUND', `analytic ${name} not found`);
        // Only a row migration 016 could not price falls back to its current definition's price.
        const [current] =
          locked.price === null
            ? await tx.query<Pick<AnalyticRow, 'definition'>>(
                'SELECT definition FROM analytic_versions WHERE analytic_id = $1 AND version = $2',
                [locked.id, locked.current_version],
              )
            : [];
        const pricing = schedulePrice(
          pricingOf({ ...locked, definition: current?.definition ?? {} }),
          change.price ?? definitionPrice(change.definition),
          change.nowMs ?? Date.now(),
          change.priceNoticeMs ?? 0,
        );
        const [row] = await tx.query<{ readonly id: string; readonly current_version: number }>(
          `UPDATE analytics
              SET current_version = current_version + 1, updated_at = now(),
                  visibility = coalesce($3, visibility), shared_with = coalesce($4, shared_with),
                  price = $5, next_price = $6, next_price_at = $7
            WHERE name = $1 AND account_id = $2 AND deleted_at IS NULL
        RETURNING id, current_version`,
          [
            name,
            accountId,
            change.visibility ?? null,
            change.sharedWith === undefined ? null : [...change.sharedWith],
            pricing.price,
            pricing.nextPrice ?? null,
            pricing.nextPriceAt === undefined ? null : new Date(pricing.nextPriceAt),
          ],
        );
        if (row === undefined) throw new StoreError('NOT_FOUND', `analytic ${name} not found`);
        // The version keeps this schedule when a later deploy supersedes it: a caller pinning it
        // pays what it was called at, and a later rise of the analytic never reaches it.
        await tx.query(
          `INSERT INTO analytic_versions (analytic_id, version, definition, price, next_price, next_price_at)
           VALUES ($1, $2, $3::jsonb, $4, $5, $6)`,
          [
            row.id,
            row.current_version,
            storedDefinition(change.definition),
            pricing.price,
            pricing.nextPrice ?? null,
            pricing.nextPriceAt === undefined ? null : new Date(pricing.nextPriceAt),
          ],
        );
        // Only the newest versions are kept, besides those callers still use (pinned, called
        // lately, a sunset ahead): an owner redeploying in a loop cannot grow the store.
        await pruneVersions(tx, row.id, row.current_version, limits.versionsKept, change.nowMs);
        await createChangeLogRepository(tx).append('analytic', name);
        // A newly scheduled rise: the owner and the callers of the last 30 days hear of it with it.
        if (
          pricing.nextPrice !== undefined &&
          pricing.nextPriceAt !== undefined &&
          (pricing.nextPrice !== locked.next_price || pricing.nextPriceAt !== locked.next_price_at?.getTime())
        ) {
          const callers = await tx.query<{ account_id: string }>(
            `SELECT account_id FROM usage_analytic_callers
              WHERE analytic_id = $1 AND last_day >= (now() AT TIME ZONE 'UTC')::date - 30 AND account_id <> $2`,
            [row.id, accountId],
          );
          const data = {
            analytic: name,
            price: pricing.price,
            next_price: pricing.nextPrice,
            effective_at: new Date(pricing.nextPriceAt).toISOString(),
          };
          for (const target of [accountId, ...callers.map((c) => c.account_id)]) {
            await emitWebhookEvent(tx, { accountId: target, type: 'listing.price_scheduled', data });
          }
        }
        return (await createAnalyticRepository(tx, limits).get(name))!;
      });
    },

    get,

    listByOwner: (accountId) =>
      many(`${SELECT} WHERE a.account_id = $1 AND ${CURRENT} ORDER BY a.name`, [accountId]),

    listVisibleTo: (accountId) =>
      many(
        `${SELECT} WHERE ${CURRENT}
            AND (a.visibility = 'public' OR a.account_id = $1 OR (a.visibility = 'shared' AND $1 = ANY (a.shared_with)))
          ORDER BY a.name`,
        [accountId],
      ),

    listToolsOf: (accountId) =>
      many(
        `${SELECT} WHERE ${CURRENT}
            AND (a.account_id = $1
                 OR (a.name IN (SELECT t.name FROM account_tools t WHERE t.account_id = $1)
                     AND (a.visibility = 'public' OR (a.visibility = 'shared' AND $1 = ANY (a.shared_with)))))
          ORDER BY a.name`,
        [accountId],
      ),

    async listVersions(accountId, name) {
      const rows = await sql.query<
        Pick<
          AnalyticRow,
          | 'version'
          | 'current_version'
          | 'definition'
          | 'price'
          | 'next_price'
          | 'next_price_at'
          | 'v_price'
          | 'v_next_price'
          | 'v_next_price_at'
          | 'deprecated_at'
          | 'sunset_at'
          | 'created_at'
        >
      >(
        `SELECT v.version, a.current_version, v.definition, a.price, a.next_price, a.next_price_at,
                v.price AS v_price, v.next_price AS v_next_price, v.next_price_at AS v_next_price_at,
                v.deprecated_at, v.sunset_at, v.created_at
           FROM analytics a JOIN analytic_versions v ON v.analytic_id = a.id
          WHERE a.name = $1 AND a.account_id = $2 AND a.deleted_at IS NULL
          ORDER BY v.version`,
        [name, accountId],
      );
      if (rows.length === 0) throw new StoreError('NOT_FOUND', `analytic ${name} not found`);
      return rows.map((row) => ({
        version: row.version,
        definition: definitionOf(row.definition),
        pricing: versionPricing(row, row.version === row.current_version, {
          price: row.v_price,
          nextPrice: row.v_next_price,
          nextPriceAt: row.v_next_price_at,
        }),
        deprecation: deprecationOf(row),
        createdAt: row.created_at,
      }));
    },

    delete(accountId, name) {
      return sql.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE analytics SET deleted_at = now(), updated_at = now()
            WHERE name = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING id`,
          [name, accountId],
        );
        if (rows.length === 0) throw new StoreError('NOT_FOUND', `analytic ${name} not found`);
        await createChangeLogRepository(tx).append('analytic', name);
      });
    },
  };
}
