// One spec for the control-plane store, run against every backend (Kysely style): embedded
// PGlite (one pristine database, cloned per group) and the real PostgreSQL at
// QUARRY_TEST_PG_URL (a fresh schema per run, dropped afterwards).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import { generateApiKey, parseApiKey } from '../security/api-key.js';
import { createSecretBox } from '../security/secret-box.js';
import { isSecurityError } from '../security/security-error.js';
import { createChangeFeed } from './change-feed.js';
import { type ControlPlaneStore, createControlPlaneStore } from './control-plane-store.js';
import { loadMigrations, migrate } from './migrate.js';
import { createPgliteClient } from './pglite-client.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';

const backends = await storeBackends('control-plane store', 'quarry_store');
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const secretBox = createSecretBox({ keys: { k1: oldKey }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`control-plane store on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = createControlPlaneStore(sql, { secretBox });
    });
    afterAll(() => backend.teardown());

    const newAccount = (label = 'owner') =>
      store.accounts.create({ email: `${label}-${unique()}@example.com`, name: label });

    describe('migrations', () => {
      it('apply once, and a second run finds nothing to do', async () => {
        const db = await backend.fresh();
        const names = (await loadMigrations()).map((m) => m.name);
        expect(names[0]).toBe('001_init');
        expect((await migrate(db)).applied).toEqual(names);
        expect((await migrate(db)).applied).toEqual([]);
        // 004's optimistic reserve has no caller since 005; 006 drops it.
        const functions = await db.query<{ proname: string }>(
          `SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.proname LIKE 'quarry_%' ORDER BY 1`,
        );
        expect(functions.map((f) => f.proname)).not.toContain('quarry_reserve_calls_optimistic');
        expect(functions.map((f) => f.proname)).toContain('quarry_charge_calls');
        const tables = await db.query<{ table_name: string }>(
          `SELECT t.table_name FROM information_schema.tables t
             JOIN pg_class c ON c.relname = t.table_name AND c.relnamespace = current_schema()::regnamespace
            WHERE t.table_schema = current_schema() AND NOT c.relispartition ORDER BY 1`,
        );
        expect(tables.map((t) => t.table_name)).toEqual([
          'account_alerts',
          'account_cors_settings',
          'account_mcp_settings',
          'account_passwords',
          'account_tools',
          'accounts',
          'analytic_health',
          'analytic_names',
          'analytic_version_calls',
          'analytic_version_pins',
          'analytic_versions',
          'analytics',
          'api_keys',
          'billing_accounts',
          'change_log',
          'closed_periods',
          'connections',
          'console_sessions',
          'embed_secrets',
          'failed_calls',
          'idempotency_keys',
          'listings',
          'oauth_clients',
          'oauth_signing_keys',
          'owner_adjustments',
          'owner_payouts',
          'owner_statement_lines',
          'password_resets',
          'payg_invoices',
          'payment_adjustments',
          'payment_events',
          'payout_accounts',
          'period_closes',
          'query_jobs',
          'schema_migrations',
          'secret_key_checks',
          'usage_account_days',
          'usage_analytic_caller_days',
          'usage_analytic_callers',
          'usage_counters',
          'usage_events',
          'usage_owner_days',
          'webhook_attempts',
          'webhook_deliveries',
          'webhook_endpoints',
          'webhook_events',
        ]);
        // The ledger's months (migration 017): this month and the next two, and the default.
        const months = await db.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'usage_events'::regclass ORDER BY 1`,
        );
        expect(months.map((m) => m.name)).toContain('usage_events_default');
        expect(months.length).toBe(4);
      });

      it('two migrators starting at once apply each file exactly once', async () => {
        const first = await backend.fresh();
        const second = await backend.pool(first);
        const results = await Promise.all([migrate(first), migrate(second), migrate(first)]);
        const names = (await loadMigrations()).map((m) => m.name);
        expect(results.flatMap((r) => r.applied).sort()).toEqual(names);
        const rows = await second.query<{ n: number }>('SELECT count(*) AS n FROM schema_migrations');
        expect(rows[0]?.n).toBe(names.length);
      });

      it("give names deleted before 007 to their last owner (a live analytic's owner first)", async () => {
        const db = await backend.fresh();
        const all = await loadMigrations();
        const upTo = all.findIndex((m) => m.name.startsWith('007_'));
        expect(upTo).toBeGreaterThan(0);
        await migrate(db, { migrations: all.slice(0, upTo) });
        const old = createControlPlaneStore(db, { secretBox });
        const [a, b, c] = await Promise.all(
          ['a', 'b', 'c'].map((l) => old.accounts.create({ email: `${l}-${unique()}@example.com`, name: l })),
        );
        // What the old code allowed: A deletes "moved", B takes it; A deletes "left" and nobody takes it.
        const row = async (account: string, name: string, deleted: boolean) => {
          const id = `ana_${unique()}`;
          await db.query(
            `INSERT INTO analytics (id, account_id, name, current_version, visibility, deleted_at)
             VALUES ($1, $2, $3, 1, 'public', ${deleted ? "now() - interval '1 day'" : 'NULL'})`,
            [id, account, name],
          );
          await db.query(
            `INSERT INTO analytic_versions (analytic_id, version, definition) VALUES ($1, 1, '{}'::jsonb)`,
            [id],
          );
        };
        await row(a!.id, 'moved', true);
        await row(b!.id, 'moved', false);
        await row(a!.id, 'left', true);
        await migrate(db);
        const store007 = createControlPlaneStore(db, { secretBox });
        const attempt = (account: string, name: string) =>
          store007.analytics.create({ accountId: account, name, definition: { sql: 'SELECT 1' } });
        await expect(attempt(c!.id, 'left')).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
        await expect(attempt(b!.id, 'left')).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
        expect((await attempt(a!.id, 'left')).accountId).toBe(a!.id);
        await store007.analytics.delete(b!.id, 'moved');
        await expect(attempt(a!.id, 'moved')).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
        expect((await attempt(b!.id, 'moved')).accountId).toBe(b!.id);
      });

      it('refuse to run when an applied file has changed', async () => {
        await expect(migrate(sql, { migrations: [{ name: '001_init', sql: 'SELECT 1' }] })).rejects.toThrow(
          /001_init was changed/,
        );
      });
    });

    describe('sql client', () => {
      it('keeps concurrent transactions and queries apart', async () => {
        const table = `tx_probe_${unique()}`;
        await sql.query(`CREATE TABLE ${table} (v text)`);
        const failing = sql.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ('rolled back')`);
          await new Promise((resolve) => setTimeout(resolve, 30));
          throw new Error('abort');
        });
        const committed = sql.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ('committed')`);
        });
        const plain = sql.query(`INSERT INTO ${table} VALUES ('autocommit')`);
        await expect(failing).rejects.toThrow('abort');
        await committed;
        await plain;
        const rows = await sql.query<{ v: string }>(`SELECT v FROM ${table} ORDER BY v`);
        expect(rows.map((r) => r.v)).toEqual(['autocommit', 'committed']);
      });

      it('rolls back a failed nested transaction only', async () => {
        const table = `nest_probe_${unique()}`;
        await sql.query(`CREATE TABLE ${table} (v text)`);
        await sql.transaction(async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ('outer')`);
          await expect(
            tx.transaction(async (inner) => {
              await inner.query(`INSERT INTO ${table} VALUES ('inner')`);
              throw new Error('inner failed');
            }),
          ).rejects.toThrow('inner failed');
        });
        expect(await sql.query(`SELECT v FROM ${table}`)).toEqual([{ v: 'outer' }]);
      });

      it('returns int8 as numbers, bytea as Buffer, timestamptz as Date', async () => {
        const [row] = await sql.query<{ n: unknown; b: unknown; t: unknown }>(
          `SELECT 9007199254740991::int8 AS n, '\\xdeadbeef'::bytea AS b, now() AS t`,
        );
        expect(row?.n).toBe(Number.MAX_SAFE_INTEGER);
        expect(Buffer.isBuffer(row?.b) && row.b.toString('hex')).toBe('deadbeef');
        expect(row?.t).toBeInstanceOf(Date);
      });
    });

    describe('accounts', () => {
      it('refuse a duplicate email in any case with CONFLICT', async () => {
        const email = `Ann-${unique()}@Example.com`;
        const account = await store.accounts.create({ email, name: 'Ann' });
        expect(account).toMatchObject({ email, name: 'Ann', plan: 'free', closedAt: null });
        expect(account.id).toMatch(/^acc_[0-9A-Za-z]{22}$/);
        const duplicate = store.accounts.create({ email: email.toUpperCase(), name: 'Other' });
        await expect(duplicate).rejects.toSatisfy((error) => isStoreError(error, 'CONFLICT'));
        expect(await store.accounts.findByEmail(email.toLowerCase())).toEqual(account);
        expect(await store.accounts.get(account.id)).toEqual(account);
        expect((await store.accounts.list({ limit: 1000 })).map((a) => a.id)).toContain(account.id);
      });

      it('change plan, and NOT_FOUND for an unknown account', async () => {
        const account = await newAccount();
        expect((await store.accounts.setPlan(account.id, 'smb')).plan).toBe('smb');
        expect((await store.accounts.get(account.id))?.plan).toBe('smb');
        await expect(store.accounts.setPlan('acc_missing', 'smb')).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
      });

      it('roll back every write of a failed store transaction', async () => {
        const email = `tx-${unique()}@example.com`;
        await expect(
          store.transaction(async (tx) => {
            const account = await tx.accounts.create({ email, name: 'Tx' });
            const key = generateApiKey();
            await tx.keys.create({
              accountId: account.id,
              name: 'default',
              prefix: key.prefix,
              digest: key.digest,
            });
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await store.accounts.findByEmail(email)).toBeNull();
      });
    });

    describe('api keys', () => {
      it('are found by the digest of the presented secret, with their account', async () => {
        const account = await newAccount();
        const generated = generateApiKey();
        const key = await store.keys.create({
          accountId: account.id,
          name: 'ci',
          prefix: generated.prefix,
          digest: generated.digest,
          scopes: ['query', 'keys:write'],
        });
        expect(key).toMatchObject({ name: 'ci', prefix: generated.prefix, scopes: ['query', 'keys:write'] });
        const parsed = parseApiKey(generated.secret);
        if (!parsed.ok) throw new Error(parsed.reason);
        const found = await store.keys.findByDigest(parsed.digest);
        expect(found?.key).toEqual(key);
        expect(found?.account).toEqual(account);
        expect(await store.keys.findByDigest(generateApiKey().digest)).toBeNull();
      });

      it('are listed without their digest', async () => {
        const account = await newAccount();
        const generated = generateApiKey();
        await store.keys.create({
          accountId: account.id,
          name: 'a',
          prefix: generated.prefix,
          digest: generated.digest,
        });
        const listed = await store.keys.listForAccount(account.id);
        expect(listed).toHaveLength(1);
        expect(Object.keys(listed[0]!)).not.toContain('digest');
        expect(JSON.stringify(listed)).not.toContain(generated.digest.toString('hex'));
        expect(JSON.stringify(listed)).not.toContain(generated.digest.toString('base64'));
      });

      it('stop authenticating once revoked; revoking again changes nothing', async () => {
        const account = await newAccount();
        const generated = generateApiKey();
        const key = await store.keys.create({
          accountId: account.id,
          name: 'r',
          prefix: generated.prefix,
          digest: generated.digest,
        });
        const before = await store.changes.latestId();
        const revoked = await store.keys.revoke(account.id, key.id);
        expect(revoked.revokedAt).toBeInstanceOf(Date);
        expect(await store.keys.findByDigest(generated.digest)).toBeNull();
        const again = await store.keys.revoke(account.id, key.id);
        expect(again.revokedAt).toEqual(revoked.revokedAt);
        const events = (await store.changes.since(before)).filter((e) => e.ref === key.id);
        expect(events.map((e) => e.kind)).toEqual(['key']);
        expect(await store.keys.listForAccount(account.id)).toEqual([]);
        expect(await store.keys.listForAccount(account.id, { includeRevoked: true })).toHaveLength(1);
      });

      it('cannot be revoked through another account (NOT_FOUND)', async () => {
        const owner = await newAccount();
        const other = await newAccount('other');
        const generated = generateApiKey();
        const key = await store.keys.create({
          accountId: owner.id,
          name: 'x',
          prefix: generated.prefix,
          digest: generated.digest,
        });
        await expect(store.keys.revoke(other.id, key.id)).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        expect(await store.keys.findByDigest(generated.digest)).not.toBeNull();
      });

      it('stop authenticating once expired', async () => {
        const account = await newAccount();
        const expired = generateApiKey();
        const valid = generateApiKey();
        await store.keys.create({
          accountId: account.id,
          name: 'old',
          prefix: expired.prefix,
          digest: expired.digest,
          expiresAt: new Date(Date.now() - 60_000),
        });
        await store.keys.create({
          accountId: account.id,
          name: 'new',
          prefix: valid.prefix,
          digest: valid.digest,
          expiresAt: new Date(Date.now() + 3_600_000),
        });
        expect(await store.keys.findByDigest(expired.digest)).toBeNull();
        expect((await store.keys.findByDigest(valid.digest))?.key.name).toBe('new');
      });

      it('for an unknown account, or a reused digest, are refused', async () => {
        const generated = generateApiKey();
        const input = {
          accountId: 'acc_nobody',
          name: 'k',
          prefix: generated.prefix,
          digest: generated.digest,
        };
        await expect(store.keys.create(input)).rejects.toSatisfy((e) => isStoreError(e, 'NOT_FOUND'));
        const account = await newAccount();
        await store.keys.create({ ...input, accountId: account.id });
        await expect(store.keys.create({ ...input, accountId: account.id })).rejects.toSatisfy((e) =>
          isStoreError(e, 'CONFLICT'),
        );
      });

      it('carry a rate-limit override that can be lifted, announced in the change log', async () => {
        const account = await newAccount();
        const generated = generateApiKey();
        const key = await store.keys.create({
          accountId: account.id,
          name: 'rl',
          prefix: generated.prefix,
          digest: generated.digest,
        });
        const before = await store.changes.latestId();
        expect((await store.keys.setRateLimit(key.id, { perSecond: 5, burst: 10 })).rateLimit).toEqual({
          perSecond: 5,
          burst: 10,
        });
        expect((await store.keys.findByDigest(generated.digest))?.key.rateLimit).toEqual({
          perSecond: 5,
          burst: 10,
        });
        expect((await store.keys.setRateLimit(key.id, null)).rateLimit).toBeNull();
        expect((await store.changes.since(before)).filter((e) => e.ref === key.id)).toHaveLength(2);
      });
    });

    describe('connections', () => {
      const password = `hunter2-${unique()}-secret`;

      it('store secrets only encrypted, and decrypt them on request', async () => {
        const account = await newAccount();
        const connection = await store.connections.create({
          accountId: account.id,
          name: 'warehouse',
          type: 'postgres',
          config: { host: 'db.example.com', port: 5432, user: 'reader' },
          secrets: { password },
        });
        expect(connection).toMatchObject({
          name: 'warehouse',
          type: 'postgres',
          config: { host: 'db.example.com', port: 5432, user: 'reader' },
          secretFields: ['password'],
        });
        expect(JSON.stringify(connection)).not.toContain(password);
        const [raw] = await sql.query<Record<string, unknown>>('SELECT * FROM connections WHERE id = $1', [
          connection.id,
        ]);
        for (const value of Object.values(raw!)) {
          const text = Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value);
          expect(text).not.toContain(password);
        }
        expect(raw?.secrets_key_id).toBe('k1');
        expect(await store.connections.readSecrets(account.id, connection.id)).toEqual({ password });
        expect(await store.connections.get(account.id, connection.id)).toEqual(connection);
        expect(await store.connections.findByName(account.id, 'warehouse')).toEqual(connection);
      });

      it('stay readable after the secret key rotates, and unreadable without it', async () => {
        const account = await newAccount();
        const before = await store.connections.create({
          accountId: account.id,
          name: 'old',
          type: 'postgres',
          config: {},
          secrets: { password },
        });
        const rotated = createControlPlaneStore(sql, {
          secretBox: createSecretBox({ keys: { k1: oldKey, k2: newKey }, current: 'k2' }),
        });
        const after = await rotated.connections.create({
          accountId: account.id,
          name: 'new',
          type: 'postgres',
          config: {},
          secrets: { password: 'p2' },
        });
        expect(await rotated.connections.readSecrets(account.id, before.id)).toEqual({ password });
        expect(await rotated.connections.readSecrets(account.id, after.id)).toEqual({ password: 'p2' });
        const [row] = await sql.query<{ secrets_key_id: string }>(
          'SELECT secrets_key_id FROM connections WHERE id = $1',
          [after.id],
        );
        expect(row?.secrets_key_id).toBe('k2');
        const forgetful = createControlPlaneStore(sql, {
          secretBox: createSecretBox({ keys: { k2: newKey }, current: 'k2' }),
        });
        await expect(forgetful.connections.readSecrets(account.id, before.id)).rejects.toSatisfy((e) =>
          isSecurityError(e, 'SECRET_KEY_UNKNOWN'),
        );
      });

      it('refuse a duplicate name; deleting frees it', async () => {
        const account = await newAccount();
        const input = { accountId: account.id, name: 'dup', type: 'mysql', config: { host: 'h' } };
        const first = await store.connections.create(input);
        await expect(store.connections.create(input)).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
        // Another account may use the same name.
        const other = await newAccount('other');
        await store.connections.create({ ...input, accountId: other.id });
        await store.connections.delete(account.id, first.id);
        expect(await store.connections.get(account.id, first.id)).toBeNull();
        await expect(store.connections.readSecrets(account.id, first.id)).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        await expect(store.connections.delete(account.id, first.id)).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        const second = await store.connections.create(input);
        expect(second.id).not.toBe(first.id);
        expect((await store.connections.list(account.id)).map((c) => c.id)).toEqual([second.id]);
      });
    });

    describe('analytics', () => {
      const definition = (sqlText: string) => ({ connection: 'demo', sql: sqlText, params: {} });

      it('keep every version when updated', async () => {
        const owner = await newAccount();
        const name = `sales-${unique()}`;
        const created = await store.analytics.create({
          accountId: owner.id,
          name,
          definition: definition('SELECT 1'),
        });
        expect(created).toMatchObject({ name, version: 1, currentVersion: 1, visibility: 'private' });
        expect(created.id).toMatch(/^ana_/);
        const updated = await store.analytics.update(owner.id, name, {
          definition: definition('SELECT 2'),
          visibility: 'public',
        });
        expect(updated).toMatchObject({ version: 2, currentVersion: 2, visibility: 'public' });
        expect((await store.analytics.get(name))?.definition).toEqual(definition('SELECT 2'));
        expect((await store.analytics.get(name, { version: 1 }))?.definition).toEqual(definition('SELECT 1'));
        expect(await store.analytics.get(name, { version: 3 })).toBeNull();
        const versions = await store.analytics.listVersions(owner.id, name);
        expect(versions.map((v) => v.version)).toEqual([1, 2]);
      });

      it('number concurrent updates without gaps or collisions', async () => {
        const owner = await newAccount();
        const name = `busy-${unique()}`;
        await store.analytics.create({ accountId: owner.id, name, definition: definition('SELECT 0') });
        const updates = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            store.analytics.update(owner.id, name, { definition: definition(`SELECT ${i + 1}`) }),
          ),
        );
        expect(updates.map((u) => u.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
        expect((await store.analytics.get(name))?.currentVersion).toBe(9);
      });

      it('can only be changed or deleted by their owner', async () => {
        const owner = await newAccount();
        const intruder = await newAccount('intruder');
        const name = `mine-${unique()}`;
        await store.analytics.create({ accountId: owner.id, name, definition: definition('SELECT 1') });
        const update = store.analytics.update(intruder.id, name, { definition: definition('SELECT 666') });
        await expect(update).rejects.toSatisfy((e) => isStoreError(e, 'NOT_FOUND'));
        await expect(store.analytics.delete(intruder.id, name)).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        expect((await store.analytics.get(name))?.definition).toEqual(definition('SELECT 1'));
      });

      it("have globally unique names; a deleted analytic's name stays its owner's", async () => {
        const first = await newAccount();
        const second = await newAccount('second');
        const name = `global-${unique()}`;
        const original = await store.analytics.create({
          accountId: first.id,
          name,
          definition: definition('SELECT 1'),
        });
        const clash = () =>
          store.analytics.create({ accountId: second.id, name, definition: definition('SELECT 666') });
        const taken = (e: unknown) =>
          isStoreError(e, 'CONFLICT') && e.message === `The analytic name "${name}" is taken.`;
        await expect(clash()).rejects.toSatisfy(taken);
        await store.analytics.delete(first.id, name);
        expect(await store.analytics.get(name)).toBeNull();
        expect(await store.analytics.listByOwner(first.id)).toEqual([]);
        // Existing integrations still call this name: nobody else may put new SQL behind it.
        await expect(clash()).rejects.toSatisfy(taken);
        expect(await store.analytics.get(name)).toBeNull();
        // Its owner may bring it back (a new analytic, version 1).
        const reborn = await store.analytics.create({
          accountId: first.id,
          name,
          definition: definition('SELECT 2'),
        });
        expect(reborn.id).not.toBe(original.id);
        expect(reborn).toMatchObject({ accountId: first.id, version: 1 });
        // The deleted analytic's versions are kept.
        const [kept] = await sql.query<{ n: number }>(
          'SELECT count(*) AS n FROM analytic_versions WHERE analytic_id = $1',
          [original.id],
        );
        expect(kept?.n).toBe(1);
      });

      it('give the same answer for a private, a public and a deleted name', async () => {
        const owner = await newAccount();
        const stranger = await newAccount('stranger');
        const tag = unique();
        await store.analytics.create({
          accountId: owner.id,
          name: `pub-${tag}`,
          definition: definition('SELECT 1'),
          visibility: 'public',
        });
        await store.analytics.create({
          accountId: owner.id,
          name: `priv-${tag}`,
          definition: definition('SELECT 1'),
        });
        await store.analytics.create({
          accountId: owner.id,
          name: `gone-${tag}`,
          definition: definition('SELECT 1'),
        });
        await store.analytics.delete(owner.id, `gone-${tag}`);
        const messages: string[] = [];
        for (const kind of ['pub', 'priv', 'gone']) {
          const error = await store.analytics
            .create({ accountId: stranger.id, name: `${kind}-${tag}`, definition: definition('SELECT 2') })
            .catch((e: unknown) => e);
          expect(isStoreError(error, 'CONFLICT'), String(error)).toBe(true);
          messages.push((error as Error).message.replace(`${kind}-${tag}`, 'NAME'));
        }
        expect(new Set(messages)).toEqual(new Set(['The analytic name "NAME" is taken.']));
        for (const message of messages) expect(message).not.toMatch(/private|public|deleted|owner|acc_/);
      });

      it('hold one name for one account when two create it at once', async () => {
        const a = await newAccount('racer-a');
        const b = await newAccount('racer-b');
        const name = `race-${unique()}`;
        const pooled = createControlPlaneStore(await backend.pool(sql), { secretBox });
        const results = await Promise.allSettled([
          store.analytics.create({ accountId: a.id, name, definition: definition('SELECT 1') }),
          pooled.analytics.create({ accountId: b.id, name, definition: definition('SELECT 2') }),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const winner = (await store.analytics.get(name))?.accountId;
        const loser = winner === a.id ? b : a;
        await store.analytics.delete(winner as string, name);
        await expect(
          store.analytics.create({ accountId: loser.id, name, definition: definition('SELECT 3') }),
        ).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
      });

      it('are listed to exactly the accounts allowed to see them', async () => {
        const owner = await newAccount();
        const friend = await newAccount('friend');
        const stranger = await newAccount('stranger');
        const tag = unique();
        const create = (
          name: string,
          visibility: 'public' | 'private' | 'shared',
          sharedWith: string[] = [],
        ) =>
          store.analytics.create({
            accountId: owner.id,
            name: `${name}-${tag}`,
            definition: definition('SELECT 1'),
            visibility,
            sharedWith,
          });
        await create('pub', 'public');
        await create('priv', 'private');
        await create('shared', 'shared', [friend.id]);
        const visible = async (accountId: string) =>
          (await store.analytics.listVisibleTo(accountId)).map((a) => a.name).filter((n) => n.endsWith(tag));
        expect(await visible(owner.id)).toEqual([`priv-${tag}`, `pub-${tag}`, `shared-${tag}`]);
        expect(await visible(friend.id)).toEqual([`pub-${tag}`, `shared-${tag}`]);
        expect(await visible(stranger.id)).toEqual([`pub-${tag}`]);
        expect((await store.analytics.listByOwner(owner.id)).map((a) => a.name)).toHaveLength(3);
        // Sharing can be withdrawn by an update.
        await store.analytics.update(owner.id, `shared-${tag}`, {
          definition: definition('SELECT 1'),
          sharedWith: [],
        });
        expect(await visible(friend.id)).toEqual([`pub-${tag}`]);
      });
    });

    describe('agent tools', () => {
      const definition = { connection: 'demo', sql: 'SELECT 1', params: {} };

      it('are the account’s own analytics and those it added that it may still call', async () => {
        const [owner, caller, stranger] = await Promise.all([
          newAccount(),
          newAccount('caller'),
          newAccount(),
        ]);
        const tag = unique();
        const make = (accountId: string, name: string, visibility: 'public' | 'private' | 'shared') =>
          store.analytics.create({
            accountId,
            name,
            definition,
            visibility,
            sharedWith: visibility === 'shared' ? [caller.id] : [],
          });
        await make(owner.id, `pub-${tag}`, 'public');
        await make(owner.id, `shared-${tag}`, 'shared');
        await make(owner.id, `hidden-${tag}`, 'private');
        await make(owner.id, `other-${tag}`, 'public');
        await make(caller.id, `own-${tag}`, 'private');
        const names = async (accountId: string) =>
          (await store.analytics.listToolsOf(accountId)).map((a) => a.name);
        expect(await names(caller.id)).toEqual([`own-${tag}`]);
        expect(await store.agentTools.add(caller.id, `pub-${tag}`)).toBe(true);
        expect(await store.agentTools.add(caller.id, `pub-${tag}`)).toBe(false);
        await store.agentTools.add(caller.id, `shared-${tag}`);
        // A private analytic added by name stays out of reach: the visibility rule still applies.
        await store.agentTools.add(caller.id, `hidden-${tag}`);
        expect(await names(caller.id)).toEqual([`own-${tag}`, `pub-${tag}`, `shared-${tag}`]);
        expect(await names(stranger.id)).toEqual([]);
        // Made private, an added analytic leaves the tools; the choice itself is kept.
        await store.analytics.update(owner.id, `pub-${tag}`, { definition, visibility: 'private' });
        expect(await names(caller.id)).toEqual([`own-${tag}`, `shared-${tag}`]);
        expect((await store.agentTools.choice(caller.id)).added).toEqual(
          new Set([`pub-${tag}`, `shared-${tag}`, `hidden-${tag}`]),
        );
        expect(await store.agentTools.remove(caller.id, `shared-${tag}`)).toBe(true);
        expect(await store.agentTools.remove(caller.id, `shared-${tag}`)).toBe(false);
        expect(await names(caller.id)).toEqual([`own-${tag}`]);
      });

      it('keep the account’s MCP price limit and log every change for the other instances', async () => {
        const account = await newAccount();
        const before = await store.changes.latestId();
        expect((await store.agentTools.choice(account.id)).maxCredits).toBeUndefined();
        await store.agentTools.setMaxCredits(account.id, 12);
        expect((await store.agentTools.choice(account.id)).maxCredits).toBe(12);
        await store.agentTools.setMaxCredits(account.id, null);
        expect((await store.agentTools.choice(account.id)).maxCredits).toBeUndefined();
        const changes = await store.changes.since(before);
        expect(changes.filter((c) => c.kind === 'agent_tools').map((c) => c.ref)).toEqual([
          account.id,
          account.id,
        ]);
      });
    });

    describe('failed calls', () => {
      it('are summed per caller and analytic, by code, in the period asked', async () => {
        const owner = await newAccount();
        const call = (
          n: number,
          accountId: string,
          code: string,
          warehouseMs: number,
          analyticName = 'slow',
        ) =>
          store.failedCalls.record({
            requestId: `req_${unique()}_${n}`,
            ownerId: owner.id,
            analyticId: 'ana_x',
            analyticName,
            accountId,
            code,
            warehouseMs,
          });
        await call(1, 'acc_a', 'QUERY_TIMEOUT', 3_000);
        await call(2, 'acc_a', 'RESULT_TOO_LARGE', 3_200);
        await call(3, 'acc_b', 'QUERY_TIMEOUT', 500);
        await call(4, 'acc_b', 'QUERY_TIMEOUT', 400, 'other');
        const now = Date.now();
        const rows = await store.failedCalls.byCaller(
          owner.id,
          new Date(now - 60_000),
          new Date(now + 60_000),
        );
        expect(rows).toEqual([
          {
            accountId: 'acc_a',
            analyticName: 'slow',
            calls: 2,
            callsByCode: { QUERY_TIMEOUT: 1, RESULT_TOO_LARGE: 1 },
            warehouseMs: 6_200,
          },
          {
            accountId: 'acc_b',
            analyticName: 'slow',
            calls: 1,
            callsByCode: { QUERY_TIMEOUT: 1 },
            warehouseMs: 500,
          },
          {
            accountId: 'acc_b',
            analyticName: 'other',
            calls: 1,
            callsByCode: { QUERY_TIMEOUT: 1 },
            warehouseMs: 400,
          },
        ]);
        expect(
          await store.failedCalls.byCaller(owner.id, new Date(now + 60_000), new Date(now + 120_000)),
        ).toEqual([]);
        expect(await store.failedCalls.byCaller('acc_nobody', new Date(0), new Date(now + 60_000))).toEqual(
          [],
        );
      });
    });

    describe('change feed', () => {
      it('delivers revocations and new analytic versions to a polling instance', async () => {
        const seen: string[] = [];
        const feed = await createChangeFeed({
          changes: store.changes,
          onChange: (event) => seen.push(`${event.kind}:${event.ref}`),
          intervalMs: 60_000,
        });
        try {
          const account = await newAccount();
          const generated = generateApiKey();
          const key = await store.keys.create({
            accountId: account.id,
            name: 'f',
            prefix: generated.prefix,
            digest: generated.digest,
          });
          const name = `feed-${unique()}`;
          await store.analytics.create({ accountId: account.id, name, definition: { sql: 'SELECT 1' } });
          await store.keys.revoke(account.id, key.id);
          await store.analytics.update(account.id, name, { definition: { sql: 'SELECT 2' } });
          await feed.poll();
          expect(seen.filter((s) => s.endsWith(key.id) || s.endsWith(name))).toEqual([
            `analytic:${name}`,
            `key:${key.id}`,
            `analytic:${name}`,
          ]);
          expect(feed.lastSeenId).toBe(await store.changes.latestId());
        } finally {
          await feed.stop();
        }
      });
    });
  });
}

describe('embedded store directory', () => {
  it('keeps its data across a restart', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'quarry-pglite-'));
    try {
      const first = await createPgliteClient(join(dir, 'db'));
      await migrate(first);
      // The embedded settings (pglite-client.ts), not Postgres's 128 MB of WebAssembly memory.
      expect(await first.query(`SELECT current_setting('shared_buffers') AS v`)).toEqual([{ v: '16MB' }]);
      const account = await createControlPlaneStore(first, { secretBox }).accounts.create({
        email: 'persist@example.com',
        name: 'Persist',
      });
      await first.close();
      const reopened = await createPgliteClient(join(dir, 'db'));
      try {
        expect((await migrate(reopened)).applied).toEqual([]);
        expect(await createControlPlaneStore(reopened, { secretBox }).accounts.get(account.id)).toEqual(
          account,
        );
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
