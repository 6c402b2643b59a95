// docs/deploy.md, section 7, followed: a store with accounts, a sealed warehouse connection, an
// analytic and paid calls is dumped with `pg_dump --format=custom`, restored with `pg_restore`
// into another database, and a gateway started on the copy with the same QUARRY_SECRET_KEY
// answers the same usage to the caller and to the owner, and still opens the owner's warehouse
// (its credentials were sealed with that key) to serve a new call.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { connectTestPostgres, deployAnalytic, expectStatus, signUp } from './support/metering-fixture.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const run = promisify(execFile);
const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();

describe.runIf(up)('backup and restore of the store (pg_dump, pg_restore)', () => {
  const http = createHttpClient();
  const secretKey = randomBytes(32).toString('base64');
  const restoredDb = `quarry_restored_${suffix}`;
  let store: ControlPlaneSchema;
  let dir: string;
  let original: GatewayProcess | undefined;
  let restored: GatewayProcess | undefined;

  beforeAll(async () => {
    store = await createControlPlaneSchema(`qbk_${suffix}`);
    dir = await mkdtemp(join(tmpdir(), 'quarry-backup-'));
  });
  afterAll(async () => {
    await original?.stop();
    await restored?.stop();
    await store?.drop();
    await withPg((c) => c.query(`DROP DATABASE IF EXISTS ${restoredDb}`));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('a gateway on the restored store serves the same usage, and opens the sealed connection', async () => {
    original = await startGateway({ env: postgresStoreEnv(store.databaseUrl, secretKey) });
    const owner = await signUp(http, original, 'owner', suffix);
    const caller = await signUp(http, original, 'caller', suffix);
    await connectTestPostgres(http, original, owner.key, 'wh');
    const name = `backup-${suffix}`;
    await deployAnalytic(http, original, owner.key, {
      name,
      connection: 'wh',
      sql: 'SELECT 42 AS answer',
      price: 2,
      visibility: 'public',
    });
    for (let i = 0; i < 3; i++) {
      expectStatus(
        await http.request(original.url, 'POST', '/v1/query', {
          key: caller.key,
          json: { source: name, params: {} },
        }),
        200,
        'paid call',
      );
    }
    const usageOf = async (gateway: GatewayProcess, key: string) =>
      expectStatus(await http.request(gateway.url, 'GET', '/v1/account/usage', { key }), 200, 'usage').body;
    const before = { caller: await usageOf(original, caller.key), owner: await usageOf(original, owner.key) };
    // The three paid calls are in what is compared (not two empty reports).
    expect(JSON.stringify(before.caller)).toContain('"calls":3');
    await original.stop();
    original = undefined;

    // The guide's commands: a custom-format dump, restored into an empty database.
    const dump = join(dir, 'quarry.dump');
    await run('pg_dump', [
      '--format=custom',
      '--no-owner',
      `--schema=${store.schema}`,
      `--file=${dump}`,
      TEST_PG_URL,
    ]);
    await withPg((c) => c.query(`CREATE DATABASE ${restoredDb}`));
    const restoredAdmin = new URL(TEST_PG_URL);
    restoredAdmin.pathname = `/${restoredDb}`;
    await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restoredAdmin}`, dump]);

    const restoredUrl = new URL(store.databaseUrl);
    restoredUrl.pathname = `/${restoredDb}`;
    restored = await startGateway({ env: postgresStoreEnv(restoredUrl.toString(), secretKey) });
    expect(await usageOf(restored, caller.key)).toEqual(before.caller);
    expect(await usageOf(restored, owner.key)).toEqual(before.owner);
    // The owner's warehouse credentials, sealed with the key, open on the copy.
    const call = await http.request(restored.url, 'POST', '/v1/query', {
      key: caller.key,
      json: { source: name, params: {} },
    });
    expect(call.status, call.text).toBe(200);
    expect(call.body.results).toEqual([{ answer: 42 }]);
  }, 240_000);
});
