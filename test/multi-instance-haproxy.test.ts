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
// Which instance answered a call is read from the instances' own access logs (its request id).
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
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
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
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
});
