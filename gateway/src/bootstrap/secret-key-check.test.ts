// The start-up key check and the re-seal of a rotation, on every store backend: instances that
// share one store, each with its own key ring, as a fleet mid-rotation (or misconfigured) has.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../oauth/signing-key-ring.js';
import type { Keyring } from '../security/keyring.js';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import type { SqlClient } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { checkSecretKeys, SecretKeyCheckError } from './secret-key-check.js';

const backends = await storeBackends('secret key check', 'quarry_key_check');
const OLD = randomBytes(32);
const NEW = randomBytes(32);

/** What one instance with `ring` sees of the shared database. */
const instance = (sql: SqlClient, ring: Keyring): ControlPlaneStore =>
  createControlPlaneStore(sql, { secretBox: createSecretBox(ring) });

/** The check's refusal (its key id and message), or `started`. */
async function start(sql: SqlClient, ring: Keyring): Promise<string> {
  try {
    await checkSecretKeys(instance(sql, ring).sealedSecrets, ring);
    return 'started';
  } catch (error) {
    if (!(error instanceof SecretKeyCheckError)) throw error;
    return `${error.keyId}: ${error.message}`;
  }
}

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`secret key check on ${backend.name}`, () => {
    afterAll(() => backend.teardown());

    describe('a fresh store', () => {
      let sql: SqlClient;
      beforeAll(async () => {
        sql = await backend.fresh();
        await migrate(sql);
      });

      it('takes the first key, then refuses other bytes under its id and an unknown current key', async () => {
        expect(await start(sql, { keys: { k1: OLD }, current: 'k1' })).toBe('started');
        // Nothing is sealed yet: only the check value tells a wrong key apart.
        expect(await start(sql, { keys: { k1: randomBytes(32) }, current: 'k1' })).toMatch(
          /^k1: QUARRY_SECRET_KEY: this instance's key "k1" is not the key "k1" the other instances use/,
        );
        expect(await start(sql, { keys: { k9: randomBytes(32) }, current: 'k9' })).toMatch(
          /^k9: .*key "k9" would seal new secrets, but no instance of this fleet has had it yet/,
        );
        expect(await start(sql, { keys: { k1: OLD }, current: 'k1' })).toBe('started');
      });
    });

    describe('a rotation', () => {
      let sql: SqlClient;
      let ownerId: string;
      let embedSecret: { readonly record: { readonly id: string }; readonly secret: string };
      beforeAll(async () => {
        sql = await backend.fresh();
        await migrate(sql);
        const first = instance(sql, { keys: { k1: OLD }, current: 'k1' });
        await checkSecretKeys(first.sealedSecrets, { keys: { k1: OLD }, current: 'k1' });
        ownerId = (await first.accounts.create({ email: 'owner@example.com', name: 'Owner' })).id;
        await first.connections.create({
          accountId: ownerId,
          name: 'before',
          type: 'postgres',
          config: { host: 'db.example.com' },
          secrets: { password: 'sealed-before' },
        });
        await first.signingKeys.createFirst(await generateSigningKey());
        embedSecret = await first.embed.createSecret(ownerId, 'site');
      });

      it('follows the four steps, refusing each one taken too early', async () => {
        const step1: Keyring = { keys: { k1: OLD, k2: NEW }, current: 'k1' };
        const step2: Keyring = { keys: { k2: NEW, k1: OLD }, current: 'k2' };
        const step4: Keyring = { keys: { k2: NEW }, current: 'k2' };
        // Step 2 before step 1: k2 would seal what instances still on k1 cannot open.
        expect(await start(sql, step2)).toMatch(/^k2: .*would seal new secrets/);
        expect(await start(sql, step1)).toBe('started');
        expect(await start(sql, step2)).toBe('started');
        // A connection made by an instance on step 2 opens on one still on step 1.
        const switched = instance(sql, step2);
        const during = await switched.connections.create({
          accountId: ownerId,
          name: 'during',
          type: 'postgres',
          config: { host: 'db.example.com' },
          secrets: { password: 'sealed-during' },
        });
        expect(await instance(sql, step1).connections.readSecrets(ownerId, during.id)).toEqual({
          password: 'sealed-during',
        });
        // Step 4 before step 3: the old key still seals a connection and the signing key.
        expect(await start(sql, step4)).toMatch(
          /^k1: QUARRY_SECRET_KEY: 1 connection secret\(s\) and 1 OAuth signing key\(s\) and 1 embed secret\(s\) are sealed with key "k1", which this instance does not have/,
        );
        const resealed = await switched.sealedSecrets.reseal();
        expect(resealed).toEqual({
          currentKeyId: 'k2',
          connections: 1,
          signingKeys: 1,
          embedSecrets: 1,
          webhookSecrets: 0,
          unreadable: [],
        });
        expect([...(await switched.sealedSecrets.countByKey())]).toEqual([
          ['k2', { connections: 2, signingKeys: 1, embedSecrets: 1, webhookSecrets: 0 }],
        ]);
        expect(await switched.sealedSecrets.reseal()).toMatchObject({
          connections: 0,
          signingKeys: 0,
          embedSecrets: 0,
        });
        expect(await start(sql, step4)).toBe('started');
        // Everything opens with the new key alone.
        const after = instance(sql, step4);
        expect((await after.embed.findLiveSecret(ownerId, embedSecret.record.id))?.secret).toBe(
          embedSecret.secret,
        );
        const [kid] = (await after.signingKeys.listLive()).map((k) => k.kid);
        expect(await after.signingKeys.readPrivateJwk(kid as string)).toHaveProperty('d');
        const before = (await after.connections.list(ownerId)).find((c) => c.name === 'before');
        expect(await after.connections.readSecrets(ownerId, before?.id as string)).toEqual({
          password: 'sealed-before',
        });
        // A key under the fleet's id with other bytes cannot open the sample rows.
        expect(await start(sql, { keys: { k2: randomBytes(32) }, current: 'k2' })).toMatch(
          /^k2: QUARRY_SECRET_KEY: this instance's key "k2" does not open (OAuth signing key|connection) /,
        );
      });
    });
  });
}
