// The process-wide budget of result bytes in flight. A real gateway process with the heap flags
// `npm start` gives it (64 MiB cache + 96 MiB) answers 30 concurrent calls of a ~7 MB result
// across three connections (30 warehouse sessions at once if nothing held them back): every call
// is answered 200 or 503 SOURCE_UNAVAILABLE with a retry_after (waiting briefly for room first),
// the process survives, and only the answered calls are charged.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayHeapFlags } from '../scripts/gateway-heap-flags.mjs';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  signUp,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const CONNECTIONS = ['big1', 'big2', 'big3'];
/** 1,000 rows of 7,000 characters: ~7.1 MB as the runtime counts it, under the 8 MiB bound. */
const SEVEN_MB = "SELECT repeat('x', 7000) AS s, i FROM generate_series(1, 1000) i";

describe.runIf(pgUp)('the result-bytes budget under the npm start heap cap', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let owner: TestAccount;
  let caller: TestAccount;

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_budget_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
        NODE_OPTIONS: gatewayHeapFlags({}).join(' '),
      },
    });
    owner = await signUp(http, gateway, 'budget-owner', suffix);
    caller = await signUp(http, gateway, 'budget-caller', suffix);
    for (const name of CONNECTIONS) {
      await connectTestPostgres(http, gateway, owner.key, name);
      await deployAnalytic(http, gateway, owner.key, {
        name: `${name}-${suffix}`,
        connection: name,
        sql: SEVEN_MB,
        limits: { max_rows: 1000, timeout_ms: 60_000 },
        visibility: 'public',
      });
    }
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 30_000);

  it('answers 30 concurrent 7 MB calls across 3 connections with 200 or a 503 to retry, and survives', async () => {
    const metricsBefore = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
    const limit = Number(/^quarry_result_bytes_in_flight_limit (\d+)/m.exec(metricsBefore)?.[1]);
    console.log(`[budget] result bytes in flight limit: ${(limit / 2 ** 20).toFixed(1)} MiB`);
    expect(limit).toBeGreaterThanOrEqual(8 * 2 ** 20);

    const calls = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        http.request(gateway.url, 'POST', '/v1/query', {
          key: caller.key,
          json: { source: `${CONNECTIONS[i % 3]}-${suffix}`, params: {} },
        }),
      ),
    );
    const counts = tally(calls);
    console.log(`[budget] 30 concurrent 7 MB calls: ${JSON.stringify(counts)}`);
    expect(Object.keys(counts).every((k) => k === '200' || k === '503 SOURCE_UNAVAILABLE')).toBe(true);
    for (const refused of calls.filter((r) => r.status !== 200)) {
      expectErrorEnvelope(refused, 503, 'SOURCE_UNAVAILABLE');
      expect(refused.body.error.retry_after).toBeGreaterThan(0);
    }
    for (const ok of calls.filter((r) => r.status === 200)) expect(ok.body.results).toHaveLength(1000);
    expect(counts['200'] ?? 0).toBeGreaterThan(0);

    // Alive, with its heap, and the budget all given back.
    expect(gateway.child.exitCode).toBeNull();
    expect(gateway.stderr()).not.toContain('heap out of memory');
    const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^quarry_result_bytes_in_flight 0$/m);
    const usage = await http.request(gateway.url, 'GET', '/v1/account/usage', { key: caller.key });
    expect(usage.body.totals.calls).toBe(counts['200'] ?? 0);
  }, 120_000);
});
