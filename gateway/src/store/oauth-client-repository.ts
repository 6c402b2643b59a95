// OAuth clients (client-credentials grant). Only the SHA-256 digest of a client's secret is
// stored. Revoking a client writes the change log in the same transaction, so every instance
// drops its cached verdict and the client's tokens stop working within the key-cache bound.

import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import {
  type AccountBound,
  type AccountLimits,
  DEFAULT_ACCOUNT_LIMITS,
  withinAccountBound,
} from './account-limits.js';
import { createChangeLogRepository } from './change-log-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** A client as listed to its owner: never the secret, never the digest. */
export interface OAuthClient {
  /** Record id, `ocl_…`. */
  readonly id: string;
  /** The public client identifier, `qci_…`. */
  readonly clientId: string;
  readonly accountId: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/** Input of {@link OAuthClientRepository.create}; the secret itself never reaches the store. */
export interface NewOAuthClient {
  readonly id: string;
  readonly clientId: string;
  readonly accountId: string;
  readonly name: string;
  readonly secretDigest: Uint8Array;
  readonly scopes: readonly string[];
}

/** A live client with what the token endpoint checks a presented secret against. */
export interface OAuthClientCredentials {
  readonly client: OAuthClient;
  readonly secretDigest: Buffer;
}

/** What verifying an access token needs to know about its client right now. */
export interface LiveOAuthClient {
  readonly client: OAuthClient;
  /** The plan of the client's account (quotas and rate limits follow it, as for a key). */
  readonly plan: string;
}

/** OAuth client rows. */
export interface OAuthClientRepository {
  /** Stores a client; NOT_FOUND when the account does not exist. */
  create(input: NewOAuthClient): Promise<OAuthClient>;
  /** The client with this client_id and its digest, or null when unknown, revoked, or its account is closed. */
  findCredentials(clientId: string): Promise<OAuthClientCredentials | null>;
  /** The client with this record id and its account's plan, or null when unknown, revoked, or the account is closed. */
  findLive(id: string): Promise<LiveOAuthClient | null>;
  /** The account's live clients, newest first. */
  listForAccount(accountId: string): Promise<readonly OAuthClient[]>;
  /** Revokes a client of the account; repeating it changes nothing. NOT_FOUND for another's client. */
  revoke(accountId: string, id: string): Promise<OAuthClient>;
}

interface OAuthClientRow {
  readonly id: string;
  readonly client_id: string;
  readonly account_id: string;
  readonly name: string;
  readonly scopes: string[];
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

const COLUMNS = 'id, client_id, account_id, name, scopes, created_at, revoked_at';
const CLIENT_COLUMNS = COLUMNS.split(', ')
  .map((column) => `c.${column}`)
  .join(', ');

function toClient(row: OAuthClientRow): OAuthClient {
  return {
    id: row.id,
    clientId: row.client_id,
    accountId: row.account_id,
    name: row.name,
    scopes: row.scopes,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

/** Builds the OAuth client repository over `sql`. */
export function createOAuthClientRepository(
  sql: SqlExecutor,
  limits: AccountLimits = DEFAULT_ACCOUNT_LIMITS,
): OAuthClientRepository {
  const bound: AccountBound = {
    what: 'OAuth clients',
    max: limits.oauthClients,
    setting: 'QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT',
    countSql: 'SELECT count(*)::int AS n FROM oauth_clients WHERE account_id = $1 AND revoked_at IS NULL',
  };
  return {
    async create(input) {
      const rows = await withConstraintErrors(
        {
          conflict: 'an OAuth client with this id already exists',
          missing: `account ${input.accountId} not found`,
        },
        () =>
          withinAccountBound(sql, input.accountId, bound, (tx) =>
            tx.query<OAuthClientRow>(
              `INSERT INTO oauth_clients (id, client_id, account_id, name, secret_digest, scopes)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
              [
                input.id,
                input.clientId,
                input.accountId,
                input.name,
                Buffer.from(input.secretDigest),
                [...input.scopes],
              ],
            ),
          ),
      );
      return toClient(rows[0]!);
    },

    async findCredentials(clientId) {
      const [row] = await sql.query<OAuthClientRow & { readonly secret_digest: Buffer }>(
        `SELECT ${CLIENT_COLUMNS}, c.secret_digest
           FROM oauth_clients c JOIN accounts a ON a.id = c.account_id
          WHERE c.client_id = $1 AND c.revoked_at IS NULL AND a.closed_at IS NULL`,
        [clientId],
      );
      return row === undefined ? null : { client: toClient(row), secretDigest: row.secret_digest };
    },

    async findLive(id) {
      const [row] = await sql.query<OAuthClientRow & { readonly plan: string }>(
        `SELECT ${CLIENT_COLUMNS}, a.plan
           FROM oauth_clients c JOIN accounts a ON a.id = c.account_id
          WHERE c.id = $1 AND c.revoked_at IS NULL AND a.closed_at IS NULL`,
        [id],
      );
      return row === undefined ? null : { client: toClient(row), plan: row.plan };
    },

    async listForAccount(accountId) {
      const rows = await sql.query<OAuthClientRow>(
        `SELECT ${COLUMNS} FROM oauth_clients
          WHERE account_id = $1 AND revoked_at IS NULL
          ORDER BY created_at DESC, id`,
        [accountId],
      );
      return rows.map(toClient);
    },

    revoke(accountId, id) {
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<OAuthClientRow>(
          `UPDATE oauth_clients SET revoked_at = now()
            WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
          [id, accountId],
        );
        if (row !== undefined) {
          await createChangeLogRepository(tx).append('oauth_client', id);
          return toClient(row);
        }
        // Already revoked (idempotent) or not this account's client.
        const [existing] = await tx.query<OAuthClientRow>(
          `SELECT ${COLUMNS} FROM oauth_clients WHERE id = $1 AND account_id = $2`,
          [id, accountId],
        );
        if (existing === undefined) throw new StoreError('NOT_FOUND', `OAuth client ${id} not found`);
        return toClient(existing);
      });
    },
  };
}
