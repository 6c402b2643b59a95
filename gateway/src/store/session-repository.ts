// The console's sign-in sessions and account passwords (migration 011). A session is found by
// its token's digest, and only while it is neither revoked nor expired; logging out revokes it
// in the store, so a copied cookie stops working on every instance at once.
import { withConstraintErrors } from '../errors/store-error.js';
import { newId } from './new-id.js';
import type { SqlExecutor } from './sql-client.js';

/** A console session (never its token). */
export interface ConsoleSession {
  readonly id: string;
  readonly accountId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/** A live session with what a principal needs of its account. */
export interface LiveSession {
  readonly session: ConsoleSession;
  readonly plan: string;
}

export interface SessionRepository {
  /** A new session of the account; NOT_FOUND when the account does not exist. */
  create(input: { accountId: string; digest: Uint8Array; expiresAt: Date }): Promise<ConsoleSession>;
  /** The live session (not revoked, not expired, account open) with this token digest, else null. */
  findLive(digest: Uint8Array): Promise<LiveSession | null>;
  /** The live session with this id, else null. */
  findLiveById(sessionId: string): Promise<ConsoleSession | null>;
  /** Whether the session with this id is live right now. */
  isLive(accountId: string, sessionId: string): Promise<boolean>;
  /** Revokes the session; repeating it changes nothing. */
  revoke(sessionId: string): Promise<void>;
  /** Revokes every live session of the account but `except` (a password change). */
  revokeAll(accountId: string, except?: string): Promise<number>;
  /** The account's password hash, or null when it has none. */
  passwordHash(accountId: string): Promise<string | null>;
  /** Sets (or replaces) the account's password hash. */
  setPasswordHash(accountId: string, hash: string): Promise<void>;
  /** Keeps a password-reset link's token digest until `expiresAt`; earlier unused links of the account stop working. */
  createReset(input: { accountId: string; digest: Uint8Array; expiresAt: Date }): Promise<void>;
  /** Uses the live reset link with this digest (once): its account id, else null (unknown, used or expired). */
  takeReset(digest: Uint8Array): Promise<string | null>;
}

interface SessionRow {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: Date;
  readonly expires_at: Date;
}

const COLUMNS = 'id, account_id, created_at, expires_at';

function toSession(row: SessionRow): ConsoleSession {
  return { id: row.id, accountId: row.account_id, createdAt: row.created_at, expiresAt: row.expires_at };
}

export function createSessionRepository(sql: SqlExecutor): SessionRepository {
  return {
    async create(input) {
      const rows = await withConstraintErrors(
        { conflict: 'a session with this digest exists', missing: `account ${input.accountId} not found` },
        () =>
          sql.query<SessionRow>(
            `INSERT INTO console_sessions (id, account_id, digest, expires_at) VALUES ($1, $2, $3, $4)
             RETURNING ${COLUMNS}`,
            [newId('ses'), input.accountId, Buffer.from(input.digest), input.expiresAt],
          ),
      );
      return toSession(rows[0]!);
    },
    async findLive(digest) {
      const [row] = await sql.query<SessionRow & { readonly plan: string }>(
        `SELECT s.id, s.account_id, s.created_at, s.expires_at, a.plan
           FROM console_sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.digest = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND a.closed_at IS NULL`,
        [Buffer.from(digest)],
        { name: 'session_find_live' },
      );
      return row === undefined ? null : { session: toSession(row), plan: row.plan };
    },
    async findLiveById(sessionId) {
      const [row] = await sql.query<SessionRow>(
        `SELECT ${COLUMNS} FROM console_sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()`,
        [sessionId],
      );
      return row === undefined ? null : toSession(row);
    },
    async isLive(accountId, sessionId) {
      const rows = await sql.query(
        `SELECT 1 FROM console_sessions
          WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at > now()`,
        [sessionId, accountId],
      );
      return rows.length > 0;
    },
    async revoke(sessionId) {
      await sql.query('UPDATE console_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [
        sessionId,
      ]);
    },
    async revokeAll(accountId, except) {
      const rows = await sql.query(
        `UPDATE console_sessions SET revoked_at = now()
          WHERE account_id = $1 AND revoked_at IS NULL AND id <> $2 RETURNING id`,
        [accountId, except ?? ''],
      );
      return rows.length;
    },
    async passwordHash(accountId) {
      const [row] = await sql.query<{ readonly hash: string }>(
        'SELECT hash FROM account_passwords WHERE account_id = $1',
        [accountId],
      );
      return row?.hash ?? null;
    },
    async createReset({ accountId, digest, expiresAt }) {
      await sql.query(
        'UPDATE password_resets SET used_at = now() WHERE account_id = $1 AND used_at IS NULL',
        [accountId],
      );
      await sql.query('INSERT INTO password_resets (digest, account_id, expires_at) VALUES ($1, $2, $3)', [
        digest,
        accountId,
        expiresAt,
      ]);
    },
    async takeReset(digest) {
      const [row] = await sql.query<{ readonly account_id: string }>(
        `UPDATE password_resets r SET used_at = now()
           FROM accounts a
          WHERE r.digest = $1 AND r.used_at IS NULL AND r.expires_at > now()
            AND a.id = r.account_id AND a.closed_at IS NULL
          RETURNING r.account_id`,
        [digest],
      );
      return row?.account_id ?? null;
    },
    async setPasswordHash(accountId, hash) {
      await withConstraintErrors({ conflict: 'unreachable', missing: `account ${accountId} not found` }, () =>
        sql.query(
          `INSERT INTO account_passwords (account_id, hash) VALUES ($1, $2)
           ON CONFLICT (account_id) DO UPDATE SET hash = EXCLUDED.hash, updated_at = now()`,
          [accountId, hash],
        ),
      );
    },
  };
}
