// The access tokens' signing keys, shared by every gateway instance through the store. The private
// key is sealed with the secret box (like connection credentials) and opened only by the instance
// that signs with it. Creating the first key is race-free (a unique index allows one signer), and
// a rotation supersedes the signer and activates its successor in one transaction that also
// writes the change log, so other instances switch signer within about a second.
import type { SecretBox } from '../security/secret-box.js';
import { createChangeLogRepository } from './change-log-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** A public JWK of an EC key (never the private part). */
export type PublicJwk = Readonly<Record<string, string>>;

/** A signing key as instances load it: public material and its lifecycle. */
export interface SigningKeyRecord {
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly createdAt: Date;
  /** When it became the signer. */
  readonly activatedAt: Date;
  /** When a rotation replaced it as the signer; null while it signs. */
  readonly supersededAt: Date | null;
  /** When it stops verifying (and leaves the JWKS); null while it signs. Usually in the future. */
  readonly retiredAt: Date | null;
}

/** A freshly generated key to store. */
export interface NewSigningKey {
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  /** The private JWK; sealed before it is written. */
  readonly privateJwk: Readonly<Record<string, string>>;
}

/** What a rotation did. */
export interface SigningKeyRotation {
  readonly activated: SigningKeyRecord;
  /** The key(s) that stopped signing, with the moment they retire. */
  readonly superseded: readonly SigningKeyRecord[];
}

/** Signing key rows. */
export interface OAuthSigningKeyRepository {
  /** Every key not yet retired (by the database clock), signer first, then newest first. */
  listLive(): Promise<readonly SigningKeyRecord[]>;
  /** Stores `key` as the signer unless one exists already; true when this call stored it. */
  createFirst(key: NewSigningKey): Promise<boolean>;
  /** Makes `key` the signer; the previous signer keeps verifying for `retireAfterMs` more. */
  rotate(key: NewSigningKey, retireAfterMs: number): Promise<SigningKeyRotation>;
  /** The private JWK of `kid`, opened; null when there is no such key. */
  readPrivateJwk(kid: string): Promise<Readonly<Record<string, string>> | null>;
}

interface SigningKeyRow {
  readonly kid: string;
  readonly public_jwk: PublicJwk;
  readonly created_at: Date;
  readonly activated_at: Date;
  readonly superseded_at: Date | null;
  readonly retired_at: Date | null;
}

const COLUMNS = 'kid, public_jwk, created_at, activated_at, superseded_at, retired_at';

function toRecord(row: SigningKeyRow): SigningKeyRecord {
  return {
    kid: row.kid,
    publicJwk: row.public_jwk,
    createdAt: row.created_at,
    activatedAt: row.activated_at,
    supersededAt: row.superseded_at,
    retiredAt: row.retired_at,
  };
}

const INSERT = `INSERT INTO oauth_signing_keys (kid, public_jwk, private_key, private_key_key_id)
                VALUES ($1, $2::jsonb, $3, $4)`;

/** Builds the signing key repository over `sql`, sealing private keys with `secretBox`. */
export function createOAuthSigningKeyRepository(
  sql: SqlExecutor,
  secretBox: SecretBox,
): OAuthSigningKeyRepository {
  const insertParams = (key: NewSigningKey) => [
    key.kid,
    JSON.stringify(key.publicJwk),
    secretBox.seal(JSON.stringify(key.privateJwk)),
    secretBox.currentKeyId,
  ];

  return {
    async listLive() {
      const rows = await sql.query<SigningKeyRow>(
        `SELECT ${COLUMNS} FROM oauth_signing_keys
          WHERE retired_at IS NULL OR retired_at > now()
          ORDER BY superseded_at DESC NULLS FIRST, activated_at DESC, kid`,
      );
      return rows.map(toRecord);
    },

    createFirst(key) {
      return sql.transaction(async (tx) => {
        // The partial unique index admits one signer: a concurrent first key makes this a no-op.
        const rows = await tx.query<{ kid: string }>(
          `${INSERT} ON CONFLICT DO NOTHING RETURNING kid`,
          insertParams(key),
        );
        if (rows.length === 0) return false;
        await createChangeLogRepository(tx).append('signing_key', key.kid);
        return true;
      });
    },

    rotate(key, retireAfterMs) {
      return sql.transaction(async (tx) => {
        if (tx.kind === 'postgres') {
          // Concurrent rotations queue here instead of tripping over the one-signer index.
          await tx.query(
            `SELECT pg_advisory_xact_lock(hashtext('quarry.oauth-rotate:' || coalesce(current_schema(), '')))`,
          );
        }
        const superseded = await tx.query<SigningKeyRow>(
          `UPDATE oauth_signing_keys
              SET superseded_at = now(), retired_at = now() + $1 * interval '1 millisecond'
            WHERE superseded_at IS NULL RETURNING ${COLUMNS}`,
          [retireAfterMs],
        );
        const [activated] = await tx.query<SigningKeyRow>(
          `${INSERT} RETURNING ${COLUMNS}`,
          insertParams(key),
        );
        await createChangeLogRepository(tx).append('signing_key', key.kid);
        return { activated: toRecord(activated!), superseded: superseded.map(toRecord) };
      });
    },

    async readPrivateJwk(kid) {
      const [row] = await sql.query<{ private_key: Buffer }>(
        'SELECT private_key FROM oauth_signing_keys WHERE kid = $1',
        [kid],
      );
      return row === undefined
        ? null
        : (JSON.parse(secretBox.open(row.private_key)) as Record<string, string>);
    },
  };
}
