// API keys. Only the SHA-256 digest of a key is stored (the secret is shown once, at creation),
// plus its visible prefix so owners can tell keys apart. Revoking or re-limiting a key writes
// the change log in the same transaction, so every instance drops its cached copy.

import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import {
  type AccountBound,
  type AccountLimits,
  DEFAULT_ACCOUNT_LIMITS,
  withinAccountBound,
} from './account-limits.js';
import type { Account } from './account-repository.js';
import { createChangeLogRepository } from './change-log-repository.js';
import { newId } from './new-id.js';
import type { SqlExecutor } from './sql-client.js';

/** A per-key rate-limit override; its shape belongs to the rate limiter. */
export type RateLimitOverride = Readonly<Record<string, unknown>>;

/** A key as listed to its owner: never the secret, never the digest. */
export interface ApiKey {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  /** The visible start of the key, e.g. `qry_live_3kT`. */
  readonly prefix: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly rateLimit: RateLimitOverride | null;
}

/** Input of {@link ApiKeyRepository.create}; the secret itself never reaches the store. */
export interface NewApiKey {
  readonly accountId: string;
  readonly name: string;
  readonly prefix: string;
  /** SHA-256 of the whole key (see digestKey). */
  readonly digest: Uint8Array;
  readonly scopes?: readonly string[];
  readonly expiresAt?: Date | null;
}

/** What authentication gets for a live key. */
export interface AuthenticatedKey {
  readonly key: ApiKey;
  readonly account: Account;
}

/** API key rows. */
export interface ApiKeyRepository {
  /** Stores a key; NOT_FOUND when the account does not exist, CONFLICT on a duplicate digest. */
  create(input: NewApiKey): Promise<ApiKey>;
  /**
   * The key with this digest and its account, or null when there is none or it is revoked,
   * expired (by the database clock), or its account is closed.
   */
  findByDigest(digest: Uint8Array): Promise<AuthenticatedKey | null>;
  get(accountId: string, keyId: string): Promise<ApiKey | null>;
  /** The account's keys, newest first; revoked ones only when asked. */
  listForAccount(
    accountId: string,
    options?: { readonly includeRevoked?: boolean },
  ): Promise<readonly ApiKey[]>;
  /** Revokes a key of the account; repeating it changes nothing. NOT_FOUND for another's key. */
  revoke(accountId: string, keyId: string): Promise<ApiKey>;
  /** Sets (or, with null, lifts) a key's rate-limit override; NOT_FOUND for an unknown key. */
  setRateLimit(keyId: string, rateLimit: RateLimitOverride | null): Promise<ApiKey>;
  /** Records that these keys were just used (one write for a batch: see auth/key-usage.ts). */
  markUsed(keyIds: readonly string[]): Promise<void>;
}

interface ApiKeyRow {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly prefix: string;
  readonly scopes: string[];
  readonly created_at: Date;
  readonly expires_at: Date | null;
  readonly revoked_at: Date | null;
  readonly last_used_at: Date | null;
  readonly rate_limit: RateLimitOverride | null;
}

const COLUMNS =
  'id, account_id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at, rate_limit';
const KEY_COLUMNS = COLUMNS.split(', ')
  .map((column) => `k.${column}`)
  .join(', ');

interface AccountColumns {
  readonly account_email: string;
  readonly account_name: string;
  readonly account_plan: string;
  readonly account_created_at: Date;
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    rateLimit: row.rate_limit,
  };
}

/** Builds the API key repository over `sql`. */
export function createApiKeyRepository(
  sql: SqlExecutor,
  limits: AccountLimits = DEFAULT_ACCOUNT_LIMITS,
): ApiKeyRepository {
  const bound: AccountBound = {
    what: 'live keys',
    max: limits.keys,
    setting: 'QUARRY_MAX_KEYS_PER_ACCOUNT',
    countSql: `SELECT count(*)::int AS n FROM api_keys
                WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
  };
  const one = async (query: string, params: readonly unknown[]) => {
    const [row] = await sql.query<ApiKeyRow>(query, params);
    return row === undefined ? null : toApiKey(row);
  };
  const get = (accountId: string, keyId: string) =>
    one(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND account_id = $2`, [keyId, accountId]);

  return {
    async create(input) {
      const rows = await withConstraintErrors(
        {
          conflict: 'a key with this digest already exists',
          missing: `account ${input.accountId} not found`,
        },
        () =>
          withinAccountBound(sql, input.accountId, bound, (tx) =>
            tx.query<ApiKeyRow>(
              `INSERT INTO api_keys (id, account_id, name, prefix, digest, scopes, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
              [
                newId('key'),
                input.accountId,
                input.name,
                input.prefix,
                Buffer.from(input.digest),
                [...(input.scopes ?? [])],
                input.expiresAt ?? null,
              ],
            ),
          ),
      );
      return toApiKey(rows[0]!);
    },

    async findByDigest(digest) {
      const [row] = await sql.query<ApiKeyRow & AccountColumns>(
        `SELECT ${KEY_COLUMNS}, a.email AS account_email, a.name AS account_name, a.plan AS account_plan,
                a.created_at AS account_created_at
           FROM api_keys k JOIN accounts a ON a.id = k.account_id
          WHERE k.digest = $1 AND k.revoked_at IS NULL
            AND (k.expires_at IS NULL OR k.expires_at > now()) AND a.closed_at IS NULL`,
        [Buffer.from(digest)],
      );
      if (row === undefined) return null;
      return {
        key: toApiKey(row),
        account: {
          id: row.account_id,
          email: row.account_email,
          name: row.account_name,
          plan: row.account_plan,
          createdAt: row.account_created_at,
          closedAt: null,
        },
      };
    },

    get,

    async listForAccount(accountId, options = {}) {
      const rows = await sql.query<ApiKeyRow>(
        `SELECT ${COLUMNS} FROM api_keys
          WHERE account_id = $1 AND ($2 OR revoked_at IS NULL)
          ORDER BY created_at DESC, id`,
        [accountId, options.includeRevoked ?? false],
      );
      return rows.map(toApiKey);
    },

    revoke(accountId, keyId) {
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<ApiKeyRow>(
          `UPDATE api_keys SET revoked_at = now()
            WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
          [keyId, accountId],
        );
        if (row !== undefined) {
          await createChangeLogRepository(tx).append('key', keyId);
          return toApiKey(row);
        }
        // Already revoked (idempotent) or not this account's key.
        const existing = await createApiKeyRepository(tx).get(accountId, keyId);
        if (existing === null) throw new StoreError('NOT_FOUND', `key ${keyId} not found`);
        return existing;
      });
    },

    setRateLimit(keyId, rateLimit) {
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<ApiKeyRow>(
          `UPDATE api_keys SET rate_limit = $2::jsonb WHERE id = $1 RETURNING ${COLUMNS}`,
          [keyId, rateLimit === null ? null : JSON.stringify(rateLimit)],
        );
        if (row === undefined) throw new StoreError('NOT_FOUND', `key ${keyId} not found`);
        await createChangeLogRepository(tx).append('key', keyId);
        return toApiKey(row);
      });
    },

    async markUsed(keyIds) {
      if (keyIds.length === 0) return;
      await sql.query('UPDATE api_keys SET last_used_at = now() WHERE id = ANY($1::text[])', [[...keyIds]]);
    },
  };
}
