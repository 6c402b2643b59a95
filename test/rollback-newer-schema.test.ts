// docs/deploy.md, "Upgrades and rollbacks": a rollback restarts the instances on the previous
// build, which then runs on a schema a newer release migrated (migrations only add; the rule is
// checked by gateway/src/store/migration-compatibility.test.ts). Here a gateway process starts on
// a PostgreSQL store that a "newer release" has migrated further (an added nullable column, an
// added table, its row in schema_migrations): it starts, logs once that the store has migrations
// it does not know, naming them, is ready, and serves the accounts made before and new ones.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { expectStatus, signUp } from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const NEWER = '999_from_a_newer_release';

describe.runIf(up)('a build started on a schema a newer release migrated (a rollback)', () => {
  const http = createHttpClient();
  let store: ControlPlaneSchema;
  let env: Record<string, string>;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_rollback_${suffix}`);
    env = postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64'));
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 30_000);

  it('says which migrations it does not know, and runs on the schema', async () => {
    gateway = await startGateway({ env });
    const before = await signUp(http, gateway, 'before', suffix);
    expect(gateway.stdout()).not.toContain('migrations this build does not know');
    await gateway.stop();
    gateway = undefined;

    // What a newer release's migration may do (it only adds), and its record.
    await withPg(async (c) => {
      await c.query(`ALTER TABLE ${store.schema}.accounts ADD COLUMN nickname text`);
      await c.query(`CREATE TABLE ${store.schema}.future_things (id text PRIMARY KEY)`);
      await c.query(`INSERT INTO ${store.schema}.schema_migrations (name, checksum) VALUES ($1, $2)`, [
        NEWER,
        'from-a-newer-release',
      ]);
    });

    gateway = await startGateway({ env });
    const ready = await http.request(gateway.url, 'GET', '/readyz');
    expect(ready.status, ready.text).toBe(200);
    const said = gateway
      .stdout()
      .split('\n')
      .filter((line) => line.includes('migrations this build does not know'))
      .map((line) => JSON.parse(line) as { level: number; newer: string[] });
    expect(said).toHaveLength(1);
    expect(said[0]?.newer).toEqual([NEWER]);
    expect(said[0]?.level).toBe(40); // warn
    // The account made before answers, and a new one is made on the newer schema.
    expectStatus(await http.request(gateway.url, 'GET', '/v1/account', { key: before.key }), 200, 'account');
    const after = await signUp(http, gateway, 'after', suffix);
    expectStatus(await http.request(gateway.url, 'GET', '/v1/account', { key: after.key }), 200, 'account');
  }, 120_000);
});
