// Owners' warehouse connections. Non-secret settings live in `config` (jsonb); the secret
// fields (passwords, private keys, tokens) are sealed together with the secret box and stored
// only as ciphertext, with the id of the key that sealed them so a rotation can find old rows.
// Listing and getting never decrypt; only readSecrets does, when a connector is being built.
// Updating and deleting record a 'connection' change: every instance closes its pool.

import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import type { SecretBox } from '../security/secret-box.js';
import {
  type AccountBound,
  type AccountLimits,
  DEFAULT_ACCOUNT_LIMITS,
  withinAccountBound,
} from './account-limits.js';
import { createChangeLogRepository } from './change-log-repository.js';
import { newId } from './new-id.js';
import type { SqlExecutor } from './sql-client.js';

/** A connection's non-secret JSON settings. */
export type ConnectionConfig = Readonly<Record<string, unknown>>;

/** Secret fields, by name. */
export type ConnectionSecrets = Readonly<Record<string, string>>;

/** A connection as shown to its owner: no secrets. */
export interface Connection {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  /** The connector type, e.g. `postgres`. */
  readonly type: string;
  readonly config: ConnectionConfig;
  /** The names of the stored secret fields (their values are never returned here). */
  readonly secretFields: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Input of {@link ConnectionRepository.create}. */
export interface NewConnection {
  readonly accountId: string;
  readonly name: string;
  readonly type: string;
  readonly config: ConnectionConfig;
  readonly secrets?: ConnectionSecrets;
}

/** Connection rows. */
export interface ConnectionRepository {
  /** Creates a connection; CONFLICT when the account already has a live one of that name. */
  create(input: NewConnection): Promise<Connection>;
  list(accountId: string): Promise<readonly Connection[]>;
  get(accountId: string, id: string): Promise<Connection | null>;
  findByName(accountId: string, name: string): Promise<Connection | null>;
  /** Decrypts the connection's secrets; NOT_FOUND for an unknown or deleted connection. */
  readSecrets(accountId: string, id: string): Promise<ConnectionSecrets>;
  /**
   * Replaces a connection's config and secrets (whole, not merged: the service merges) and
   * records the change, so every instance closes its pool; NOT_FOUND when absent.
   */
  update(
    accountId: string,
    id: string,
    change: { readonly config: ConnectionConfig; readonly secrets: ConnectionSecrets },
  ): Promise<Connection>;
  /** Soft-deletes (frees the name) and records the change; NOT_FOUND when absent. */
  delete(accountId: string, id: string): Promise<void>;
}

interface ConnectionRow {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly type: string;
  readonly config: ConnectionConfig;
  readonly secret_fields: string[];
  readonly created_at: Date;
  readonly updated_at: Date;
}

const COLUMNS = 'id, account_id, name, type, config, secret_fields, created_at, updated_at';

function toConnection(row: ConnectionRow): Connection {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.type,
    config: row.config,
    secretFields: row.secret_fields,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Builds the connection repository over `sql`, sealing secrets with `secretBox`. */
export function createConnectionRepository(
  sql: SqlExecutor,
  secretBox: SecretBox,
  limits: AccountLimits = DEFAULT_ACCOUNT_LIMITS,
): ConnectionRepository {
  const bound: AccountBound = {
    what: 'connections',
    max: limits.connections,
    setting: 'QUARRY_MAX_CONNECTIONS_PER_ACCOUNT',
    countSql: 'SELECT count(*)::int AS n FROM connections WHERE account_id = $1 AND deleted_at IS NULL',
  };
  const one = async (query: string, params: readonly unknown[]) => {
    const [row] = await sql.query<ConnectionRow>(query, params);
    return row === undefined ? null : toConnection(row);
  };
  return {
    async create(input) {
      const secrets = input.secrets ?? {};
      const fields = Object.keys(secrets).sort();
      const sealed = fields.length === 0 ? null : secretBox.seal(JSON.stringify(secrets));
      const rows = await withConstraintErrors(
        {
          conflict: `a connection named ${input.name} already exists`,
          missing: `account ${input.accountId} not found`,
        },
        () =>
          withinAccountBound(sql, input.accountId, bound, (tx) =>
            tx.query<ConnectionRow>(
              `INSERT INTO connections (id, account_id, name, type, config, secrets, secrets_key_id, secret_fields)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8) RETURNING ${COLUMNS}`,
              [
                newId('con'),
                input.accountId,
                input.name,
                input.type,
                JSON.stringify(input.config),
                sealed,
                sealed === null ? null : secretBox.currentKeyId,
                fields,
              ],
            ),
          ),
      );
      return toConnection(rows[0]!);
    },
    async list(accountId) {
      const rows = await sql.query<ConnectionRow>(
        `SELECT ${COLUMNS} FROM connections WHERE account_id = $1 AND deleted_at IS NULL ORDER BY name`,
        [accountId],
      );
      return rows.map(toConnection);
    },
    get: (accountId, id) =>
      one(`SELECT ${COLUMNS} FROM connections WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, [
        id,
        accountId,
      ]),
    findByName: (accountId, name) =>
      one(`SELECT ${COLUMNS} FROM connections WHERE account_id = $1 AND name = $2 AND deleted_at IS NULL`, [
        accountId,
        name,
      ]),
    async readSecrets(accountId, id) {
      const [row] = await sql.query<{ readonly secrets: Buffer | null }>(
        'SELECT secrets FROM connections WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL',
        [id, accountId],
      );
      if (row === undefined) throw new StoreError('NOT_FOUND', `connection ${id} not found`);
      return row.secrets === null ? {} : (JSON.parse(secretBox.open(row.secrets)) as ConnectionSecrets);
    },
    update(accountId, id, change) {
      const fields = Object.keys(change.secrets).sort();
      const sealed = fields.length === 0 ? null : secretBox.seal(JSON.stringify(change.secrets));
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<ConnectionRow>(
          `UPDATE connections SET config = $3::jsonb, secrets = $4, secrets_key_id = $5, secret_fields = $6,
                  updated_at = now()
            WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
          [
            id,
            accountId,
            JSON.stringify(change.config),
            sealed,
            sealed === null ? null : secretBox.currentKeyId,
            fields,
          ],
        );
        if (row === undefined) throw new StoreError('NOT_FOUND', `connection ${id} not found`);
        await createChangeLogRepository(tx).append('connection', id);
        return toConnection(row);
      });
    },
    delete(accountId, id) {
      return sql.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE connections SET deleted_at = now(), updated_at = now()
            WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL RETURNING id`,
          [id, accountId],
        );
        if (rows.length === 0) throw new StoreError('NOT_FOUND', `connection ${id} not found`);
        await createChangeLogRepository(tx).append('connection', id);
      });
    },
  };
}
