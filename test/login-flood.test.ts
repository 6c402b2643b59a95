// Failed logins must not stall analytics (issue 29, item 1). Every login costs a scrypt hash
// (~32 MiB, a decoy one for an unknown email) on libuv's thread pool, where DuckDB runs its
// queries too: before the hashes had their own bounded limiter, 100 logins with unknown emails
// from five addresses (each inside its allowance) filled the pool for half a minute and the demo
// analytic answered 504, then 503. A real gateway process on the embedded store with the DuckDB
// demo: while the logins flood in, every call answers 200, none waits as long as a stall behind
// the hashes would make it, and the analytic's p90 stays within twice its p90 without them.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls of the analytic measured without, then with, the flood: 100, so the p90 is the tenth
 * slowest. The p99 (the second slowest) was once 118 ms in CI against ~15 ms on a quiet machine:
 * a couple of hiccups of a busy host (a store write, a collection) decide it, while hashes that
 * took the pool's threads slow most calls (with the pool's four threads all hashing: p90 137 ms
 * against 10 ms quiet).
 */
const CALLS = 100;
/** Source addresses of the flood, and logins each keeps in flight (its whole failure allowance). */
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
const LOGINS_PER_ADDRESS = 20;
/**
 * The least p90 the bound is taken from (ms). A hash holds one of this machine's two cores for
 * ~330 ms, so a ~10 ms query may take twice as long from its share of the CPU alone; the bound is
 * 2× the quiet p90 or 2× this, whichever is larger.
 */
const P90_FLOOR_MS = 50;
/**
 * The longest any call may take during the flood (ms). A call queued behind the hashes waits
 * seconds (5,028 ms before the hash limiter; 3,090 ms with no limit on a four-thread pool here),
 * a busy host's hiccup a fraction of this.
 */
const STALL_MS = 1000;

/** Nearest-rank percentile of `samples` (ms). */
function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

describe('a flood of failed logins does not stall analytics (real gateway, DuckDB demo)', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let demoKey: string;
  const http = createHttpClient();

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-login-flood-'));
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', QUARRY_DATA_DIR: dataDir };
    await run('npm', ['run', '-s', 'seed', '-w', '@quarry/examples'], { cwd: REPO_ROOT, env });
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_LOG_LEVEL: 'warn',
        // The demo account's plan allows 600 calls a minute; this test makes ~200 in seconds.
        QUARRY_RATE_LIMITS: JSON.stringify({
          enterprise: { limit: 100000, window_seconds: 60, burst: 100000 },
        }),
      },
      readyTimeoutMs: 90_000,
    });
    demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  /** One call of top-products past the result cache (the warehouse runs it): status and ms. */
  async function topProducts(): Promise<{ status: number; ms: number; text: string }> {
    const started = performance.now();
    const response = await http.request(gateway.url, 'POST', '/v1/query', {
      key: demoKey,
      json: { source: 'top-products', params: { category: 'Electronics', limit: 5 } },
      headers: { 'cache-control': 'no-cache' },
    });
    return { status: response.status, ms: performance.now() - started, text: response.text };
  }

  async function measure(): Promise<{ statuses: number[]; ms: number[]; failures: string[] }> {
    const statuses: number[] = [];
    const ms: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < CALLS; i += 1) {
      const call = await topProducts();
      statuses.push(call.status);
      ms.push(call.ms);
      if (call.status !== 200) failures.push(`${call.status} after ${Math.round(call.ms)} ms: ${call.text}`);
    }
    return { statuses, ms, failures };
  }

  /**
   * One address's flood, as reported: its whole failure allowance at once, each login with an
   * unknown email (a decoy hash). A refusal is not retried: the hashes admitted are the load.
   */
  async function flood(address: string, tally: Map<number, number>): Promise<void> {
    const client = createHttpClient({ localAddress: address });
    const login = async (n: number) => {
      const response = await client.request(gateway.url, 'POST', '/v1/session', {
        json: { email: `nobody-${address}-${n}@flood.quarry.test`, password: 'not-the-password' },
        // Not a browser: a script writes whatever Origin the gateway accepts.
        headers: { origin: gateway.url },
      });
      tally.set(response.status, (tally.get(response.status) ?? 0) + 1);
    };
    await Promise.all(Array.from({ length: LOGINS_PER_ADDRESS }, (_, n) => login(n)));
  }

  it('keeps top-products answering 200 within 2× its p90 while 100 unknown-email logins flood in', async () => {
    // Warm-up: the first call prepares the statement and opens the session.
    for (let i = 0; i < 5; i += 1) expect((await topProducts()).status).toBe(200);
    const before = await measure();
    expect(before.failures).toEqual([]);

    const tally = new Map<number, number>();
    let floodEnded: number | undefined;
    const flooding = Promise.all(ADDRESSES.map((address) => flood(address, tally))).then(() => {
      floodEnded = performance.now();
    });
    // Let the logins arrive (and the ones past the queue be refused) before measuring.
    await sleep(1000);
    const during = await measure();
    const measuredUntil = performance.now();
    await flooding;

    const shape = (ms: readonly number[]) =>
      [50, 90, 99, 100].map((p) => Math.round(percentile(ms, p))).join('/');
    console.log(
      `[e2e] login flood: top-products p50/p90/p99/max before ${shape(before.ms)} ms, during ${shape(during.ms)} ms; flood outlasted the measurement by ${Math.round((floodEnded ?? 0) - measuredUntil)} ms; logins answered ${JSON.stringify(Object.fromEntries(tally))}`,
    );
    // The flood really reached the hasher: unknown emails answered 401 after a decoy hash.
    expect(tally.get(401) ?? 0).toBeGreaterThan(0);
    expect(during.failures).toEqual([]);
    expect(Math.max(...during.ms)).toBeLessThanOrEqual(STALL_MS);
    expect(percentile(during.ms, 90)).toBeLessThanOrEqual(
      2 * Math.max(percentile(before.ms, 90), P90_FLOOR_MS),
    );
    // And it was still being hashed when the last call was measured: the calls met the flood.
    expect(floodEnded).toBeGreaterThan(measuredUntil);
  }, 90_000);
});
