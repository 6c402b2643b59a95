// What embed tokens need from the control plane (docs/embedding.md): the accounts' HS256 signing
// secrets (sealed with the secret box: the gateway verifies HMACs, so it must be able to read
// them), the versions pinned by minted tokens, and the account's CORS setting for its keys.
import { randomBytes } from 'node:crypto';
import { StoreError, withConstraintErrors } from '../errors/store-error.js';
import { encodeBase62 } from '../security/base62.js';
import type { SecretBox } from '../security/secret-box.js';
import { type AccountBound, withinAccountBound } from './account-limits.js';
import type { SqlExecutor } from './sql-client.js';

/** The prefix of an embed secret's id, which an HS256 token names as its `kid`. */
export const EMBED_SECRET_ID_PREFIX = 'qes_';
/** The prefix of the secret itself (its UTF-8 bytes are the HMAC key). */
export const EMBED_SECRET_PREFIX = 'qess_';
/** Live (not revoked, not expired) secrets one account may hold. */
export const MAX_EMBED_SECRETS = 10;

/** A secret as listed to its account: never the secret itself. */
export interface EmbedSecret {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly createdAt: Date;
  /** Set by a rotation: the secret verifies tokens until then (the overlap). */
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** A secret just created: the only time its value is returned. */
export interface IssuedEmbedSecret {
  readonly record: EmbedSecret;
  readonly secret: string;
}

/** A live secret and its account's plan, for verifying a token. */
export interface LiveEmbedSecret {
  readonly secret: string;
  readonly plan: string;
  /** When the secret stops verifying (a rotation's overlap), if it does. */
  readonly expiresAt: Date | null;
}

export interface EmbedRepository {
  /** A new secret; CONFLICT (LIMIT) past MAX_EMBED_SECRETS live ones. */
  createSecret(accountId: string, name: string): Promise<IssuedEmbedSecret>;
  /** The account's secrets that still verify, newest first. */
  listSecrets(accountId: string): Promise<readonly EmbedSecret[]>;
  /** The secret `id` of `accountId` and its plan while it verifies; null otherwise (another account's too). */
  findLiveSecret(accountId: string, id: string): Promise<LiveEmbedSecret | null>;
  /**
   * A new secret with the old one's name; the old one keeps verifying `overlapSeconds` more.
   * NOT_FOUND for another account's, a revoked or an expired secret.
   */
  rotateSecret(
    accountId: string,
    id: string,
    overlapSeconds: number,
  ): Promise<{ readonly issued: IssuedEmbedSecret; readonly previous: EmbedSecret }>;
  /** Ends a secret now; repeating it changes nothing. NOT_FOUND for another account's. */
  revokeSecret(accountId: string, id: string): Promise<EmbedSecret>;
  /** The plan of an open account; null for an unknown or closed one. */
  livePlan(accountId: string): Promise<string | null>;
  /** Whether the account lets its keys and OAuth tokens be used from another origin's page. */
  keysFromBrowsers(accountId: string): Promise<boolean>;
  setKeysFromBrowsers(accountId: string, allow: boolean): Promise<boolean>;
}

interface SecretRow {
  readonly id: string;
  readonly account_id: string;
  readonly name: string;
  readonly created_at: Date;
  readonly expires_at: Date | null;
  readonly revoked_at: Date | null;
}

const COLUMNS = 'id, account_id, name, created_at, expires_at, revoked_at';
const LIVE = 'revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

const toSecret = (row: SecretRow): EmbedSecret => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
});

const notFound = (id: string) => new StoreError('NOT_FOUND', `embed secret ${id} not found`);

export function createEmbedRepository(sql: SqlExecutor, box: SecretBox): EmbedRepository {
  const bound: AccountBound = {
    what: 'embed secrets',
    max: MAX_EMBED_SECRETS,
    setting: 'the embed secret limit',
    countSql: `SELECT count(*)::int AS n FROM embed_secrets WHERE account_id = $1 AND ${LIVE}`,
  };

  async function insert(tx: SqlExecutor, accountId: string, name: string): Promise<IssuedEmbedSecret> {
    const id = `${EMBED_SECRET_ID_PREFIX}${encodeBase62(randomBytes(16), 22)}`;
    const secret = `${EMBED_SECRET_PREFIX}${encodeBase62(randomBytes(32), 43)}`;
    const [row] = await tx.query<SecretRow>(
      `INSERT INTO embed_secrets (id, account_id, name, secret, secret_key_id)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [id, accountId, name, box.seal(secret), box.currentKeyId],
    );
    return { record: toSecret(row as SecretRow), secret };
  }

  return {
    createSecret: (accountId, name) =>
      withConstraintErrors(
        { conflict: 'an embed secret with this id exists', missing: `account ${accountId} not found` },
        () => withinAccountBound(sql, accountId, bound, (tx) => insert(tx, accountId, name)),
      ),

    async listSecrets(accountId) {
      const rows = await sql.query<SecretRow>(
        `SELECT ${COLUMNS} FROM embed_secrets WHERE account_id = $1 AND ${LIVE} ORDER BY created_at DESC, id`,
        [accountId],
      );
      return rows.map(toSecret);
    },

    async findLiveSecret(accountId, id) {
      const [row] = await sql.query<{ secret: Buffer; plan: string; expires_at: Date | null }>(
        `SELECT s.secret, a.plan, s.expires_at FROM embed_secrets s JOIN accounts a ON a.id = s.account_id
          WHERE s.id = $1 AND s.account_id = $2 AND a.closed_at IS NULL
            AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())`,
        [id, accountId],
      );
      if (row === undefined) return null;
      return { secret: box.open(row.secret), plan: row.plan, expiresAt: row.expires_at };
    },

    rotateSecret(accountId, id, overlapSeconds) {
      return sql.transaction(async (tx) => {
        const [old] = await tx.query<SecretRow>(
          `UPDATE embed_secrets
              SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $3))
            WHERE id = $1 AND account_id = $2 AND ${LIVE} RETURNING ${COLUMNS}`,
          [id, accountId, overlapSeconds],
        );
        if (old === undefined) throw notFound(id);
        // The old one still counts until it expires: a rotation needs room for one more.
        const issued = await withinAccountBound(
          tx,
          accountId,
          { ...bound, max: MAX_EMBED_SECRETS + 1 },
          (inner) => insert(inner, accountId, old.name),
        );
        return { issued, previous: toSecret(old) };
      });
    },

    async revokeSecret(accountId, id) {
      const [row] = await sql.query<SecretRow>(
        `UPDATE embed_secrets SET revoked_at = COALESCE(revoked_at, now())
          WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`,
        [id, accountId],
      );
      if (row === undefined) throw notFound(id);
      return toSecret(row);
    },

    async livePlan(accountId) {
      const [row] = await sql.query<{ plan: string }>(
        'SELECT plan FROM accounts WHERE id = $1 AND closed_at IS NULL',
        [accountId],
      );
      return row?.plan ?? null;
    },

    async keysFromBrowsers(accountId) {
      const [row] = await sql.query<{ allow: boolean }>(
        'SELECT allow_keys_from_browsers AS allow FROM account_cors_settings WHERE account_id = $1',
        [accountId],
      );
      return row?.allow === true;
    },

    async setKeysFromBrowsers(accountId, allow) {
      await withConstraintErrors({ conflict: 'conflict', missing: `account ${accountId} not found` }, () =>
        sql.query(
          `INSERT INTO account_cors_settings (account_id, allow_keys_from_browsers) VALUES ($1, $2)
           ON CONFLICT (account_id) DO UPDATE SET allow_keys_from_browsers = $2, updated_at = now()`,
          [accountId, allow],
        ),
      );
      return allow;
    },
  };
}
