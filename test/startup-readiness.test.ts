// Ready means ready (issue 35): a gateway whose start-up work is still pending (the demo
// warehouse being prepared, held back here by QUARRY_TEST_STARTUP_GATE until the test creates
// the gate file) answers /readyz 503
// `starting`, and the demo calls made in that window wait for the warehouse instead of getting
// 503 SOURCE_UNAVAILABLE; more of them than the breaker's threshold leave the demo connection's
// circuit closed. On the embedded store and on a PostgreSQL store, each a real gateway process
// on an empty data directory.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;
/** More calls than the breaker's default threshold (5 failures open it). */
const CALLS = 8;

interface Ready {
  readonly status: string;
  readonly checks?: Record<string, { ok: boolean; message?: string }>;
}

async function readyz(url: string): Promise<{ status: number; body: Ready }> {
  const response = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return { status: response.status, body: (await response.json()) as Ready };
}

async function demoCall(url: string, key: string) {
  const response = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Calls a gateway while its start-up work is held by `gate`, then lets the work finish. */
async function checkReadiness(gateway: GatewayProcess, dataDir: string, gate: string): Promise<void> {
  const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
  const before = await readyz(gateway.url);
  expect(before.status, JSON.stringify(before.body)).toBe(503);
  expect(before.body.status).toBe('starting');
  expect(before.body.checks?.['startup:demo_warehouse']?.ok).toBe(false);

  let answered = 0;
  const pending = Array.from({ length: CALLS }, () =>
    demoCall(gateway.url, key).finally(() => {
      answered++;
    }),
  );
  // The calls wait: none is answered (let alone refused) while the work is held.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(answered).toBe(0);
  expect((await readyz(gateway.url)).body.status).toBe('starting');
  await writeFile(gate, '');
  const calls = await Promise.all(pending);
  for (const call of calls) {
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body.results).toHaveLength(6);
  }
  // The calls waited for the work: by the time they answered it was done.
  const after = await readyz(gateway.url);
  expect(after.status, JSON.stringify(after.body)).toBe(200);
  expect(after.body.checks?.['startup:demo_warehouse']).toEqual({ ok: true });
  const circuits = Object.entries(after.body.checks ?? {}).filter(([name]) => name.startsWith('connection:'));
  expect(circuits.length).toBeGreaterThan(0);
  for (const [name, check] of circuits) expect(check.message, name).toMatch(/circuit closed/);
  expect(gateway.stdout()).not.toMatch(/circuit opened/);
}

describe('start-up work and readiness', () => {
  const dirs: string[] = [];
  const gateways: GatewayProcess[] = [];
  let schema: ControlPlaneSchema | undefined;

  afterAll(async () => {
    for (const gateway of gateways) await gateway.stop();
    await schema?.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('embedded store: /readyz fails and demo calls wait while the demo warehouse is prepared', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-startup-'));
    dirs.push(dataDir);
    const gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_ADMIN_TOKEN: ADMIN,
        QUARRY_TEST_STARTUP_GATE: join(dataDir, 'gate'),
      },
      readyTimeoutMs: 90_000,
    });
    gateways.push(gateway);
    await checkReadiness(gateway, dataDir, join(dataDir, 'gate'));
  }, 150_000);

  it.runIf(pgUp)(
    'PostgreSQL store: /readyz fails and demo calls wait while the demo warehouse is prepared',
    async () => {
      schema = await createControlPlaneSchema(`quarry_startup_${uniqueSuffix()}`);
      const dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-startup-pg-'));
      dirs.push(dataDir);
      const gateway = await startGateway({
        env: {
          ...postgresStoreEnv(schema.databaseUrl, randomBytes(32).toString('base64')),
          QUARRY_DEMO: 'true',
          QUARRY_DATA_DIR: dataDir,
          QUARRY_ADMIN_TOKEN: ADMIN,
          QUARRY_TEST_STARTUP_GATE: join(dataDir, 'gate'),
        },
        readyTimeoutMs: 90_000,
      });
      gateways.push(gateway);
      await checkReadiness(gateway, dataDir, join(dataDir, 'gate'));
    },
    150_000,
  );
});
