// Accounts: who owns keys, connections and analytics. Emails are unique regardless of case.

import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import { newId } from './new-id.js';
import type { SqlExecutor } from './sql-client.js';

/** A Quarry account. */
export interface Account {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly plan: string;
  readonly createdAt: Date;
  readonly closedAt: Date | null;
}

/** Input of {@link AccountRepository.create}. */
export interface NewAccount {
  readonly email: string;
  readonly name: string;
  /** Defaults to `free`. */
  readonly plan?: string;
}

/** Paging for list calls: newest first. */
export interface ListOptions {
  /** At most this many rows (default 100). */
  readonly limit?: number;
  readonly offset?: number;
}

/** Account rows. */
export interface AccountRepository {
  /** Creates an account; CONFLICT when the email (in any case) is taken. */
  create(input: NewAccount): Promise<Account>;
  get(id: string): Promise<Account | null>;
  /** Case-insensitive lookup. */
  findByEmail(email: string): Promise<Account | null>;
  list(options?: ListOptions): Promise<readonly Account[]>;
  /** Moves an account to another plan; NOT_FOUND when there is no such account. */
  setPlan(id: string, plan: string): Promise<Account>;
  /** Changes the account's email or name; CONFLICT when the email (in any case) is another account's. */
  update(id: string, change: { readonly email?: string; readonly name?: string }): Promise<Account>;
}

interface AccountRow {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly plan: string;
  readonly created_at: Date;
  readonly closed_at: Date | null;
}

const COLUMNS = 'id, email, name, plan, created_at, closed_at';

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    plan: row.plan,
    createdAt: row.created_at,
    closedAt: row.closed_at,
  };
}

/** Builds the account repository over `sql`. */
export function createAccountRepository(sql: SqlExecutor): AccountRepository {
  const one = async (query: string, params: readonly unknown[]) => {
    const [row] = await sql.query<AccountRow>(query, params);
    return row === undefined ? null : toAccount(row);
  };
  return {
    async create(input) {
      const rows = await withConstraintErrors(
        { conflict: `an account with email ${input.email} already exists` },
        () =>
          sql.query<AccountRow>(
            `INSERT INTO accounts (id, email, name, plan) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
            [newId('acc'), input.email, input.name, input.plan ?? 'free'],
          ),
      );
      return toAccount(rows[0]!);
    },
    get: (id) => one(`SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [id]),
    findByEmail: (email) => one(`SELECT ${COLUMNS} FROM accounts WHERE lower(email) = lower($1)`, [email]),
    async list(options = {}) {
      const rows = await sql.query<AccountRow>(
        `SELECT ${COLUMNS} FROM accounts ORDER BY created_at DESC, id LIMIT $1 OFFSET $2`,
        [options.limit ?? 100, options.offset ?? 0],
      );
      return rows.map(toAccount);
    },
    async update(id, change) {
      const rows = await withConstraintErrors(
        { conflict: `an account with email ${change.email ?? ''} already exists` },
        () =>
          sql.query<AccountRow>(
            `UPDATE accounts SET email = coalesce($2, email), name = coalesce($3, name)
              WHERE id = $1 RETURNING ${COLUMNS}`,
            [id, change.email ?? null, change.name ?? null],
          ),
      );
      if (rows[0] === undefined) throw new StoreError('NOT_FOUND', `account ${id} not found`);
      return toAccount(rows[0]);
    },
    async setPlan(id, plan) {
      const account = await one(`UPDATE accounts SET plan = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [
        id,
        plan,
      ]);
      if (account === null) throw new StoreError('NOT_FOUND', `account ${id} not found`);
      return account;
    },
  };
}
