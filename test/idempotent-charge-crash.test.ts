// An idempotent call's completion commits with its charge (issue 16): a gateway killed with
// `kill -9` after a call's charge is durable and before the call has answered, then a retry with
// the same Idempotency-Key on another instance, leaves exactly one charge and gets the answer.
// The victim runs with QUARRY_TEST_PAUSE_AFTER_CHARGE_MS, a test-only pause between the charge
// and the answer, so the kill lands in that window every time; the ledger is read from Postgres.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  ledgerDrift,
  ledgerOf,
  signUp,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const ANALYTIC = `once-${suffix}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let store: ControlPlaneSchema;
let env: Record<string, string>;
const running: GatewayProcess[] = [];

describe.runIf(up)('idempotent completion commits with the charge (kill -9, real Postgres)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_idem_crash_${suffix}`);
    env = postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64'));
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(running.map((g) => g.stop()));
    await store?.drop();
  }, 60_000);

  it('kill -9 between charge and answer, then a retry with the same key: one charge, the answer replayed', async () => {
    const victim = await startGateway({ env: { ...env, QUARRY_TEST_PAUSE_AFTER_CHARGE_MS: '60000' } });
    running.push(victim);
    const owner = await signUp(http, victim, 'owner', suffix);
    const caller = await signUp(http, victim, 'caller', suffix);
    await connectTestPostgres(http, victim, owner.key, 'pg');
    await deployAnalytic(http, victim, owner.key, {
      name: ANALYTIC,
      connection: 'pg',
      sql: "SELECT 'answer' AS what",
      visibility: 'public',
      price: 2,
    });
    const call = (g: GatewayProcess) =>
      http.request(g.url, 'POST', '/v1/query', {
        key: caller.key,
        json: { source: ANALYTIC, params: {} },
        headers: { 'Idempotency-Key': `crash-${suffix}` },
      });

    // The first attempt: its charge becomes durable, then the process dies before answering.
    const first = call(victim).catch((error: unknown) => error);
    const deadline = performance.now() + 20_000;
    let charged = await ledgerOf(store.schema, caller.id);
    while (!charged.some((e) => e.status === 'ok') && performance.now() < deadline) {
      await sleep(50);
      charged = await ledgerOf(store.schema, caller.id);
    }
    expect(charged.map((e) => e.status)).toEqual(['ok']);
    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');
    expect(await first).toBeInstanceOf(Error); // the client never got an answer

    // The retry, on a fresh instance: the stored answer, not a second run or a 409.
    const survivor = await startGateway({ env });
    running.push(survivor);
    const retry = await call(survivor);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.results).toEqual([{ what: 'answer' }]);
    expect(retry.body.meta.request_id).toBe(charged[0]?.request_id);
    const again = await call(survivor);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const ledger = await ledgerOf(store.schema, caller.id);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ status: 'ok', request_id: charged[0]?.request_id });
    // Its day rollups count it once, as the raw event does.
    expect(await ledgerDrift(store.schema)).toEqual([]);
  }, 120_000);
});
