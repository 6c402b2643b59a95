// Analytic versions callers pin (issue 31, migration 024): an owner's deprecation of a version with
// its sunset date, pins (an embed token naming `name@3` until it expires), the record of pinned
// calls, and the rule for which versions a deploy may drop. A version is kept, whatever
// QUARRY_MAX_VERSIONS_KEPT says, while it was called by version in the last 30 days, its sunset
// is still ahead, or a pin on it has not expired; the current version is always kept.
import { StoreError } from '../errors/store-error.js';
import { createChangeLogRepository } from './change-log-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** A version called by version within this long is kept (and listed in its callers' usage). */
export const VERSION_CALLED_WITHIN_MS = 30 * 24 * 3600_000;
/** The furthest ahead an owner may set a sunset: a longer promise would keep versions for years. */
export const MAX_SUNSET_AHEAD_MS = 366 * 24 * 3600_000;

/** An owner's deprecation of one version: calls carry it until `sunsetAt`, then are refused. */
export interface VersionDeprecation {
  readonly deprecatedAt: Date;
  readonly sunsetAt: Date;
}

/** A deprecated version, as listed to its owner and its callers. */
export interface DeprecatedVersion extends VersionDeprecation {
  readonly name: string;
  readonly version: number;
  readonly currentVersion: number;
}

/** A deprecated version the account called by version lately (its usage lists them). */
export interface DeprecatedVersionCalled extends DeprecatedVersion {
  readonly lastCalledAt: Date;
}

/** Input of {@link AnalyticVersionRepository.pin}. */
export interface NewVersionPin {
  /** The analytic, by its live name. */
  readonly name: string;
  readonly version: number;
  /** What holds the pin (an embed token's id); pinning again with the same ref extends it. */
  readonly ref: string;
  /** The account the pin is for (who will call). */
  readonly accountId: string;
  readonly expiresAt: Date;
}

/** One pinned call to remember (see recordCalls). */
export interface PinnedCall {
  readonly analyticId: string;
  readonly version: number;
  readonly accountId: string;
  readonly at: Date;
}

export interface AnalyticVersionRepository {
  /**
   * Deprecates the owner's `version` with `sunsetAt` (a later call replaces the sunset and keeps
   * the first deprecation date). NOT_FOUND: no such analytic or version; CONFLICT: it is the
   * current version (deploy a new one first); INVALID: a sunset not ahead or too far ahead.
   */
  deprecate(
    accountId: string,
    name: string,
    version: number,
    sunsetAt: Date,
    nowMs?: number,
  ): Promise<DeprecatedVersion>;
  /** Withdraws a deprecation (nothing to withdraw is fine); NOT_FOUND as deprecate. */
  undeprecate(accountId: string, name: string, version: number): Promise<void>;
  /** The deprecated versions of a live analytic, oldest first. */
  deprecationsOf(name: string): Promise<readonly DeprecatedVersion[]>;
  /** Deprecated versions `accountId` called by version within `VERSION_CALLED_WITHIN_MS`. */
  deprecatedCalledBy(accountId: string, nowMs?: number): Promise<readonly DeprecatedVersionCalled[]>;
  /** Pins a version until `expiresAt` (it is kept until then); NOT_FOUND for an unknown version. */
  pin(pin: NewVersionPin): Promise<void>;
  /** Remembers pinned calls (the latest time wins); one statement for the batch. */
  recordCalls(calls: readonly PinnedCall[]): Promise<void>;
}

/** Locks the owner's live analytic and checks the version exists; its id and current version. */
async function ownersVersion(
  tx: SqlExecutor,
  accountId: string,
  name: string,
  version: number,
): Promise<{ readonly id: string; readonly current_version: number }> {
  const [analytic] = await tx.query<{ readonly id: string; readonly current_version: number }>(
    `SELECT id, current_version FROM analytics
      WHERE name = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE`,
    [name, accountId],
  );
  if (analytic === undefined) throw new StoreError('NOT_FOUND', `analytic ${name} not found`);
  const [kept] = await tx.query('SELECT 1 FROM analytic_versions WHERE analytic_id = $1 AND version = $2', [
    analytic.id,
    version,
  ]);
  if (kept === undefined)
    throw new StoreError(
      'NOT_FOUND',
      `Version ${version} of ${name} is not kept (versions are listed at /v1/owner/analytics/${name}/versions).`,
    );
  return analytic;
}

interface DeprecationRow {
  readonly name: string;
  readonly version: number;
  readonly current_version: number;
  readonly deprecated_at: Date;
  readonly sunset_at: Date;
}

const deprecationOf = (row: DeprecationRow): DeprecatedVersion => ({
  name: row.name,
  version: row.version,
  currentVersion: row.current_version,
  deprecatedAt: row.deprecated_at,
  sunsetAt: row.sunset_at,
});

export function createAnalyticVersionRepository(sql: SqlExecutor): AnalyticVersionRepository {
  return {
    async deprecate(accountId, name, version, sunsetAt, nowMs = Date.now()) {
      if (!(sunsetAt.getTime() > nowMs))
        throw new StoreError(
          'INVALID',
          'The sunset must be ahead: calls of the version are refused from then on.',
        );
      if (sunsetAt.getTime() > nowMs + MAX_SUNSET_AHEAD_MS)
        throw new StoreError('INVALID', 'The sunset may be at most 366 days ahead.');
      return sql.transaction(async (tx) => {
        const analytic = await ownersVersion(tx, accountId, name, version);
        if (version === analytic.current_version) {
          throw new StoreError(
            'CONFLICT',
            `Version ${version} is the current version of ${name}: deploy a new version before deprecating it.`,
          );
        }
        const [row] = await tx.query<DeprecationRow>(
          `UPDATE analytic_versions SET deprecated_at = coalesce(deprecated_at, $3), sunset_at = $4
            WHERE analytic_id = $1 AND version = $2
        RETURNING $5::text AS name, version, $6::int AS current_version, deprecated_at, sunset_at`,
          [analytic.id, version, new Date(nowMs), sunsetAt, name, analytic.current_version],
        );
        await createChangeLogRepository(tx).append('analytic', name);
        return deprecationOf(row!);
      });
    },

    undeprecate(accountId, name, version) {
      return sql.transaction(async (tx) => {
        const analytic = await ownersVersion(tx, accountId, name, version);
        await tx.query(
          'UPDATE analytic_versions SET deprecated_at = NULL, sunset_at = NULL WHERE analytic_id = $1 AND version = $2',
          [analytic.id, version],
        );
        await createChangeLogRepository(tx).append('analytic', name);
      });
    },

    async deprecationsOf(name) {
      const rows = await sql.query<DeprecationRow>(
        `SELECT a.name, v.version, a.current_version, v.deprecated_at, v.sunset_at
           FROM analytics a JOIN analytic_versions v ON v.analytic_id = a.id
          WHERE a.name = $1 AND a.deleted_at IS NULL AND v.deprecated_at IS NOT NULL
          ORDER BY v.version`,
        [name],
      );
      return rows.map(deprecationOf);
    },

    async deprecatedCalledBy(accountId, nowMs = Date.now()) {
      const rows = await sql.query<DeprecationRow & { readonly last_called_at: Date }>(
        `SELECT a.name, v.version, a.current_version, v.deprecated_at, v.sunset_at, c.last_called_at
           FROM analytic_version_calls c
           JOIN analytics a ON a.id = c.analytic_id AND a.deleted_at IS NULL
           JOIN analytic_versions v ON v.analytic_id = c.analytic_id AND v.version = c.version
          WHERE c.account_id = $1 AND c.last_called_at > $2 AND v.deprecated_at IS NOT NULL
          ORDER BY v.sunset_at, a.name, v.version`,
        [accountId, new Date(nowMs - VERSION_CALLED_WITHIN_MS)],
      );
      return rows.map((row) => ({ ...deprecationOf(row), lastCalledAt: row.last_called_at }));
    },

    async pin(pin) {
      const rows = await sql.query(
        `INSERT INTO analytic_version_pins (analytic_id, version, ref, account_id, expires_at)
         SELECT a.id, v.version, $3, $4, $5
           FROM analytics a JOIN analytic_versions v ON v.analytic_id = a.id
          WHERE a.name = $1 AND a.deleted_at IS NULL AND v.version = $2
         ON CONFLICT (analytic_id, version, ref)
         DO UPDATE SET expires_at = greatest(analytic_version_pins.expires_at, excluded.expires_at)
         RETURNING 1`,
        [pin.name, pin.version, pin.ref, pin.accountId, pin.expiresAt],
      );
      if (rows.length === 0)
        throw new StoreError('NOT_FOUND', `Version ${pin.version} of ${pin.name} does not exist.`);
    },

    async recordCalls(calls) {
      if (calls.length === 0) return;
      await sql.query(
        `INSERT INTO analytic_version_calls (analytic_id, version, account_id, last_called_at)
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[])
         ON CONFLICT (analytic_id, version, account_id)
         DO UPDATE SET last_called_at = greatest(analytic_version_calls.last_called_at, excluded.last_called_at)`,
        [
          calls.map((c) => c.analyticId),
          calls.map((c) => c.version),
          calls.map((c) => c.accountId),
          calls.map((c) => c.at),
        ],
      );
    },
  };
}

/**
 * Drops the versions of one analytic a deploy no longer keeps: older than the newest `keep`, and
 * not called by version in the last 30 days, with no sunset ahead and no live pin. Expired pins
 * and old call records of the analytic go with them. Run in the deploy's transaction.
 */
export async function pruneVersions(
  tx: SqlExecutor,
  analyticId: string,
  currentVersion: number,
  keep: number,
  nowMs = Date.now(),
): Promise<void> {
  const now = new Date(nowMs);
  await tx.query('DELETE FROM analytic_version_pins WHERE analytic_id = $1 AND expires_at <= $2', [
    analyticId,
    now,
  ]);
  await tx.query('DELETE FROM analytic_version_calls WHERE analytic_id = $1 AND last_called_at <= $2', [
    analyticId,
    new Date(nowMs - VERSION_CALLED_WITHIN_MS),
  ]);
  await tx.query(
    `DELETE FROM analytic_versions v
      WHERE v.analytic_id = $1 AND v.version <= $2
        AND NOT (v.sunset_at IS NOT NULL AND v.sunset_at > $3)
        AND NOT EXISTS (SELECT 1 FROM analytic_version_pins p
                         WHERE p.analytic_id = v.analytic_id AND p.version = v.version)
        AND NOT EXISTS (SELECT 1 FROM analytic_version_calls c
                         WHERE c.analytic_id = v.analytic_id AND c.version = v.version)`,
    [analyticId, currentVersion - keep, now],
  );
}
