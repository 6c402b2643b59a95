// docs/deploy.md followed end to end (issue 23): three compiled gateways (`node <the guide's
// flags> gateway/dist/server.js`) on one PostgreSQL schema and the real Redis, with the variables
// the guide says they share, behind HAProxy running the guide's own haproxy.cfg (read out of the
// guide; only the listen address, the admin socket and the servers' addresses are replaced, and
// the frontend listens without TLS: the certificate is the one line a test cannot follow).
//   1. A Free account's quota is exact through the proxy, with the calls answered by all three.
//   2. Sign-ups are throttled per client address as HAProxy saw it: a client's own
//      X-Forwarded-For does not escape the throttle, and another address has its own allowance.
//      Clients are told apart by their source address (any of 127.0.0.0/8), random per run, so
//      the buckets this run leaves in Redis never meet another run's.
//   3. A rolling restart under load, one instance at a time, both ways the guide's section 5
//      gives (a plain SIGTERM with QUARRY_SHUTDOWN_DELAY_MS, or drained through HAProxy's admin
//      socket first): not one call fails, and each new instance serves again.
//   4. An MCP session opened through the proxy keeps answering whichever instance the proxy's
//      round robin would have picked (the guide's affinity on Mcp-Session-Id).
//   5. An instance restarted while a 20 s query runs on it finishes that query (the shutdown
//      grace covers QUARRY_MAX_ANALYTIC_TIMEOUT_MS) and says it is draining on /readyz meanwhile.
//   6. The secret key rotates by the guide's steps (readable everywhere, current, reseal, drop
//      the old one) under load: calls on connections sealed before, during and after the rotation
//      and OAuth token requests all succeed, and at the end nothing is sealed with the old key.
//   7. A fourth instance with a wrong QUARRY_SECRET_KEY refuses to start (exit code 2, naming the
//      key id it lacks) instead of serving 500s or sealing the fleet's signing key with its key.
// Which instance answered a call is read from the instances' own access logs (its request id).
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { guideHaproxyConfig, guideNodeFlags } from './support/deploy-guide.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import {
  compiledBuildProblem,
  freePort,
  type GatewayProcess,
  postgresStoreEnv,
  type StartGatewayOptions,
  startGateway,
} from './support/gateway-process.js';
import { type HaproxyProcess, haproxyAvailable, startHaproxy } from './support/haproxy.js';
import { createHttpClient, type HttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  ledgerOf,
  quotaCounter,
  signUp,
  startGateways,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import {
  pgAvailable,
  redisAvailable,
  serviceUp,
  TEST_REDIS_URL,
  uniqueSuffix,
} from './support/test-services.js';

const up =
  serviceUp(await pgAvailable()) && serviceUp(await redisAvailable()) && serviceUp(await haproxyAvailable());

const suffix = uniqueSuffix();
const FREE_CALLS = 30;
const SIGNUPS_PER_HOUR = 3;
const GENEROUS = { limit: 100_000, window_seconds: 60, burst: 100_000 };
const QUICK = `quick-${suffix}`;
const SLOW = `slow-${suffix}`;
/** The guide's server names, in the order of its `server` lines. */
const SERVERS = ['g1', 'g2', 'g3'] as const;
/** QUARRY_SHUTDOWN_DELAY_MS as the guide sets it. */
const SHUTDOWN_DELAY_MS = 5_000;
const GUIDE_SERVER_ADDRESSES = ['10.0.0.11:8787', '10.0.0.12:8787', '10.0.0.13:8787'];
/** The fleet's secret key before the rotation test: one bare base64 key (its id is `k1`). */
const OLD_KEY = randomBytes(32).toString('base64');
/** The key the rotation test moves the fleet to, under the id `k2`. */
const NEW_KEY = randomBytes(32).toString('base64');
/** An analytic that runs 20 s (the restart test stops an instance while it runs). */
const SLEEPY = `sleepy-${suffix}`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A loopback address of its own for one client (never 127.0.0.1, which every other test uses). */
const clientAddress = () => `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** Polls `check` every 100 ms until it holds; throws `what` after `timeoutMs`. */
async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(100);
  }
}

describe.runIf(up)('three compiled gateways behind HAProxy, as docs/deploy.md says', () => {
  let dir: string;
  let store: ControlPlaneSchema;
  let haproxy: HaproxyProcess;
  let proxyUrl: string;
  let env: Record<string, string>;
  let ports: number[];
  let nodeFlags: string[];
  /** The instance serving as each of g1, g2, g3 now. */
  let gateways: GatewayProcess[] = [];
  /** Every instance ever started, restarted ones included (their logs say who answered what). */
  const everyInstance: GatewayProcess[] = [];
  const http = createHttpClient();
  let owner: TestAccount;

  const instanceOptions = (index: number): Omit<StartGatewayOptions, 'env'> => ({
    port: ports[index] as number,
    compiled: { nodeFlags },
    readyTimeoutMs: 90_000,
  });

  /**
   * Which instance answered each request id, from every instance's access log. Read into a map
   * once per question: a rolling restart leaves tens of thousands of answers across megabytes of
   * logs, too many to search the logs once per answer.
   */
  function answerers(): Map<string, GatewayProcess> {
    const byId = new Map<string, GatewayProcess>();
    for (const g of everyInstance) {
      for (const [, id] of g.stdout().matchAll(/"request_id":"([^"]+)"/g)) byId.set(id as string, g);
    }
    return byId;
  }

  /** The instance whose access log holds `requestId`, or undefined. */
  function answeredBy(requestId: string | null, byId = answerers()): GatewayProcess | undefined {
    return requestId === null ? undefined : byId.get(requestId);
  }

  /** Waits until every one of `requestIds` is in some instance's access log (stdout trails answers). */
  async function waitForAccessLogs(requestIds: readonly (string | null)[]): Promise<void> {
    await until('every answer in an access log', 10_000, async () => {
      const byId = answerers();
      return requestIds.every((id) => answeredBy(id, byId) !== undefined);
    });
  }

  /** The instances' error-level log lines and haproxy's output, for failure messages. */
  function diagnostics(): string {
    const errors = everyInstance
      .flatMap((g) => `${g.stdout()}\n${g.stderr()}`.split('\n'))
      .filter((l) => /"level":(5|6)\d/.test(l))
      .slice(0, 5);
    return [...errors, haproxy?.output() ?? ''].join('\n').slice(0, 4000);
  }

  /** `GET /readyz` of one instance, straight to its port (the guide's `until curl -sf …/readyz`). */
  async function ready(gateway: GatewayProcess): Promise<boolean> {
    const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.status === 200;
  }

  async function serverStatus(name: string): Promise<string> {
    return (await haproxy.server('gateways', name)).status ?? '';
  }

  /**
   * The guide's section 5 for one instance: SIGTERM (it fails /readyz for the delay, then drains),
   * a new process with `nextEnv`, and wait until HAProxy has it UP again.
   */
  async function restartInstance(index: number, nextEnv: Record<string, string>): Promise<GatewayProcess> {
    const name = SERVERS[index] as string;
    const old = gateways[index] as GatewayProcess;
    expect(await old.stop(120_000), old.stderr()).toEqual({ code: 0, signal: null });
    const fresh = await startGateway({ env: nextEnv, ...instanceOptions(index) });
    gateways[index] = fresh;
    everyInstance.push(fresh);
    await until(`${name} /readyz`, 30_000, () => ready(fresh));
    await until(`${name} UP in haproxy`, 30_000, async () => (await serverStatus(name)) === 'UP');
    return fresh;
  }

  /** A Postgres connection of the owner's with a password, so its secrets are sealed. */
  async function sealedConnection(name: string): Promise<void> {
    const url = new URL(process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    expectStatus(
      await http.request(proxyUrl, 'POST', '/v1/owner/connections', {
        key: owner.key,
        json: {
          name,
          type: 'postgres',
          config: {
            host: url.hostname,
            port: url.port === '' ? 5432 : Number(url.port),
            database: url.pathname.slice(1) || 'test',
            user: decodeURIComponent(url.username) || 'postgres',
            // The test server trusts loopback: the password is only there to be sealed.
            password: decodeURIComponent(url.password) || `sealed-${randomBytes(6).toString('hex')}`,
          },
        },
      }),
      201,
      `create connection ${name}`,
    );
  }

  /**
   * Starts one more instance with `nextEnv` (not behind the proxy) and reports how it ended: its
   * exit code and stderr when it refused to start, or `started` with its /readyz status.
   */
  async function startOutcome(
    nextEnv: Record<string, string>,
  ): Promise<{ code: number | string; readyz?: number; stderr: string }> {
    try {
      const extra = await startGateway({ env: nextEnv, compiled: { nodeFlags }, readyTimeoutMs: 60_000 });
      await sleep(1500);
      const readyz = await fetch(`${extra.url}/readyz`).then(
        (r) => r.status,
        () => -1,
      );
      await extra.stop();
      return { code: 'started', readyz, stderr: extra.stderr() };
    } catch (error) {
      const message = (error as Error).message;
      const code = /exited \((\d+)\)/.exec(message)?.[1];
      return { code: code === undefined ? message.slice(0, 200) : Number(code), stderr: message };
    }
  }

  beforeAll(async () => {
    const problem = await compiledBuildProblem();
    if (problem !== undefined) throw new Error(problem);
    nodeFlags = await guideNodeFlags();
    dir = await mkdtemp(join(tmpdir(), 'quarry-haproxy-'));
    store = await createControlPlaneSchema(`quarry_haproxy_${suffix}`);
    const proxyPort = await freePort();
    ports = [await freePort(), await freePort(), await freePort()];
    proxyUrl = `http://127.0.0.1:${proxyPort}`;

    const adminSocket = join(dir, 'admin.sock');
    const config = await guideHaproxyConfig([
      ['/run/haproxy/admin.sock', adminSocket],
      ['bind :443 ssl crt /etc/haproxy/quarry.pem', `bind 127.0.0.1:${proxyPort}`],
      ...GUIDE_SERVER_ADDRESSES.map((address, i) => [address, `127.0.0.1:${ports[i]}`] as const),
    ]);
    await writeFile(join(dir, 'haproxy.cfg'), config);

    // The guide's section 2: what every instance shares.
    env = {
      ...postgresStoreEnv(store.databaseUrl, OLD_KEY),
      QUARRY_REDIS_URL: TEST_REDIS_URL,
      // The proxy's public address, the same on every instance.
      QUARRY_PUBLIC_URL: proxyUrl,
      QUARRY_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
      QUARRY_TRUST_PROXY: '1',
      QUARRY_FREE_CALLS: String(FREE_CALLS),
      QUARRY_RATE_LIMITS: JSON.stringify({ free: GENEROUS }),
      QUARRY_SIGNUPS_PER_HOUR: String(SIGNUPS_PER_HOUR),
      // The guide's section 5: above HAProxy's `inter 2s fall 2`.
      QUARRY_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    };
    gateways = await startGateways(3, env, instanceOptions);
    everyInstance.push(...gateways);
    haproxy = await startHaproxy(join(dir, 'haproxy.cfg'), adminSocket);
    await until('every server UP in haproxy', 30_000, async () =>
      (await Promise.all(SERVERS.map(serverStatus))).every((s) => s === 'UP'),
    );

    // The owner signs up through the proxy, from an address of its own.
    const ownerHttp = createHttpClient({ localAddress: clientAddress() });
    owner = await signUp(ownerHttp, { url: proxyUrl }, 'owner', suffix);
    await connectTestPostgres(http, { url: proxyUrl }, owner.key, 'pg');
    await deployAnalytic(http, { url: proxyUrl }, owner.key, {
      name: QUICK,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
    await deployAnalytic(http, { url: proxyUrl }, owner.key, {
      name: SLOW,
      connection: 'pg',
      sql: 'SELECT 1 AS one FROM pg_sleep(0.2)',
      visibility: 'public',
    });
    await deployAnalytic(http, { url: proxyUrl }, owner.key, {
      name: SLEEPY,
      connection: 'pg',
      sql: 'SELECT 1 AS one FROM pg_sleep(20)',
      visibility: 'private',
      limits: { timeout_ms: 30_000 },
    });
  }, 180_000);

  afterAll(async () => {
    await haproxy?.stop();
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await store?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('holds a Free account to exactly its quota, whichever instance HAProxy picks', async () => {
    const caller = await signUp(
      createHttpClient({ localAddress: clientAddress() }),
      { url: proxyUrl },
      'free',
      suffix,
    );
    const query = () =>
      http.request(proxyUrl, 'POST', '/v1/query', { key: caller.key, json: { source: QUICK, params: {} } });
    const responses = await Promise.all(Array.from({ length: 2 * FREE_CALLS }, query));
    expect(tally(responses), diagnostics()).toEqual({
      '200': FREE_CALLS,
      '429 QUOTA_EXCEEDED': FREE_CALLS,
    });
    for (const refused of responses.filter((r) => r.status === 429)) {
      expectErrorEnvelope(refused, 429, 'QUOTA_EXCEEDED');
    }
    // The calls were spread: every instance answered some, and more than one served some, all
    // counted against the one quota.
    await waitForAccessLogs(responses.map((r) => r.headers.get('x-request-id')));
    const served = responses.filter((r) => r.status === 200);
    const byId = answerers();
    const servedBy = served.map((r) => answeredBy(r.headers.get('x-request-id'), byId));
    const answeredByEach = gateways.map(
      (g) => responses.filter((r) => answeredBy(r.headers.get('x-request-id'), byId) === g).length,
    );
    const servedByEach = gateways.map((g) => servedBy.filter((by) => by === g).length);
    console.log(
      `[haproxy] quota: answered per instance ${answeredByEach.join(', ')}, served ${servedByEach.join(', ')}`,
    );
    expect(answeredByEach.reduce((a, b) => a + b)).toBe(responses.length);
    for (const answered of answeredByEach) expect(answered).toBeGreaterThan(0);
    expect(servedByEach.filter((n) => n > 0).length).toBeGreaterThan(1);

    // The store agrees: one event per served call, the counter at the quota (1 credit a call).
    const ledger = await ledgerOf(store.schema, caller.id);
    expect(ledger.map((e) => e.request_id).sort()).toEqual(
      served.map((r) => r.headers.get('x-request-id')).sort(),
    );
    expect(ledger.every((e) => e.status === 'ok' && e.origin === 'free')).toBe(true);
    expect(await quotaCounter(store.schema, caller.id)).toBe(FREE_CALLS * 1_000);
    // Later calls, on whichever instance, are still refused.
    for (let i = 0; i < SERVERS.length; i += 1) expectErrorEnvelope(await query(), 429, 'QUOTA_EXCEEDED');
  }, 60_000);

  it('throttles sign-ups per client address as HAProxy saw it, whatever X-Forwarded-For the client sends', async () => {
    let counter = 0;
    const signUpFrom = (client: HttpClient, forwardedFor?: string): Promise<HttpResponse> => {
      counter += 1;
      return client.request(proxyUrl, 'POST', '/v1/accounts', {
        json: { email: `throttle-${suffix}-${counter}@haproxy.quarry.test`, name: `Throttle ${counter}` },
        ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
      });
    };
    const expectThrottled = (response: HttpResponse) => {
      expectErrorEnvelope(response, 429, 'RATE_LIMIT_EXCEEDED');
      // One more sign-up every 3600 / 3 = 1200 s.
      expect(response.body.error.retry_after).toBeGreaterThan(1000);
      expect(response.body.error.retry_after).toBeLessThanOrEqual(1200);
    };

    // Alice makes up a new address for every attempt, in the forms a client might try.
    const alice = createHttpClient({ localAddress: clientAddress() });
    const fromAlice: HttpResponse[] = [];
    for (let i = 0; i < SIGNUPS_PER_HOUR + 3; i += 1) {
      const madeUp = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
      fromAlice.push(await signUpFrom(alice, i % 2 === 0 ? madeUp : `${madeUp}, ${clientAddress()}`));
    }
    expect(
      fromAlice.map((r) => r.status),
      diagnostics(),
    ).toEqual([201, 201, 201, 429, 429, 429]);
    for (const refused of fromAlice.slice(SIGNUPS_PER_HOUR)) expectThrottled(refused);
    // One allowance across the instances (Redis), not one per instance.
    await waitForAccessLogs(fromAlice.map((r) => r.headers.get('x-request-id')));
    const byId = answerers();
    const answering = new Set(fromAlice.map((r) => answeredBy(r.headers.get('x-request-id'), byId)));
    expect(answering.size).toBeGreaterThan(1);

    // Bob, another address behind the same proxy, is not held back by Alice's sign-ups.
    const bob = createHttpClient({ localAddress: clientAddress() });
    const fromBob: HttpResponse[] = [];
    for (let i = 0; i <= SIGNUPS_PER_HOUR; i += 1) fromBob.push(await signUpFrom(bob));
    expect(fromBob.map((r) => r.status)).toEqual([201, 201, 201, 429]);
    expectThrottled(fromBob[SIGNUPS_PER_HOUR] as HttpResponse);
  }, 60_000);

  // The guide's section 5, one instance at a time, while clients call through the proxy, both
  // ways it gives: a plain SIGTERM (the instance fails /readyz for QUARRY_SHUTDOWN_DELAY_MS while
  // still serving, so HAProxy takes it out before it stops listening), or draining it through the
  // admin socket first and waiting for its sessions to end. Then the new process starts, and the
  // next instance waits until HAProxy's checks see this one UP.
  it.each([
    ['a plain SIGTERM (QUARRY_SHUTDOWN_DELAY_MS)', false],
    ['draining each through the admin socket first', true],
  ] as const)(
    'restarts the instances one at a time under load, by %s, and no call fails',
    async (_how, drain) => {
      interface Outcome {
        readonly status: number | string;
        readonly requestId: string | null;
      }
      const outcomes: Outcome[] = [];
      let stopping = false;
      const worker = async (source: string) => {
        while (!stopping) {
          try {
            const r = await http.request(proxyUrl, 'POST', '/v1/query', {
              key: owner.key,
              json: { source, params: {} },
            });
            const status = r.status === 200 ? 200 : `${r.status} ${r.text}`;
            outcomes.push({ status, requestId: r.headers.get('x-request-id') });
          } catch (error) {
            const cause = (error as { cause?: { code?: string; message?: string } }).cause;
            const why = `${(error as Error).message} (${cause?.code ?? cause?.message})`;
            outcomes.push({ status: `no answer: ${why}`, requestId: null });
          }
        }
      };
      // Quick calls keep every instance busy; slow ones (0.2 s) are in flight whenever one is drained.
      const load = [QUICK, QUICK, QUICK, SLOW, SLOW, SLOW].map(worker);
      const restarted: GatewayProcess[] = [];
      const steps: string[] = [];
      try {
        await sleep(1000);
        for (const [index, name] of SERVERS.entries()) {
          const started = performance.now();
          const old = gateways[index] as GatewayProcess;
          if (drain) {
            await haproxy.command(`set server gateways/${name} state drain`);
            await until(
              `${name}'s sessions to end`,
              15_000,
              async () => (await haproxy.server('gateways', name)).scur === '0',
            );
          }
          expect(await old.stop(), old.stderr()).toEqual({ code: 0, signal: null });
          const fresh = await startGateway({ env, ...instanceOptions(index) });
          gateways[index] = fresh;
          everyInstance.push(fresh);
          restarted.push(fresh);
          await until(`${name} /readyz`, 30_000, () => ready(fresh));
          if (drain) await haproxy.command(`set server gateways/${name} state ready`);
          await until(`${name} UP in haproxy`, 30_000, async () => (await serverStatus(name)) === 'UP');
          steps.push(`${name} ${Math.round(performance.now() - started)} ms`);
        }
        await sleep(1000);
      } finally {
        stopping = true;
        await Promise.all(load);
      }

      const failed = outcomes.filter((o) => o.status !== 200);
      console.log(
        `[haproxy] rolling restart (${drain ? 'drained' : 'plain SIGTERM'}): ${outcomes.length} calls, ${failed.length} failed; ${steps.join(', ')}`,
      );
      expect(failed.slice(0, 5), diagnostics()).toEqual([]);
      // Each new instance took its share again once back in rotation.
      await waitForAccessLogs(outcomes.map((o) => o.requestId));
      const byId = answerers();
      const byRestarted = restarted.map(
        (fresh) => outcomes.filter((o) => answeredBy(o.requestId, byId) === fresh).length,
      );
      console.log(`[haproxy] calls answered by the restarted instances: ${byRestarted.join(', ')}`);
      for (const count of byRestarted) expect(count).toBeGreaterThan(0);
    },
    180_000,
  );

  // docs/mcp.md: a session lives in the instance that answered its `initialize`. Through the
  // guide's proxy, every request of the session must reach that instance, while the requests
  // around it are still spread over all three.
  it('keeps an MCP session on the instance that opened it, while other calls are spread', async () => {
    const PROTOCOL = '2025-06-18';
    const mcpHeaders = (sessionId?: string) => ({
      accept: 'application/json, text/event-stream',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL }),
    });
    const opened = await http.request(proxyUrl, 'POST', '/mcp', {
      key: owner.key,
      headers: mcpHeaders(),
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: PROTOCOL,
          capabilities: {},
          clientInfo: { name: 'haproxy-e2e', version: '1' },
        },
      },
    });
    expect(opened.status, opened.text).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id');
    expect(sessionId).toBeTruthy();
    const initialized = await http.request(proxyUrl, 'POST', '/mcp', {
      key: owner.key,
      headers: mcpHeaders(sessionId as string),
      json: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    expect(initialized.status, initialized.text).toBe(202);
    const followUps: HttpResponse[] = [];
    const between: HttpResponse[] = [];
    for (let i = 0; i < 6; i += 1) {
      followUps.push(
        await http.request(proxyUrl, 'POST', '/mcp', {
          key: owner.key,
          headers: mcpHeaders(sessionId as string),
          json: { jsonrpc: '2.0', id: 10 + i, method: 'tools/list' },
        }),
      );
      between.push(
        await http.request(proxyUrl, 'POST', '/v1/query', {
          key: owner.key,
          json: { source: QUICK, params: {} },
        }),
      );
    }
    console.log(`[haproxy] MCP follow-ups: ${followUps.map((r) => r.status).join(', ')}`);
    expect(
      followUps.map((r) => r.status),
      followUps.map((r) => r.text.slice(0, 200)).join('\n'),
    ).toEqual(followUps.map(() => 200));
    for (const r of followUps) {
      expect(JSON.stringify(r.body ?? r.text)).toContain(QUICK);
    }
    // The calls around the session were spread: affinity holds the session only.
    await waitForAccessLogs(between.map((r) => r.headers.get('x-request-id')));
    const byId = answerers();
    expect(new Set(between.map((r) => answeredBy(r.headers.get('x-request-id'), byId))).size).toBeGreaterThan(
      1,
    );
    const closed = await http.request(proxyUrl, 'DELETE', '/mcp', {
      key: owner.key,
      headers: mcpHeaders(sessionId as string),
    });
    expect(closed.status, closed.text).toBe(200);
  }, 60_000);

  // Issue 37: with a 10 s shutdown grace, a 20 s query in flight at SIGTERM was cut unanswered.
  it('restarts an instance while a 20 s query runs on it, and the query is answered', async () => {
    const calls = Array.from({ length: SERVERS.length }, () =>
      http.request(proxyUrl, 'POST', '/v1/query', { key: owner.key, json: { source: SLEEPY, params: {} } }),
    );
    await sleep(2_000);
    const old = gateways[0] as GatewayProcess;
    const stopped = old.stop(120_000);
    // Past the delay the instance drains: /readyz says so while the query finishes.
    await sleep(SHUTDOWN_DELAY_MS + 2_000);
    const draining = await fetch(`${old.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      async (r) => ({ status: r.status, text: await r.text() }),
      (error: Error) => ({ status: -1, text: String(error.cause ?? error) }),
    );
    const answers = await Promise.all(calls);
    const exit = await stopped;
    console.log(
      `[haproxy] long query restart: /readyz while draining ${draining.status} ${draining.text.slice(0, 200)}`,
    );
    expect(
      answers.map((r) => r.status),
      answers.map((r) => r.text.slice(0, 200)).join('\n'),
    ).toEqual([200, 200, 200]);
    expect(exit, old.stderr()).toEqual({ code: 0, signal: null });
    expect(draining.status).toBe(503);
    expect(draining.text).toContain('draining');
    // The stopped instance did serve one of the long queries.
    await waitForAccessLogs(answers.map((r) => r.headers.get('x-request-id')));
    const byId = answerers();
    expect(answers.some((r) => answeredBy(r.headers.get('x-request-id'), byId) === old)).toBe(true);
    const fresh = await startGateway({ env, ...instanceOptions(0) });
    gateways[0] = fresh;
    everyInstance.push(fresh);
    await until('g1 UP in haproxy', 30_000, async () => (await serverStatus('g1')) === 'UP');
  }, 120_000);

  // docs/deploy.md's rotation, under load: add the new key as readable everywhere, make it
  // current everywhere, re-seal, drop the old key. Connections made before, during and after,
  // and OAuth tokens (the signing key is sealed too), answer every call.
  it("rotates QUARRY_SECRET_KEY by the guide's steps under load without one failed call", async () => {
    await sealedConnection('before');
    const analytics: string[] = [];
    const deployOn = async (connection: string) => {
      const name = `on-${connection}-${suffix}`;
      await deployAnalytic(http, { url: proxyUrl }, owner.key, {
        name,
        connection,
        sql: 'SELECT 1 AS one',
        visibility: 'private',
      });
      analytics.push(name);
    };
    await deployOn('before');
    // An OAuth client, and a token before the rotation: the fleet's signing key exists, sealed with k1.
    const client = expectStatus(
      await http.request(proxyUrl, 'POST', '/v1/oauth/clients', {
        key: owner.key,
        json: { name: `rotation-${suffix}`, scopes: ['query'] },
      }),
      201,
      'create OAuth client',
    ).body;
    const tokenForm = `grant_type=client_credentials&client_id=${client.client.client_id}&client_secret=${client.client_secret}`;
    const token = () =>
      http.request(proxyUrl, 'POST', '/oauth/token', {
        raw: tokenForm,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    expectStatus(await token(), 200, 'a token before the rotation');

    const outcomes: { kind: string; status: number | string }[] = [];
    let stopping = false;
    const record = async (kind: string, call: () => Promise<HttpResponse>) => {
      try {
        const r = await call();
        outcomes.push({ kind, status: r.status === 200 ? 200 : `${r.status} ${r.text.slice(0, 200)}` });
        return r;
      } catch (error) {
        outcomes.push({ kind, status: `no answer: ${(error as Error).message}` });
        return undefined;
      }
    };
    let turn = 0;
    const queryWorker = async () => {
      while (!stopping) {
        turn += 1;
        const source = analytics[turn % analytics.length] as string;
        await record(source.startsWith('on-before') ? 'old connection' : 'new connection', () =>
          http.request(proxyUrl, 'POST', '/v1/query', { key: owner.key, json: { source, params: {} } }),
        );
      }
    };
    const oauthWorker = async () => {
      while (!stopping) {
        const issued = await record('oauth token', token);
        const accessToken = issued?.status === 200 ? (issued.body.access_token as string) : undefined;
        if (accessToken !== undefined) {
          await record('oauth call', () =>
            http.request(proxyUrl, 'POST', '/v1/query', {
              key: accessToken,
              json: { source: analytics[0] as string, params: {} },
            }),
          );
        }
        await sleep(50);
      }
    };
    const load = [queryWorker(), queryWorker(), oauthWorker()];
    const steps: Record<string, string>[] = [
      // 1. The new key, readable everywhere; the old one still seals.
      { ...env, QUARRY_SECRET_KEYS_READABLE: `k2:${NEW_KEY}` },
      // 2. The new key seals, the old one stays readable.
      { ...env, QUARRY_SECRET_KEY: `k2:${NEW_KEY}`, QUARRY_SECRET_KEYS_READABLE: `k1:${OLD_KEY}` },
      // 4. (after the reseal) the old key is gone.
      { ...env, QUARRY_SECRET_KEY: `k2:${NEW_KEY}` },
    ];
    let resealed: HttpResponse | undefined;
    try {
      for (const [step, stepEnv] of steps.entries()) {
        if (step === 2) {
          // 3. Every sealed row and signing key re-sealed with the current key, asked of one
          // instance on its own address: the proxy keeps /v1/admin off the public frontend.
          resealed = await http.request(
            (gateways[0] as GatewayProcess).url,
            'POST',
            '/v1/admin/secrets/reseal',
            {
              key: env.QUARRY_ADMIN_TOKEN as string,
            },
          );
          expect(resealed.status, resealed.text).toBe(200);
        }
        for (const index of SERVERS.keys()) {
          await restartInstance(index, stepEnv);
          // A connection sealed mid-rollout by whichever instance the proxy picks.
          await sealedConnection(`step${step + 1}-${index}`);
          await deployOn(`step${step + 1}-${index}`);
        }
      }
      await sleep(2_000);
    } finally {
      stopping = true;
      await Promise.all(load);
    }
    env = steps[2] as Record<string, string>;
    const failed = outcomes.filter((o) => o.status !== 200);
    const byKind = new Map<string, number>();
    for (const o of outcomes) byKind.set(o.kind, (byKind.get(o.kind) ?? 0) + 1);
    console.log(
      `[haproxy] key rotation: ${[...byKind].map(([kind, n]) => `${kind} ${n}`).join(', ')}; ${failed.length} failed; reseal ${resealed?.text}`,
    );
    expect(failed.slice(0, 5), diagnostics()).toEqual([]);
    for (const kind of ['old connection', 'new connection', 'oauth token', 'oauth call']) {
      expect(byKind.get(kind) ?? 0, kind).toBeGreaterThan(10);
    }
    // Nothing is left sealed with the old key.
    const left = await withPg(async (c) => {
      const connections = await c.query<{ id: string }>(
        `SELECT secrets_key_id AS id FROM ${store.schema}.connections WHERE secrets IS NOT NULL`,
      );
      const keys = await c.query<{ id: string }>(
        `SELECT private_key_key_id AS id FROM ${store.schema}.oauth_signing_keys`,
      );
      return [...connections.rows, ...keys.rows].map((r) => r.id);
    });
    expect(left.length).toBeGreaterThan(10);
    expect(new Set(left)).toEqual(new Set(['k2']));
  }, 400_000);

  // Issue 37: an instance with a wrong key passed /readyz, answered 500 on sealed connections and
  // could seal the fleet's OAuth signing key with its own key.
  it('refuses to start a fourth instance whose QUARRY_SECRET_KEY cannot open what the fleet sealed', async () => {
    const fleetKey = /^(k\d):/.exec(env.QUARRY_SECRET_KEY as string)?.[1] ?? 'k1';
    const wrongs = [
      ['another key under the fleet key id', `${fleetKey}:${randomBytes(32).toString('base64')}`],
      ['a key of its own', `k9:${randomBytes(32).toString('base64')}`],
    ] as const;
    for (const [what, key] of wrongs) {
      const outcome = await startOutcome({ ...env, QUARRY_SECRET_KEY: key });
      console.log(
        `[haproxy] fourth instance with ${what}: ${JSON.stringify({ ...outcome, stderr: outcome.stderr.slice(0, 300) })}`,
      );
      expect(outcome.code, what).toBe(2);
      expect(outcome.stderr).toContain(`"${fleetKey}"`);
    }
    // The fleet is unharmed: every instance still answers calls on sealed connections.
    const r = await http.request(proxyUrl, 'POST', '/v1/query', {
      key: owner.key,
      json: { source: QUICK, params: {} },
    });
    expect(r.status, r.text).toBe(200);
  }, 180_000);
});
