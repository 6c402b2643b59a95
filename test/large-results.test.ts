// A result too large to answer must not take the gateway down. A real gateway process with the
// heap flags `npm start` gives it (64 MiB cache + 96 MiB) calls analytics on the real Postgres whose
// results weigh hundreds of MB: 400,000 rows of 1 kB, and 1,000,000 narrow rows. Before
// QUARRY_MAX_RESULT_BYTES, the first call alone ran V8 out of heap and killed the process (and
// every call in flight on it). Now each is refused with 422 RESULT_TOO_LARGE, uncharged, ten at
// once included, and the process keeps answering.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayHeapFlags } from '../scripts/gateway-heap-flags.mjs';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();

describe.runIf(pgUp)('results too large to answer', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let key: string;
  /** Another account: an owner's calls on its own analytics are free and not counted. */
  let callerKey: string;

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_large_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
        // The heap flags `npm start` gives the gateway (default 64 MiB cache).
        NODE_OPTIONS: gatewayHeapFlags({}).join(' '),
      },
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `large-${suffix}@e2e.quarry.test`, name: 'Large' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
    const caller = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `large-caller-${suffix}@e2e.quarry.test`, name: 'Large caller' },
    });
    expect(caller.status, caller.text).toBe(201);
    callerKey = caller.body.key.secret;
    const pgUrl = new URL(TEST_PG_URL);
    const connection = await http.request(gateway.url, 'POST', '/v1/owner/connections', {
      key,
      json: {
        name: 'pg',
        type: 'postgres',
        config: {
          host: pgUrl.hostname,
          port: Number(pgUrl.port || 5432),
          user: decodeURIComponent(pgUrl.username),
          ...(pgUrl.password ? { password: decodeURIComponent(pgUrl.password) } : {}),
          database: pgUrl.pathname.slice(1),
        },
      },
    });
    expect(connection.status, connection.text).toBe(201);
    for (const [name, sql] of [
      ['wide', "SELECT repeat('x', 1000) AS s, i FROM generate_series(1, 400000) i"],
      ['narrow', 'SELECT i FROM generate_series(1, 1000000) i'],
      ['small', 'SELECT i FROM generate_series(1, 100) i'],
    ] as const) {
      const created = await http.request(gateway.url, 'POST', '/v1/owner/analytics', {
        key,
        json: {
          name: `${name}-${suffix}`,
          connection: 'pg',
          sql,
          limits: { max_rows: 1_000_000, timeout_ms: 60_000 },
          visibility: 'public',
        },
      });
      expect(created.status, created.text).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 30_000);

  const query = (name: string) =>
    http.request(gateway.url, 'POST', '/v1/query', {
      key: callerKey,
      json: { source: `${name}-${suffix}`, params: {} },
    });

  it('refuses each with 422 RESULT_TOO_LARGE, ten at once included, and keeps answering', async () => {
    for (const name of ['wide', 'narrow']) {
      const refused = await query(name);
      expectErrorEnvelope(refused, 422, 'RESULT_TOO_LARGE');
      expect(refused.body.error.message).toContain('8 MiB');
    }
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => query(i % 2 ? 'wide' : 'narrow')));
    expect(
      burst.map((r) => r.status),
      burst
        .filter((r) => r.status !== 422)
        .map((r) => r.text)
        .join('\n'),
    ).toEqual(Array(10).fill(422));

    const small = await query('small');
    expect(small.status, small.text).toBe(200);
    expect(small.body.results).toHaveLength(100);
    const usage = await http.request(gateway.url, 'GET', '/v1/account/usage', { key: callerKey });
    expect(usage.status, usage.text).toBe(200);
    // Only the one answered call was counted.
    expect(usage.body.totals).toMatchObject({ calls: 1 });
    expect(usage.body.by_analytic).toEqual([expect.objectContaining({ name: `small-${suffix}`, calls: 1 })]);
    expect(gateway.child.exitCode).toBeNull();
    expect(gateway.stderr()).not.toContain('heap out of memory');
  }, 120_000);
});
