// The OAuth repositories (clients and signing keys), one spec run against every backend: embedded
// PGlite and the real PostgreSQL (a fresh schema, dropped afterwards).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import { generateClientCredentials } from '../oauth/client-credentials.js';
import { generateSigningKey } from '../oauth/signing-key-ring.js';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from './control-plane-store.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';

const backends = await storeBackends('OAuth store', 'quarry_oauth_store');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`OAuth store on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = createControlPlaneStore(sql, { secretBox });
    });
    afterAll(() => backend.teardown());

    const newAccount = () => store.accounts.create({ email: `o-${unique()}@example.com`, name: 'Owner' });
    const newClient = async (accountId: string, scopes: readonly string[] = ['query']) => {
      const generated = generateClientCredentials();
      const client = await store.oauthClients.create({
        id: generated.id,
        clientId: generated.clientId,
        accountId,
        name: 'reporting',
        secretDigest: generated.secretDigest,
        scopes,
      });
      return { client, generated };
    };

    describe('clients', () => {
      it('stores a client with its digest only, finds it by client_id and by id, lists it', async () => {
        const account = await newAccount();
        const { client, generated } = await newClient(account.id, ['query', 'keys']);
        expect(client).toMatchObject({
          id: generated.id,
          clientId: generated.clientId,
          accountId: account.id,
          scopes: ['query', 'keys'],
          revokedAt: null,
        });
        const found = await store.oauthClients.findCredentials(generated.clientId);
        expect(found?.client).toEqual(client);
        expect(found?.secretDigest.equals(generated.secretDigest)).toBe(true);
        expect(await store.oauthClients.findLive(client.id)).toEqual({ client, plan: 'free' });
        expect(await store.oauthClients.listForAccount(account.id)).toEqual([client]);
        const stored = await sql.query<{ text: string }>(
          `SELECT row_to_json(c)::text AS text FROM oauth_clients c`,
        );
        expect(stored.map((r) => r.text).join('\n')).not.toContain(generated.secret);
      });

      it('refuses a client of an unknown account with NOT_FOUND', async () => {
        await expect(newClient('acc_missing')).rejects.toSatisfy((error) => isStoreError(error, 'NOT_FOUND'));
      });

      it('revokes once, idempotently, with a change-log entry; a revoked client is never found', async () => {
        const account = await newAccount();
        const { client } = await newClient(account.id);
        const before = await store.changes.latestId();
        const revoked = await store.oauthClients.revoke(account.id, client.id);
        expect(revoked.revokedAt).toBeInstanceOf(Date);
        expect(await store.oauthClients.revoke(account.id, client.id)).toEqual(revoked);
        const changes = await store.changes.since(before);
        expect(changes.map((c) => [c.kind, c.ref])).toEqual([['oauth_client', client.id]]);
        expect(await store.oauthClients.findCredentials(client.clientId)).toBeNull();
        expect(await store.oauthClients.findLive(client.id)).toBeNull();
        expect(await store.oauthClients.listForAccount(account.id)).toEqual([]);
      });

      it("cannot revoke another account's client", async () => {
        const owner = await newAccount();
        const other = await newAccount();
        const { client } = await newClient(owner.id);
        await expect(store.oauthClients.revoke(other.id, client.id)).rejects.toSatisfy((error) =>
          isStoreError(error, 'NOT_FOUND'),
        );
        expect(await store.oauthClients.findLive(client.id)).not.toBeNull();
      });

      it('follows the account: its plan, and nothing once it is closed', async () => {
        const account = await newAccount();
        const { client } = await newClient(account.id);
        await store.accounts.setPlan(account.id, 'smb');
        expect((await store.oauthClients.findLive(client.id))?.plan).toBe('smb');
        await sql.query('UPDATE accounts SET closed_at = now() WHERE id = $1', [account.id]);
        expect(await store.oauthClients.findLive(client.id)).toBeNull();
        expect(await store.oauthClients.findCredentials(client.clientId)).toBeNull();
      });
    });

    describe('signing keys', () => {
      let keysDb: SqlClient;
      let keys: ControlPlaneStore['signingKeys'];

      beforeAll(async () => {
        keysDb = await backend.fresh();
        await migrate(keysDb);
        keys = createControlPlaneStore(keysDb, { secretBox }).signingKeys;
      });

      it('creates exactly one first key when several instances race for it', async () => {
        const other = createControlPlaneStore(await backend.pool(keysDb, 4), { secretBox }).signingKeys;
        const candidates = await Promise.all([1, 2, 3, 4].map(() => generateSigningKey()));
        const created = await Promise.all(
          candidates.map((key, i) => (i % 2 === 0 ? keys : other).createFirst(key)),
        );
        expect(created.filter(Boolean)).toHaveLength(1);
        const live = await keys.listLive();
        expect(live).toHaveLength(1);
        expect(live[0]).toMatchObject({ supersededAt: null, retiredAt: null });
        expect(candidates.map((c) => c.kid)).toContain(live[0]?.kid);
      });

      it('seals the private key and opens it again', async () => {
        const [signer] = await keys.listLive();
        const jwk = await keys.readPrivateJwk(signer?.kid as string);
        expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', x: signer?.publicJwk.x });
        expect(typeof jwk?.d).toBe('string');
        const rows = await keysDb.query<{ text: string }>(
          `SELECT encode(private_key, 'escape') AS text FROM oauth_signing_keys`,
        );
        for (const row of rows) expect(row.text).not.toContain(jwk?.d as string);
        expect(await keys.readPrivateJwk('no-such-kid')).toBeNull();
      });

      it('rotates: a new signer, the previous one retiring after the given delay', async () => {
        const [previous] = await keys.listLive();
        const next = await generateSigningKey();
        const before = await keysDb.query<{ id: number }>(
          'SELECT coalesce(max(id), 0) AS id FROM change_log',
        );
        const rotation = await keys.rotate(next, 600_000);
        expect(rotation.activated).toMatchObject({ kid: next.kid, supersededAt: null, retiredAt: null });
        expect(rotation.superseded.map((k) => k.kid)).toEqual([previous?.kid]);
        const retiring = rotation.superseded[0];
        const delay = (retiring?.retiredAt?.getTime() ?? 0) - (retiring?.supersededAt?.getTime() ?? 0);
        expect(delay).toBe(600_000);
        // Signer first, then the retiring key.
        expect((await keys.listLive()).map((k) => k.kid)).toEqual([next.kid, previous?.kid]);
        const changes = await keysDb.query<{ kind: string; ref: string }>(
          'SELECT kind, ref FROM change_log WHERE id > $1',
          [before[0]?.id ?? 0],
        );
        expect(changes).toEqual([{ kind: 'signing_key', ref: next.kid }]);
      });

      it('drops retired keys from the live set', async () => {
        const signerBefore = (await keys.listLive())[0];
        await keys.rotate(await generateSigningKey(), 0);
        const live = await keys.listLive();
        expect(live.map((k) => k.kid)).not.toContain(signerBefore?.kid);
        expect(live.filter((k) => k.supersededAt === null)).toHaveLength(1);
      });

      it('serialises concurrent rotations, leaving exactly one signer', async () => {
        const other = createControlPlaneStore(await backend.pool(keysDb, 4), { secretBox }).signingKeys;
        const next = await Promise.all([1, 2, 3].map(() => generateSigningKey()));
        await Promise.all(next.map((key, i) => (i % 2 === 0 ? keys : other).rotate(key, 600_000)));
        const live = await keys.listLive();
        expect(live.filter((k) => k.supersededAt === null)).toHaveLength(1);
        for (const key of next) expect(live.map((k) => k.kid)).toContain(key.kid);
      });
    });
  });
}
