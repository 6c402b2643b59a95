// Webhooks end to end (issue 32 "Done when", docs/webhooks.md): real gateway processes on one
// control-plane schema of the real Postgres, a receiver process on loopback, the fault proxy in
// front of an owner's warehouse. Loopback is a private address, so the gateways that deliver to
// the receiver run with QUARRY_ALLOW_PRIVATE_NETWORKS=true; the last test starts one without it
// and proves the same URL is refused at creation and at delivery.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhook } from '@quarry/client';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { createFaultProxy, type FaultProxy } from './support/fault-proxy.js';
import { type GatewayProcess, postgresStoreEnv, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { hasTool, VERIFIER_PROGRAMS } from './support/webhook-verifiers.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
// A connection per request: the tests pause for seconds between calls (a gateway closes idle
// keep-alive sockets after 5 s, and a reused one may be closed under the next request).
const pooled = createHttpClient({ localAddress: '127.0.0.1' });
const http: HttpClient = {
  bodies: pooled.bodies,
  request: (base, method, path, options = {}) =>
    pooled.request(base, method, path, { ...options, headers: { connection: 'close', ...options.headers } }),
};
const ANALYTIC = `hooks-${suffix}`;
const LEASE_MS = 6_000;

let store: ControlPlaneSchema;
let gateways: GatewayProcess[] = [];
let receiver: WebhookReceiver;
let owner: TestAccount;
let env: Record<string, string>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const parsed = (body: string) =>
  JSON.parse(body) as { type: string; timestamp: string; data: Record<string, unknown> };

async function addEndpoint(
  gateway: GatewayProcess,
  key: string,
  url: string,
  eventTypes?: string[],
): Promise<{ id: string; secret: string }> {
  const response = expectStatus(
    await http.request(gateway.url, 'POST', '/v1/webhooks', {
      key,
      json: { url, ...(eventTypes ? { event_types: eventTypes } : {}) },
    }),
    201,
    'create webhook',
  );
  return { id: response.body.endpoint.id, secret: response.body.secret };
}

function verify(secret: string, d: { id: string; timestamp: string; signature: string; body: string }) {
  return new Webhook(secret).verify(d.body, {
    'webhook-id': d.id,
    'webhook-timestamp': d.timestamp,
    'webhook-signature': d.signature,
  });
}

/** Runs the `quarry` CLI as a user does, with only `env` (and PATH, HOME) in its environment. */
function quarry(args: readonly string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'), ...args], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmpdir(),
        XDG_CONFIG_HOME: join(tmpdir(), `quarry-cli-${suffix}`),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.runIf(up)('webhooks across two gateway instances (real Postgres, a receiver on loopback)', () => {
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    store = await createControlPlaneSchema(`quarry_hooks_${suffix}`);
    env = {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      QUARRY_FREE_CALLS: '30',
      QUARRY_WEBHOOK_POLL_MS: '100',
      QUARRY_WEBHOOK_LEASE_MS: String(LEASE_MS),
      QUARRY_WEBHOOK_RETRY_BASE_MS: '200',
      QUARRY_BREAKER_OPEN_MS: '300',
    };
    gateways = await startGateways(2, env);
    owner = await signUp(http, gateways[0] as GatewayProcess, 'owner', suffix);
    await connectTestPostgres(http, gateways[0] as GatewayProcess, owner.key, 'pg');
    await deployAnalytic(http, gateways[0] as GatewayProcess, owner.key, {
      name: ANALYTIC,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await receiver?.stop();
    await store?.drop();
  }, 60_000);

  it('spending 80% of a Free account makes exactly one usage.threshold 80, correctly signed', async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const caller = await signUp(http, a, 'free', suffix);
    const { secret } = await addEndpoint(a, caller.key, receiver.hook('usage'), ['usage.threshold']);
    // 24 of 30 credits, spread over both instances, a few at a time.
    for (let i = 0; i < 24; i += 4) {
      const batch = await Promise.all(
        [0, 1, 2, 3].map((j) =>
          http.request((j % 2 === 0 ? a : b).url, 'POST', '/v1/query', {
            key: caller.key,
            json: { source: ANALYTIC, params: {} },
          }),
        ),
      );
      for (const r of batch) expect(r.status, r.text).toBe(200);
    }
    const got = await receiver.waitFor(
      (all) => all.some((d) => parsed(d.body).data.threshold_percent === 80),
      20_000,
      'usage',
    );
    // Two more calls (26 credits, 87%): no second 80.
    for (const g of [a, b]) {
      expect(
        (await http.request(g.url, 'POST', '/v1/query', { key: caller.key, json: { source: ANALYTIC } }))
          .status,
      ).toBe(200);
    }
    await sleep(1_500);
    const all = await receiver.received('usage');
    const eighty = all.filter((d) => parsed(d.body).data.threshold_percent === 80);
    expect(eighty).toHaveLength(1);
    expect(all.filter((d) => parsed(d.body).data.threshold_percent === 50)).toHaveLength(1);
    expect(all).toHaveLength(2);
    const delivery = eighty[0] as (typeof got)[number];
    expect(verify(secret, delivery)).toMatchObject({ type: 'usage.threshold' });
    const event = parsed(delivery.body);
    expect(event.data).toMatchObject({ threshold_percent: 80, basis: 'credits', credits_limit: 30 });
    expect(Number(event.data.credits_used)).toBeGreaterThanOrEqual(24);
    expect(delivery.id).toMatch(/^msg_/);
    // Each client's own verifier accepts it too.
    const dir = mkdtempSync(join(tmpdir(), 'quarry-hooks-'));
    try {
      const cases = join(dir, 'cases.json');
      const headers = {
        'webhook-id': delivery.id,
        'webhook-timestamp': delivery.timestamp,
        'webhook-signature': delivery.signature,
      };
      writeFileSync(cases, JSON.stringify([{ secret, body: delivery.body, headers }]));
      expect(await verifyWebhook(secret, delivery.body, headers)).toMatchObject({ type: 'usage.threshold' });
      for (const [language, program] of Object.entries(VERIFIER_PROGRAMS)) {
        if (!hasTool(program.needs) && process.env.CI !== 'true') continue;
        const result = program.run(cases, dir);
        expect(`${language}: ${String(result.stdout).trim()}`, String(result.stderr)).toBe(
          `${language}: ok usage.threshold`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A wrong secret does not verify.
    expect(() => verify(`whsec_${randomBytes(24).toString('base64')}`, delivery)).toThrow();

    // Spending the rest: 100% once, and quota.exhausted once however many calls are refused.
    await addEndpoint(a, caller.key, receiver.hook('quota'), ['quota.exhausted']);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push(
        (
          await http.request((i % 2 === 0 ? a : b).url, 'POST', '/v1/query', {
            key: caller.key,
            json: { source: ANALYTIC },
          })
        ).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429]);
    const exhausted = await receiver.waitFor((all) => all.length >= 1, 20_000, 'quota');
    await receiver.waitFor(
      (all) => all.some((d) => parsed(d.body).data.threshold_percent === 100),
      20_000,
      'usage',
    );
    await sleep(1_000);
    expect(await receiver.received('quota')).toHaveLength(1);
    expect(parsed(exhausted[0]?.body as string)).toMatchObject({
      type: 'quota.exhausted',
      data: { credits_limit: 30, credits_used: 30 },
    });
    expect((await receiver.received('usage')).map((d) => parsed(d.body).data.threshold_percent)).toEqual([
      50, 80, 100,
    ]);
  }, 90_000);

  it('a receiver answering 500 three times then 200 gets the same webhook-id four times; the log shows it', async () => {
    const [a] = gateways as [GatewayProcess];
    const account = await signUp(http, a, 'flaky', suffix);
    const { id, secret } = await addEndpoint(a, account.key, receiver.hook('flaky'));
    await receiver.plan('flaky', { statuses: [500, 500, 500] });
    expectStatus(
      await http.request(a.url, 'POST', `/v1/webhooks/${id}/test`, { key: account.key }),
      202,
      'test',
    );
    const got = await receiver.waitFor((all) => all.length >= 4, 30_000, 'flaky');
    expect(new Set(got.map((d) => d.id)).size).toBe(1);
    for (const d of got) expect(verify(secret, d)).toMatchObject({ type: 'webhook.test' });
    // The log: one delivery, four attempts, delivered with 200.
    let log = await http.request(a.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    for (let i = 0; i < 50 && log.body.deliveries?.[0]?.status !== 'delivered'; i++) {
      await sleep(100);
      log = await http.request(a.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    }
    expect(log.body.deliveries).toHaveLength(1);
    expect(log.body.deliveries[0]).toMatchObject({
      event_id: got[0]?.id,
      status: 'delivered',
      attempts: 4,
      last_status: 200,
      type: 'webhook.test',
    });
    const attempts = await withPg((c) =>
      c.query(
        `SELECT attempt, status_code FROM ${store.schema}.webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
        [log.body.deliveries[0].id],
      ),
    );
    expect(attempts.rows.map((r) => r.status_code)).toEqual([500, 500, 500, 200]);

    // Manual replay: the same webhook-id once more.
    const replay = await http.request(
      a.url,
      'POST',
      `/v1/webhooks/${id}/deliveries/${log.body.deliveries[0].id}/replay`,
      { key: account.key },
    );
    expect(replay.status, replay.text).toBe(202);
    const again = await receiver.waitFor((all) => all.length >= 5, 10_000, 'flaky');
    expect(again[4]?.id).toBe(got[0]?.id);
  }, 60_000);

  it('killing the delivering instance mid-delivery loses no event: the other instance delivers it', async () => {
    const [a] = gateways as [GatewayProcess];
    const account = await signUp(http, a, 'killed', suffix);
    const { id } = await addEndpoint(a, account.key, receiver.hook('hang'));
    await receiver.plan('hang', { hang: 1 });
    const test = expectStatus(
      await http.request(a.url, 'POST', `/v1/webhooks/${id}/test`, { key: account.key }),
      202,
      'test',
    );
    await receiver.waitFor((all) => all.length >= 1, 10_000, 'hang');
    // The instance holding the claim (its pid is in the lease), killed with SIGKILL.
    const lease = await withPg((c) =>
      c.query(`SELECT leased_by FROM ${store.schema}.webhook_deliveries WHERE event_id = $1`, [
        test.body.event_id,
      ]),
    );
    const pid = Number(String(lease.rows[0]?.leased_by).split(':')[1]);
    const victim = gateways.find((g) => g.child.pid === pid);
    expect(victim, `no gateway with pid ${pid}`).toBeDefined();
    victim?.child.kill('SIGKILL');
    await victim?.exited;
    const survivor = gateways.find((g) => g !== victim) as GatewayProcess;
    const got = await receiver.waitFor((all) => all.length >= 2, LEASE_MS + 10_000, 'hang');
    expect(got[1]?.id).toBe(got[0]?.id);
    let log = await http.request(survivor.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    for (let i = 0; i < 50 && log.body.deliveries?.[0]?.status !== 'delivered'; i++) {
      await sleep(100);
      log = await http.request(survivor.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    }
    expect(log.body.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    // Two instances again for what follows.
    gateways = [survivor, await startGateway({ env })];
  }, 60_000);

  it('two instances never deliver the same attempt twice in a 1,000-event run', async () => {
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const account = await signUp(http, a, 'bulk', suffix);
    const { id } = await addEndpoint(a, account.key, receiver.hook('bulk'));
    const sent: string[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          http.request((j % 2 === 0 ? a : b).url, 'POST', `/v1/webhooks/${id}/test`, { key: account.key }),
        ),
      );
      for (const r of batch) sent.push(expectStatus(r, 202, 'test').body.event_id);
    }
    const got = await receiver.waitFor((all) => all.length >= 1000, 60_000, 'bulk');
    await sleep(1_000);
    const all = await receiver.received('bulk');
    expect(all).toHaveLength(1000);
    expect(new Set(all.map((d) => d.id))).toEqual(new Set(sent));
    expect(got.length).toBe(1000);
    // Both instances delivered, and every delivery took exactly one attempt.
    const byInstance = await withPg((c) =>
      c.query(
        `SELECT split_part(t.instance, ':', 2) AS pid, count(*)::integer AS n, max(t.attempt) AS most
           FROM ${store.schema}.webhook_attempts t JOIN ${store.schema}.webhook_deliveries d ON d.id = t.delivery_id
          WHERE d.endpoint_id = $1 GROUP BY 1`,
        [id],
      ),
    );
    console.log(`[webhooks] 1,000 events delivered per instance: ${JSON.stringify(byInstance.rows)}`);
    expect(byInstance.rows.reduce((n, r) => n + Number(r.n), 0)).toBe(1000);
    expect(byInstance.rows.every((r) => Number(r.most) === 1)).toBe(true);
    expect(byInstance.rows.length).toBe(2);
  }, 120_000);

  it('a failing owner warehouse (blackholed) makes analytic.failing, and analytic.recovered after', async () => {
    const [a] = gateways as [GatewayProcess];
    const pgUrl = new URL(process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    const proxy: FaultProxy = await createFaultProxy({
      targetHost: pgUrl.hostname,
      targetPort: pgUrl.port === '' ? 5432 : Number(pgUrl.port),
    });
    try {
      const name = `flaky-wh-${suffix}`;
      expectStatus(
        await http.request(a.url, 'POST', '/v1/owner/connections', {
          key: owner.key,
          json: {
            name: 'proxied',
            type: 'postgres',
            config: {
              host: '127.0.0.1',
              port: proxy.port,
              database: pgUrl.pathname.slice(1) || 'test',
              user: decodeURIComponent(pgUrl.username) || 'postgres',
            },
          },
        }),
        201,
        'proxied connection',
      );
      await deployAnalytic(http, a, owner.key, {
        name,
        connection: 'proxied',
        sql: 'SELECT 1 AS one',
        visibility: 'public',
        limits: { timeout_ms: 500 },
      });
      const { secret } = await addEndpoint(a, owner.key, receiver.hook('health'), [
        'analytic.failing',
        'analytic.recovered',
      ]);
      const call = () => http.request(a.url, 'POST', '/v1/query', { key: owner.key, json: { source: name } });
      for (let i = 0; i < 5; i++) expect((await call()).status).toBe(200);
      await proxy.set({ kind: 'blackhole' });
      for (let i = 0; i < 8; i++) expect((await call()).status).toBeGreaterThanOrEqual(500);
      const failing = await receiver.waitFor((all) => all.length >= 1, 20_000, 'health');
      expect(verify(secret, failing[0] as (typeof failing)[number])).toMatchObject({
        type: 'analytic.failing',
      });
      expect(parsed(failing[0]?.body as string).data).toMatchObject({
        analytic: name,
        threshold_percent: 50,
      });
      await proxy.set({ kind: 'pass' });
      await sleep(500);
      let served = 0;
      for (let i = 0; i < 60 && served < 12; i++) {
        if ((await call()).status === 200) served += 1;
        else await sleep(200);
      }
      const both = await receiver.waitFor((all) => all.length >= 2, 20_000, 'health');
      expect(both.map((d) => parsed(d.body).type)).toEqual(['analytic.failing', 'analytic.recovered']);
    } finally {
      await proxy.close();
    }
  }, 90_000);

  it('the quarry CLI adds, lists and tests an endpoint and shows its deliveries', async () => {
    const [a] = gateways as [GatewayProcess];
    const account = await signUp(http, a, 'cli', suffix);
    const env = { QUARRY_URL: a.url, QUARRY_API_KEY: account.key };
    const added = await quarry(
      ['webhooks', 'add', receiver.hook('cli'), '--event', 'webhook.test', '--json'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const issued = JSON.parse(added.stdout) as { endpoint: { id: string }; secret: string };
    expect(issued.secret).toMatch(/^whsec_/);
    const listed = await quarry(['webhooks', 'list'], env);
    expect(listed.stdout).toContain(issued.endpoint.id);
    expect(listed.stdout).toContain('webhook.test');
    const tested = await quarry(['webhooks', 'test', issued.endpoint.id], env);
    expect(tested.stdout).toMatch(/^Sent webhook\.test msg_/);
    const [got] = await receiver.waitFor((all) => all.length >= 1, 10_000, 'cli');
    expect(verify(issued.secret, got as NonNullable<typeof got>)).toMatchObject({ type: 'webhook.test' });
    let log = await quarry(['webhooks', 'deliveries', issued.endpoint.id], env);
    for (let i = 0; i < 30 && !log.stdout.includes('delivered'); i++) {
      await sleep(100);
      log = await quarry(['webhooks', 'deliveries', issued.endpoint.id], env);
    }
    expect(log.stdout).toMatch(/webhook\.test\s+delivered\s+1\s+200/);
    // A refused URL is an API error: exit 1 with the gateway's words.
    const refused = await quarry(['webhooks', 'add', 'ftp://example.com/x'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/INVALID_REQUEST/);
  }, 60_000);

  it('with private networks off, a loopback or private URL is refused at creation and at delivery', async () => {
    const [a] = gateways as [GatewayProcess];
    const account = await signUp(http, a, 'guarded', suffix);
    // Made while private networks were allowed (a name that later resolves to loopback is the same case).
    const { id } = await addEndpoint(a, account.key, receiver.hook('guarded'));
    await Promise.allSettled(gateways.map((g) => g.stop()));
    gateways = [await startGateway({ env: { ...env, QUARRY_ALLOW_PRIVATE_NETWORKS: 'false' } })];
    const [guarded] = gateways as [GatewayProcess];
    for (const url of [
      receiver.hook('guarded'),
      'http://localhost:9/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.1/hook',
      'http://[::1]:8080/hook',
      'http://169.254.169.254/latest/meta-data',
    ]) {
      const refused = await http.request(guarded.url, 'POST', '/v1/webhooks', {
        key: account.key,
        json: { url },
      });
      expect(refused.status, `${url}: ${refused.text}`).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_REQUEST');
    }
    expectStatus(
      await http.request(guarded.url, 'POST', `/v1/webhooks/${id}/test`, { key: account.key }),
      202,
      'test',
    );
    let log = await http.request(guarded.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    for (
      let i = 0;
      i < 50 && !(log.body.deliveries?.[0]?.attempts >= 1 && log.body.deliveries[0].last_error);
      i++
    ) {
      await sleep(100);
      log = await http.request(guarded.url, 'GET', `/v1/webhooks/${id}/deliveries`, { key: account.key });
    }
    expect(log.body.deliveries[0].status).not.toBe('delivered');
    expect(log.body.deliveries[0].last_error).toMatch(/loopback/);
    await sleep(500);
    expect(await receiver.received('guarded')).toHaveLength(0);
  }, 90_000);
});
