// Asynchronous queries end to end (issue 33 item 3, docs/large-results.md "Asynchronous
// queries"): real gateway processes on one control-plane schema on the real PostgreSQL, which is
// also the warehouse. The synchronous time limit is 5 s (QUARRY_MAX_ANALYTIC_TIMEOUT_MS); the
// 40 s job is submitted first and runs while the other assertions proceed:
//   - the same analytic called synchronously fails with 504 QUERY_TIMEOUT; as a job it succeeds,
//     its result read in pages and as CSV from the instance that ran it, charged exactly once;
//   - it survives a restart of the other instance;
//   - DELETE (served by another instance than the one running it) stops it on the warehouse
//     within 1 s (pg_stat_activity), and a cancelled job is not charged;
//   - a job that fails (its async time limit) is not charged;
//   - another account gets 404 for the job;
//   - an embed token's rules apply at submission, and its jobs are its own;
//   - a job's end is one webhook event (job.succeeded, job.failed) in the outbox;
//   - a job whose instance is killed (`kill -9`) is marked failed by another instance, uncharged.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ConflictError, createQuarryClient } from '@quarry/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  ledgerOf,
  quotaCounter,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());

const suffix = uniqueSuffix();
const LONG = `long-${suffix}`;
const CANCEL = `cancel-${suffix}`;
const BRIEF = `brief-${suffix}`;
const VICTIM = `victim-${suffix}`;
const QUICK = `quick-${suffix}`;
const CANCEL_MARKER = `cancel_marker_${suffix}`;
const VICTIM_MARKER = `victim_marker_${suffix}`;
const LONG_SLEEP_S = 40;
const PRICE = 3;

const http = createHttpClient();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let store: ControlPlaneSchema;
let env: Record<string, string>;
/** a runs the long job; b is restarted while it runs. */
let a: GatewayProcess;
let b: GatewayProcess;
const others: GatewayProcess[] = [];
let owner: TestAccount;
let caller: TestAccount;
let longJob: { id: string; request_id: string };
let longSubmittedAt: number;
let cancelledJobId: string;

function submit(gateway: GatewayProcess, key: string, source: string): Promise<HttpResponse> {
  return http.request(gateway.url, 'POST', '/v1/query', {
    key,
    json: { source, params: {} },
    headers: { prefer: 'respond-async' },
  });
}

const getJob = (gateway: GatewayProcess, key: string, path: string) =>
  http.request(gateway.url, 'GET', `/v1/jobs/${path}`, { key });

/** Polls the job on `gateway` until `done(state)`, at most `ms`. */
async function waitFor(
  gateway: GatewayProcess,
  id: string,
  done: (state: string) => boolean,
  ms: number,
): Promise<HttpResponse> {
  const until = Date.now() + ms;
  for (;;) {
    const response = expectStatus(await getJob(gateway, caller.key, id), 200, 'get job');
    if (done(response.body.state) || Date.now() > until) return response;
    await sleep(200);
  }
}

/** Warehouse sessions running a query with `marker` in it (not this lookup itself). */
function activeWith(marker: string): Promise<number> {
  return withPg(async (c) => {
    const result = await c.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM pg_stat_activity
        WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
      [marker],
    );
    return result.rows[0]?.n ?? 0;
  });
}

/** The webhook outbox's events about `jobId` (job.succeeded, job.failed). */
function jobEvents(jobId: string): Promise<{ type: string; payload: Record<string, unknown> }[]> {
  return withPg(async (c) => {
    const result = await c.query<{ type: string; payload: Record<string, unknown> }>(
      `SELECT type, payload FROM ${store.schema}.webhook_events WHERE payload->>'job_id' = $1`,
      [jobId],
    );
    return result.rows;
  });
}

async function eventsOf(requestId: string) {
  return (await ledgerOf(store.schema, caller.id)).filter((e) => e.request_id === requestId);
}

describe.runIf(up)('asynchronous queries (real gateways, real PostgreSQL)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_jobs_${suffix}`);
    env = {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      // The synchronous bound: 5 s. A job has its analytic's async_timeout_ms instead.
      QUARRY_MAX_ANALYTIC_TIMEOUT_MS: '5000',
      QUARRY_JOB_LEASE_MS: '2000',
      // A small Free quota: every call of the caller reserves its credits before the warehouse
      // runs (docs/money.md), so jobs go through reserve → commit, or → release when they fail.
      QUARRY_FREE_CALLS: '60',
    };
    [a, b] = (await startGateways(2, env)) as [GatewayProcess, GatewayProcess];
    owner = await signUp(http, a, 'owner', suffix);
    caller = await signUp(http, a, 'caller', suffix);
    await connectTestPostgres(http, a, owner.key, 'pg');
    const deploy = (name: string, sql: string, limits: Record<string, number>) =>
      deployAnalytic(http, a, owner.key, {
        name,
        connection: 'pg',
        sql,
        visibility: 'public',
        price: PRICE,
        limits,
      });
    await deploy(
      LONG,
      `SELECT n, 'row ' || n AS label FROM pg_sleep(${LONG_SLEEP_S}), generate_series(1, 5) AS n ORDER BY n`,
      { timeout_ms: 5000, async_timeout_ms: 90_000 },
    );
    await deploy(CANCEL, `SELECT 1 AS ${CANCEL_MARKER} FROM pg_sleep(30)`, {
      timeout_ms: 5000,
      async_timeout_ms: 90_000,
    });
    await deploy(QUICK, 'SELECT n FROM generate_series(1, 3) AS n ORDER BY n', { timeout_ms: 5000 });
    await deploy(BRIEF, 'SELECT 1 AS one FROM pg_sleep(3)', { timeout_ms: 5000, async_timeout_ms: 1000 });
    await deploy(VICTIM, `SELECT 1 AS ${VICTIM_MARKER} FROM pg_sleep(30)`, {
      timeout_ms: 5000,
      async_timeout_ms: 90_000,
    });
    // The 40 s job starts now, on a; the tests below run while it does.
    longSubmittedAt = Date.now();
    const submitted = expectStatus(await submit(a, caller.key, LONG), 202, 'submit the long job');
    longJob = submitted.body;
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([a, b, ...others].map((g) => g?.stop()));
    await store?.drop();
  }, 60_000);

  it('answers 202 with Location and the queued job; GET shows it running on any instance', async () => {
    expect(longJob.id).toMatch(/^job_/);
    const fromB = expectStatus(await getJob(b, caller.key, longJob.id), 200, 'job from b');
    expect(['queued', 'running']).toContain(fromB.body.state);
    expect(fromB.body).toMatchObject({ source: LONG, result_status: 'pending', result: null, credits: 0 });
    expect(fromB.headers.get('retry-after')).toBe('1');
    // `"async": true` in the body does the same, and the listing shows the account's jobs.
    const listed = expectStatus(
      await http.request(a.url, 'GET', '/v1/jobs?limit=10', { key: caller.key }),
      200,
      'list jobs',
    );
    expect(listed.body.items.map((j: { id: string }) => j.id)).toContain(longJob.id);
  });

  it('the same analytic called synchronously fails after its 5 s limit (504 QUERY_TIMEOUT)', async () => {
    const started = Date.now();
    const sync = await http.request(a.url, 'POST', '/v1/query', { key: caller.key, json: { source: LONG } });
    expectErrorEnvelope(sync, 504, 'QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('another account gets 404 for the job (GET and DELETE), and a made-up id is 404 too', async () => {
    expectErrorEnvelope(await getJob(a, owner.key, longJob.id), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await http.request(b.url, 'DELETE', `/v1/jobs/${longJob.id}`, { key: owner.key }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(await getJob(a, caller.key, 'job_0000000000000000000000'), 404, 'NOT_FOUND');
    expectErrorEnvelope(await getJob(a, caller.key, '../v1/account'), 404, 'NOT_FOUND');
  });

  it("an embed token's rules apply at submission, and its jobs are its own", async () => {
    const mint = async () => {
      const res = await http.request(a.url, 'POST', '/v1/embed-tokens', {
        key: caller.key,
        json: { analytics: [{ name: QUICK }] },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.embed_token.token as string;
    };
    const [token, other] = [await mint(), await mint()];
    // An analytic the token does not name is refused at submission, no job made.
    const refused = await submit(a, token, LONG);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.headers.get('location')).toBeNull();
    const submitted = expectStatus(await submit(a, token, QUICK), 202, 'token submits');
    const id = submitted.body.id as string;
    const until = Date.now() + 10_000;
    let job = await getJob(a, token, id);
    while (job.body.state !== 'succeeded' && Date.now() < until) {
      await sleep(100);
      job = await getJob(a, token, id);
    }
    expect(job.body).toMatchObject({ state: 'succeeded', row_count: 3 });
    // Another token of the same account, and the account's key, do not see it.
    expectErrorEnvelope(await getJob(a, other, id), 404, 'NOT_FOUND');
    expectErrorEnvelope(await getJob(a, caller.key, id), 404, 'NOT_FOUND');
    const listed = expectStatus(await http.request(a.url, 'GET', '/v1/jobs', { key: other }), 200, 'list');
    expect(listed.body.items).toEqual([]);
  }, 30_000);

  it('a job past its async time limit fails with the error envelope, not charged', async () => {
    const submitted = expectStatus(
      await http.request(b.url, 'POST', '/v1/query', {
        key: caller.key,
        json: { source: BRIEF, async: true },
      }),
      202,
      'submit brief',
    );
    const done = await waitFor(b, submitted.body.id, (s) => s === 'failed' || s === 'succeeded', 10_000);
    expect(done.body.state).toBe('failed');
    expect(done.body.error).toMatchObject({ code: 'QUERY_TIMEOUT' });
    expect(done.body.credits).toBe(0);
    expect(await eventsOf(submitted.body.request_id)).toEqual([]);
    const events = await jobEvents(submitted.body.id);
    expect(events.map((e) => e.type)).toEqual(['job.failed']);
    expect(events[0]?.payload).toMatchObject({ state: 'failed', error: { code: 'QUERY_TIMEOUT' } });
  }, 20_000);

  it('DELETE served by another instance stops the job on the warehouse within 1 s, not charged', async () => {
    const submitted = expectStatus(await submit(b, caller.key, CANCEL), 202, 'submit cancel');
    const until = Date.now() + 10_000;
    while ((await activeWith(CANCEL_MARKER)) === 0 && Date.now() < until) await sleep(100);
    expect(await activeWith(CANCEL_MARKER)).toBe(1);
    cancelledJobId = submitted.body.id;
    const cancelled = expectStatus(
      await http.request(a.url, 'DELETE', `/v1/jobs/${submitted.body.id}`, { key: caller.key }),
      200,
      'cancel',
    );
    const at = performance.now();
    expect(cancelled.body.state).toBe('cancelled');
    while ((await activeWith(CANCEL_MARKER)) > 0 && performance.now() - at < 5_000) await sleep(25);
    const stoppedMs = performance.now() - at;
    console.log(`[jobs] cancelled job gone from pg_stat_activity ${Math.round(stoppedMs)} ms after DELETE`);
    expect(stoppedMs).toBeLessThan(1000);
    // Cancelling again answers the cancelled job; it stays cancelled and uncharged.
    const again = await http.request(b.url, 'DELETE', `/v1/jobs/${submitted.body.id}`, { key: caller.key });
    expect(again.status).toBe(200);
    await sleep(500);
    const after = expectStatus(await getJob(b, caller.key, submitted.body.id), 200, 'cancelled job');
    expect(after.body).toMatchObject({ state: 'cancelled', credits: 0 });
    expect(await eventsOf(submitted.body.request_id)).toEqual([]);
  }, 30_000);

  it('a job whose instance is killed (kill -9) is marked failed by another instance, not charged', async () => {
    const c = await startGateway({ env });
    others.push(c);
    const submitted = expectStatus(await submit(c, caller.key, VICTIM), 202, 'submit victim');
    const until = Date.now() + 10_000;
    while ((await activeWith(VICTIM_MARKER)) === 0 && Date.now() < until) await sleep(100);
    c.child.kill('SIGKILL');
    await c.exited;
    const failed = await waitFor(a, submitted.body.id, (s) => s === 'failed', 10_000);
    expect(failed.body.state).toBe('failed');
    expect(failed.body.error).toMatchObject({ code: 'SOURCE_UNAVAILABLE' });
    expect(failed.body.credits).toBe(0);
    expect(await eventsOf(submitted.body.request_id)).toEqual([]);
    expect((await jobEvents(submitted.body.id)).map((e) => e.type)).toEqual(['job.failed']);
  }, 60_000);

  it('the TypeScript client and the CLI submit, wait for, list and cancel jobs', async () => {
    const client = createQuarryClient({ baseUrl: a.url, apiKey: caller.key });
    const submitted = await client.jobs.submit(QUICK);
    expect(submitted.state).toBe('queued');
    const done = await client.jobs.wait<{ n: number }>(submitted.id, { intervalMs: 100, timeoutMs: 10_000 });
    expect(done).toMatchObject({ state: 'succeeded', row_count: 3, credits: PRICE });
    expect(done.result?.results).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const paged = await client.jobs.get<{ n: number }>(submitted.id, { pageSize: 2 });
    const rest = await client.jobs.get<{ n: number }>(submitted.id, {
      cursor: paged.result?.meta.next as string,
    });
    expect([...(paged.result?.results ?? []), ...(rest.result?.results ?? [])]).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
    expect((await client.jobs.list({ state: 'succeeded' })).map((j) => j.id)).toContain(submitted.id);
    await expect(client.jobs.cancel(submitted.id)).rejects.toBeInstanceOf(ConflictError);

    const cli = (args: readonly string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'), ...args], {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: '/nonexistent',
            QUARRY_URL: a.url,
            QUARRY_API_KEY: caller.key,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    const viaCli = await cli(['query', QUICK, '--async', '--wait']);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    const job = JSON.parse(viaCli.stdout);
    expect(job).toMatchObject({ state: 'succeeded', row_count: 3 });
    const got = await cli(['jobs', 'get', job.id]);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).id).toBe(job.id);
    const listed = await cli(['jobs', 'list', '--limit', '5']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).map((j: { id: string }) => j.id)).toContain(job.id);
    const slow = await client.jobs.submit(CANCEL);
    const cancelled = await cli(['jobs', 'cancel', slow.id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout).state).toBe('cancelled');
    const missing = await cli(['jobs', 'get', 'job_0000000000000000000000']);
    expect(missing.code).toBe(1);
  }, 60_000);

  it('survives a restart of the instance that did not run it', async () => {
    await b.stop();
    b = await startGateway({ env });
    const fromNewB = expectStatus(await getJob(b, caller.key, longJob.id), 200, 'job after restart');
    expect(fromNewB.body.state).toBe('running');
  }, 60_000);

  it('the 40 s job succeeds, its result read in pages and as CSV, charged once', async () => {
    const done = await waitFor(a, longJob.id, (s) => s !== 'queued' && s !== 'running', 80_000);
    expect(done.body.state, JSON.stringify(done.body)).toBe('succeeded');
    expect(Date.now() - longSubmittedAt).toBeGreaterThanOrEqual(LONG_SLEEP_S * 1000);
    expect(done.body).toMatchObject({
      row_count: 5,
      truncated: false,
      credits: PRICE,
      result_status: 'ready',
    });
    expect(done.body.result.results).toHaveLength(5);

    // Pages of 2: every row once, in order, from the instance that ran it.
    const rows: unknown[] = [];
    let page = expectStatus(await getJob(a, caller.key, `${longJob.id}?page_size=2`), 200, 'first page');
    rows.push(...page.body.result.results);
    while (page.body.result.meta.next !== null) {
      const cursor = encodeURIComponent(page.body.result.meta.next);
      page = expectStatus(await getJob(a, caller.key, `${longJob.id}?cursor=${cursor}`), 200, 'next page');
      rows.push(...page.body.result.results);
    }
    expect(rows).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, label: `row ${n}` })));

    const csv = await http.request(a.url, 'GET', `/v1/jobs/${longJob.id}?format=csv`, { key: caller.key });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.text).toBe('n,label\r\n1,row 1\r\n2,row 2\r\n3,row 3\r\n4,row 4\r\n5,row 5\r\n');

    // Another instance serves the state, not the result.
    const elsewhere = expectStatus(await getJob(b, caller.key, longJob.id), 200, 'from b');
    expect(elsewhere.body).toMatchObject({ state: 'succeeded', result_status: 'unavailable', result: null });
    expectErrorEnvelope(
      await http.request(b.url, 'GET', `/v1/jobs/${longJob.id}?format=csv`, { key: caller.key }),
      410,
      'CURSOR_EXPIRED',
    );
    // A finished job cannot be cancelled.
    expectErrorEnvelope(
      await http.request(a.url, 'DELETE', `/v1/jobs/${longJob.id}`, { key: caller.key }),
      409,
      'CONFLICT',
    );

    // Charged once, however many times the result was read.
    const events = await eventsOf(longJob.request_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ status: 'ok', millicredits: PRICE * 1000 });
    // And its end is one webhook event in the outbox.
    const outbox = await jobEvents(longJob.id);
    expect(outbox.map((e) => e.type)).toEqual(['job.succeeded']);
    expect(outbox[0]?.payload).toMatchObject({ job_id: longJob.id, row_count: 5, credits: PRICE });
    // A cancelled job sends nothing.
    expect(await jobEvents(cancelledJobId)).toEqual([]);

    // The quota counts exactly the jobs that succeeded (this one, the embed token's, the client's
    // and the CLI's):
    // every reservation of a failed, cancelled or orphaned job was given back, none is pending.
    const ledger = await ledgerOf(store.schema, caller.id);
    expect(ledger.filter((e) => e.status !== 'ok')).toEqual([]);
    expect(ledger).toHaveLength(4);
    expect(await quotaCounter(store.schema, caller.id)).toBe(4 * PRICE * 1000);
  }, 120_000);
});
