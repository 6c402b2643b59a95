// What one account may hold, on both store backends: the bounds hold under a burst of parallel
// creations (the account's row lock serialises them), count only live rows, leave other accounts
// alone, and an analytic keeps only its newest versions.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import { generateApiKey } from '../security/api-key.js';
import { createSecretBox } from '../security/secret-box.js';
import type { AccountLimits } from './account-limits.js';
import { type ControlPlaneStore, createControlPlaneStore } from './control-plane-store.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';

const backends = await storeBackends('account limits', 'quarry_limits');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');
const limits: AccountLimits = { connections: 3, analytics: 3, versionsKept: 2, keys: 4, oauthClients: 2 };
const DEFINITION = { connection: 'wh', sql: 'SELECT 1 AS one', params: {} };

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`account limits on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = createControlPlaneStore(sql, { secretBox, limits });
    });
    afterAll(() => backend.teardown());

    const newAccount = () => store.accounts.create({ email: `a-${unique()}@example.com`, name: 'a' });
    const newKey = (accountId: string) => {
      const generated = generateApiKey('live');
      return store.keys.create({
        accountId,
        name: 'k',
        prefix: generated.prefix,
        digest: generated.digest,
        scopes: ['query'],
      });
    };
    /** Settles every promise and returns how many were refused by the bound. */
    const refusedByLimit = async (attempts: readonly Promise<unknown>[]) => {
      const settled = await Promise.allSettled(attempts);
      for (const s of settled) {
        if (s.status === 'rejected' && !isStoreError(s.reason, 'LIMIT')) throw s.reason;
      }
      return settled.filter((s) => s.status === 'rejected').length;
    };

    it('holds the key bound under 12 parallel creations, counting only live keys', async () => {
      const account = await newAccount();
      expect(await refusedByLimit(Array.from({ length: 12 }, () => newKey(account.id)))).toBe(8);
      expect(await store.keys.listForAccount(account.id)).toHaveLength(4);
      const error = await newKey(account.id).catch((e: unknown) => e);
      expect(isStoreError(error, 'LIMIT')).toBe(true);
      expect((error as Error).message).toMatch(/already has 4 live keys.*QUARRY_MAX_KEYS_PER_ACCOUNT/);
      // A revoked key frees its room; another account was never limited by this one.
      const [first] = await store.keys.listForAccount(account.id);
      await store.keys.revoke(account.id, first!.id);
      await expect(newKey(account.id)).resolves.toMatchObject({ accountId: account.id });
      const other = await newAccount();
      await expect(newKey(other.id)).resolves.toMatchObject({ accountId: other.id });
    });

    it('holds the connection bound under parallel creations, and a deleted one frees room', async () => {
      const account = await newAccount();
      const create = (i: number) =>
        store.connections.create({ accountId: account.id, name: `c${i}`, type: 'postgres', config: {} });
      expect(await refusedByLimit(Array.from({ length: 8 }, (_, i) => create(i)))).toBe(5);
      const live = await store.connections.list(account.id);
      expect(live).toHaveLength(3);
      await store.connections.delete(account.id, live[0]!.id);
      await expect(create(99)).resolves.toMatchObject({ name: 'c99' });
    });

    it('holds the OAuth client bound, counting only clients not revoked', async () => {
      const account = await newAccount();
      const create = () => {
        const id = unique();
        return store.oauthClients.create({
          id: `ocl_${id}`,
          clientId: `qcid_${id}`,
          accountId: account.id,
          name: 'c',
          secretDigest: randomBytes(32),
          scopes: ['query'],
        });
      };
      expect(await refusedByLimit(Array.from({ length: 5 }, create))).toBe(3);
      const [first] = await store.oauthClients.listForAccount(account.id);
      await store.oauthClients.revoke(account.id, first!.id);
      await expect(create()).resolves.toMatchObject({ accountId: account.id });
    });

    it('counts analytic names held, deleted ones included, and re-using one of them is free', async () => {
      const account = await newAccount();
      const create = (name: string) =>
        store.analytics.create({ accountId: account.id, name, definition: DEFINITION });
      const names = Array.from({ length: 6 }, () => `lim-${unique()}`);
      expect(await refusedByLimit(names.map(create))).toBe(3);
      const held = (await store.analytics.listByOwner(account.id)).map((a) => a.name);
      expect(held).toHaveLength(3);
      // Deleting does not give the room back: the name stays the owner's…
      await store.analytics.delete(account.id, held[0]!);
      const error = await create(`lim-${unique()}`).catch((e: unknown) => e);
      expect(isStoreError(error, 'LIMIT')).toBe(true);
      expect((error as Error).message).toMatch(/QUARRY_MAX_ANALYTICS_PER_ACCOUNT/);
      // …and bringing that name back takes none.
      await expect(create(held[0]!)).resolves.toMatchObject({ name: held[0], version: 1 });
    });

    it('keeps only the newest versions of an analytic', async () => {
      const account = await newAccount();
      const name = `ver-${unique()}`;
      await store.analytics.create({ accountId: account.id, name, definition: DEFINITION });
      for (let i = 2; i <= 5; i++) {
        await store.analytics.update(account.id, name, { definition: { ...DEFINITION, sql: `SELECT ${i}` } });
      }
      const versions = await store.analytics.listVersions(account.id, name);
      expect(versions.map((v) => v.version)).toEqual([4, 5]);
      expect(await store.analytics.get(name, { version: 3 })).toBeNull();
      expect((await store.analytics.get(name))?.version).toBe(5);
    });
  });
}
