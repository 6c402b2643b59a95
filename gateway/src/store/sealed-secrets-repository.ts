// Everything the secret box sealed, seen across tables: owners' connection secrets
// (connections.secrets), accounts' embed secrets (embed_secrets.secret), the OAuth signing keys'
// private keys (oauth_signing_keys.private_key) and webhook endpoints' signing secrets
// (webhook_endpoints.secrets),
// each stored with the id of the key that sealed it, and one check value per key id
// (secret_key_checks). Used at start, to prove this instance's key ring opens what the fleet
// sealed (security/secret-key-verification.ts), and by the operator's re-seal after a rotation.
import type { SecretBox } from '../security/secret-box.js';
import type { SqlExecutor } from './sql-client.js';

/** What is sealed with one key id. */
export interface SealedCount {
  readonly connections: number;
  readonly signingKeys: number;
  readonly embedSecrets: number;
  readonly webhookSecrets: number;
}

/** One sealed value and where it is stored (for messages). */
export interface SealedSample {
  readonly what: string;
  readonly sealed: Buffer;
}

/** What one re-seal pass did. */
export interface ResealResult {
  /** The key everything was re-sealed with. */
  readonly currentKeyId: string;
  readonly connections: number;
  readonly signingKeys: number;
  readonly embedSecrets: number;
  readonly webhookSecrets: number;
  /** Rows whose seal this instance could not open (a key it lacks): left as they were. */
  readonly unreadable: readonly { readonly what: string; readonly keyId: string }[];
}

export interface SealedSecretsRepository {
  /** Every key id something is sealed with, and how many rows of each kind. */
  countByKey(): Promise<ReadonlyMap<string, SealedCount>>;
  /** Up to `limit` connection secrets and every signing key sealed with `keyId`, newest first. */
  samples(keyId: string, limit: number): Promise<readonly SealedSample[]>;
  /** The check values by key id. */
  checks(): Promise<ReadonlyMap<string, Buffer>>;
  /** Stores `sealed` as the check of `keyId` unless one exists (a concurrent start's wins). */
  addCheck(keyId: string, sealed: Buffer): Promise<void>;
  /** Re-seals every row not sealed with the current key (the secret box's). */
  reseal(): Promise<ResealResult>;
}

const BATCH = 200;

interface Table {
  readonly table: string;
  readonly id: string;
  readonly sealed: string;
  readonly keyId: string;
  readonly label: string;
}

const CONNECTIONS: Table = {
  table: 'connections',
  id: 'id',
  sealed: 'secrets',
  keyId: 'secrets_key_id',
  label: 'connection',
};
const SIGNING_KEYS: Table = {
  table: 'oauth_signing_keys',
  id: 'kid',
  sealed: 'private_key',
  keyId: 'private_key_key_id',
  label: 'OAuth signing key',
};

const WEBHOOK_SECRETS: Table = {
  table: 'webhook_endpoints',
  id: 'id',
  sealed: 'secrets',
  keyId: 'secrets_key_id',
  label: 'webhook endpoint',
};
const EMBED_SECRETS: Table = {
  table: 'embed_secrets',
  id: 'id',
  sealed: 'secret',
  keyId: 'secret_key_id',
  label: 'embed secret',
};

/** Builds the repository over `sql`; `box` re-seals (its current key) and opens (any of its keys). */
export function createSealedSecretsRepository(sql: SqlExecutor, box: SecretBox): SealedSecretsRepository {
  /** Re-seals one table's rows in batches; a row changed meanwhile (compare-and-set) is skipped. */
  async function resealTable(t: Table, box: SecretBox, unreadable: ResealResult['unreadable'][number][]) {
    let resealed = 0;
    let after = '';
    for (;;) {
      const rows = await sql.query<{ id: string; sealed: Buffer; key_id: string | null }>(
        `SELECT ${t.id} AS id, ${t.sealed} AS sealed, ${t.keyId} AS key_id FROM ${t.table}
          WHERE ${t.sealed} IS NOT NULL AND ${t.keyId} IS DISTINCT FROM $1 AND ${t.id} > $2
          ORDER BY ${t.id} LIMIT ${BATCH}`,
        [box.currentKeyId, after],
      );
      for (const row of rows) {
        after = row.id;
        let plaintext: string;
        try {
          plaintext = box.open(row.sealed);
        } catch {
          unreadable.push({ what: `${t.label} ${row.id}`, keyId: row.key_id ?? '(none)' });
          continue;
        }
        // Only if nobody re-wrote the row since it was read: a newer seal is the current key's.
        const updated = await sql.query(
          `UPDATE ${t.table} SET ${t.sealed} = $1, ${t.keyId} = $2
            WHERE ${t.id} = $3 AND ${t.sealed} = $4 RETURNING ${t.id}`,
          [box.seal(plaintext), box.currentKeyId, row.id, row.sealed],
        );
        resealed += updated.length;
      }
      if (rows.length < BATCH) return resealed;
    }
  }

  return {
    async countByKey() {
      const rows = await sql.query<{
        key_id: string;
        connections: number;
        signing_keys: number;
        embed_secrets: number;
        webhooks: number;
      }>(
        `SELECT key_id, sum(connections)::integer AS connections, sum(signing_keys)::integer AS signing_keys,
                sum(embed_secrets)::integer AS embed_secrets, sum(webhooks)::integer AS webhooks FROM (
           SELECT secrets_key_id AS key_id, count(*) AS connections, 0 AS signing_keys, 0 AS embed_secrets,
                  0 AS webhooks
             FROM connections WHERE secrets IS NOT NULL GROUP BY secrets_key_id
           UNION ALL
           SELECT private_key_key_id, 0, count(*), 0, 0 FROM oauth_signing_keys GROUP BY private_key_key_id
           UNION ALL
           SELECT secret_key_id, 0, 0, count(*), 0 FROM embed_secrets GROUP BY secret_key_id
           UNION ALL
           SELECT secrets_key_id, 0, 0, 0, count(*) FROM webhook_endpoints GROUP BY secrets_key_id
         ) sealed GROUP BY key_id ORDER BY key_id`,
      );
      return new Map(
        rows.map((r) => [
          r.key_id,
          {
            connections: Number(r.connections),
            signingKeys: Number(r.signing_keys),
            embedSecrets: Number(r.embed_secrets),
            webhookSecrets: Number(r.webhooks),
          },
        ]),
      );
    },

    async samples(keyId, limit) {
      const connections = await sql.query<{ id: string; sealed: Buffer }>(
        `SELECT id, secrets AS sealed FROM connections WHERE secrets_key_id = $1 AND secrets IS NOT NULL
          ORDER BY updated_at DESC, id LIMIT $2`,
        [keyId, limit],
      );
      const keys = await sql.query<{ id: string; sealed: Buffer }>(
        'SELECT kid AS id, private_key AS sealed FROM oauth_signing_keys WHERE private_key_key_id = $1 ORDER BY created_at DESC',
        [keyId],
      );
      const webhooks = await sql.query<{ id: string; sealed: Buffer }>(
        `SELECT id, secrets AS sealed FROM webhook_endpoints WHERE secrets_key_id = $1
          ORDER BY updated_at DESC, id LIMIT $2`,
        [keyId, limit],
      );
      const embedSecrets = await sql.query<{ id: string; sealed: Buffer }>(
        'SELECT id, secret AS sealed FROM embed_secrets WHERE secret_key_id = $1 ORDER BY created_at DESC, id LIMIT $2',
        [keyId, limit],
      );
      return [
        ...keys.map((r) => ({ what: `OAuth signing key ${r.id}`, sealed: r.sealed })),
        ...webhooks.map((r) => ({ what: `webhook endpoint ${r.id}`, sealed: r.sealed })),
        ...connections.map((r) => ({ what: `connection ${r.id}`, sealed: r.sealed })),
        ...embedSecrets.map((r) => ({ what: `embed secret ${r.id}`, sealed: r.sealed })),
      ];
    },

    async checks() {
      const rows = await sql.query<{ key_id: string; sealed: Buffer }>(
        'SELECT key_id, sealed FROM secret_key_checks',
      );
      return new Map(rows.map((r) => [r.key_id, r.sealed]));
    },

    async addCheck(keyId, sealed) {
      await sql.query(
        'INSERT INTO secret_key_checks (key_id, sealed) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [keyId, sealed],
      );
    },

    async reseal() {
      const unreadable: ResealResult['unreadable'][number][] = [];
      const connections = await resealTable(CONNECTIONS, box, unreadable);
      const signingKeys = await resealTable(SIGNING_KEYS, box, unreadable);
      const embedSecrets = await resealTable(EMBED_SECRETS, box, unreadable);
      const webhookSecrets = await resealTable(WEBHOOK_SECRETS, box, unreadable);
      return {
        currentKeyId: box.currentKeyId,
        connections,
        signingKeys,
        embedSecrets,
        webhookSecrets,
        unreadable,
      };
    },
  };
}
