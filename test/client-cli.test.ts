// @quarry/client and the `quarry` CLI against a real gateway process (embedded store, demo
// account). The CLI runs as a subprocess exactly as a user runs it (client/bin/quarry.mjs from a
// checkout with no build): login, deploying examples/analytics to the demo account (which owns
// the "demo" DuckDB connection; the gateway starts with an empty analytics dir so the names are
// free), idempotent redeploys, a key made with `keys create`, a query with that key, and
// usage showing the call. Then the client library through a counting proxy: under a tight rate
// limit it waits out retry_after and succeeds; a 400 is sent once.
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuarryClient, InvalidParamsError } from '@quarry/client';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountingProxy, startCountingProxy } from './support/counting-proxy.js';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';

const EXAMPLES = join(REPO_ROOT, 'examples', 'analytics');
const EXAMPLE_NAMES = [
  'category-totals',
  'channel-mix',
  'monthly-revenue',
  'sales-by-region',
  'sales-summary',
  'top-products',
  'yearly-growth',
];
/** The Free plan's rate limit in this gateway: one call, then one more every 2 s. */
const FREE_RATE_LIMIT = { limit: 1, window_seconds: 2, burst: 0 };

let dir: string;
let gateway: GatewayProcess | undefined;
let proxy: CountingProxy | undefined;
let demoKey: string;

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `quarry …` as a subprocess with its own HOME and config dir (stdout/stderr are pipes). */
function quarry(args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}) {
  return new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'), ...args], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(dir, 'home'),
        XDG_CONFIG_HOME: join(dir, 'config'),
        ...options.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
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
    child.stdin.end(options.input ?? '');
  });
}

/** `name  outcome` lines of `analytics deploy`, as a map. */
function outcomes(stdout: string): Record<string, string> {
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [name = '', ...rest] = line.trim().split(/\s{2,}/);
        return [name, rest.join(' ')];
      }),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-client-'));
  const dataDir = join(dir, 'data');
  const emptyAnalytics = join(dir, 'no-analytics');
  await mkdir(emptyAnalytics);
  await mkdir(dataDir);
  const warehouse = join(dataDir, 'demo.duckdb');
  await seedDemoWarehouse(warehouse, { rows: 3000 });
  gateway = await startGateway({
    env: {
      QUARRY_DATA_DIR: dataDir,
      QUARRY_DEMO: 'true',
      QUARRY_ANALYTICS_DIR: emptyAnalytics,
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: FREE_RATE_LIMIT }),
      QUARRY_SIGNUPS_PER_HOUR: '1000',
    },
    readyTimeoutMs: 90_000,
  });
  demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('quarry CLI against a gateway', () => {
  it('logs in, deploys, makes a key, queries with it, shows the usage, and redeploys idempotently', async () => {
    const url = gateway!.url;
    const login = await quarry(['login', '--url', url], { input: `${demoKey}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain('examples@demo.quarry.dev');
    const credentials = join(dir, 'config', 'quarry', 'credentials.json');
    expect(JSON.parse(await readFile(credentials, 'utf8'))).toEqual({ url, key: demoKey });
    expect((await stat(credentials)).mode & 0o777).toBe(0o600);

    const deployed = await quarry(['analytics', 'deploy', 'examples/analytics']);
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(outcomes(deployed.stdout)).toEqual(Object.fromEntries(EXAMPLE_NAMES.map((n) => [n, 'created'])));
    // Not a terminal: no spinner on stderr.
    expect(deployed.stderr).toBe('');

    const listed = await quarry(['analytics', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((a) => a.name).sort()).toEqual(
      EXAMPLE_NAMES,
    );

    const created = await quarry(['keys', 'create', 'e2e-query', '--scope', 'query', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; secret: string; scopes: string[] };
    expect(key.scopes).toEqual(['query']);
    expect(key.secret).toMatch(/^qry_live_/);

    // The new key from the environment overrides the stored login; stdout is a pipe, so JSON.
    const queried = await quarry(['query', 'sales-by-region', '--param', 'year=2024'], {
      env: { QUARRY_API_KEY: key.secret },
    });
    expect(queried.code, queried.stderr).toBe(0);
    const answer = JSON.parse(queried.stdout) as {
      results: { region: string; revenue: unknown }[];
      meta: { credits: number };
    };
    expect(answer.results.length).toBeGreaterThan(0);
    for (const row of answer.results) expect(row.region).toMatch(/^[A-Z]{2}$/);
    // The demo account owns the demo analytics: its own calls are free (origin owner).
    expect(answer.meta.credits).toBe(0);

    const usage = await quarry(['usage', '--json']);
    expect(usage.code, usage.stderr).toBe(0);
    // The owner's own call is free and outside the quota: nothing is charged to the account.
    const report = JSON.parse(usage.stdout) as { credits_used?: number };
    expect(report.credits_used ?? 0).toBe(0);
    const readable = await quarry(['usage']);
    expect(readable.code, readable.stderr).toBe(0);

    const again = await quarry(['analytics', 'deploy', 'examples/analytics']);
    expect(again.code, again.stderr).toBe(0);
    expect(outcomes(again.stdout)).toEqual(Object.fromEntries(EXAMPLE_NAMES.map((n) => [n, 'unchanged'])));

    // A copy with one definition changed: only that one gets a new version.
    const copy = join(dir, 'analytics-copy');
    await cp(EXAMPLES, copy, { recursive: true });
    const file = join(copy, 'top-products.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('default: 10', 'default: 5'));
    const changed = await quarry(['analytics', 'deploy', copy]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(outcomes(changed.stdout)).toEqual(
      Object.fromEntries(EXAMPLE_NAMES.map((n) => [n, n === 'top-products' ? 'updated (v2)' : 'unchanged'])),
    );
    const settled = await quarry(['analytics', 'deploy', copy]);
    expect(new Set(Object.values(outcomes(settled.stdout)))).toEqual(new Set(['unchanged']));
  }, 120_000);

  it('names a broken definition, deploys the rest, and exits 1', async () => {
    const copy = join(dir, 'analytics-broken');
    await cp(EXAMPLES, copy, { recursive: true });
    await writeFile(join(copy, 'zz-broken.yaml'), 'name: zz-broken\nconnection: nowhere\nsql: SELECT 1\n');
    const run = await quarry(['analytics', 'deploy', copy], { env: { QUARRY_URL: gateway!.url } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/zz-broken\.yaml\s+failed: INVALID_REQUEST: .*\(request req_/);
    expect(run.stderr).toContain('1 of 8 definitions failed.');
    expect(Object.keys(outcomes(run.stdout))).toHaveLength(7);
  }, 60_000);

  it('exits 3 with the error code and request id when the key is refused', async () => {
    const run = await quarry(['keys', 'list'], { env: { QUARRY_API_KEY: 'qry_live_notarealkey' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^quarry: UNAUTHENTICATED: .+\(request req_\S+\)/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);
});

describe('client retries against a gateway', () => {
  it('waits out retry_after under a tight rate limit, then succeeds with the same Idempotency-Key', async () => {
    const signUp = await fetch(`${gateway!.url}/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `limited-${Date.now()}@example.com`, name: 'Limited' }),
    });
    expect(signUp.status).toBe(201);
    const freeKey = ((await signUp.json()) as { key: { secret: string } }).key.secret;
    proxy = await startCountingProxy(gateway!.url);
    const client = createQuarryClient(
      { baseUrl: proxy.url, apiKey: freeKey },
      { retry: { retries: 3, baseDelayMs: 50, maxDelayMs: 10_000 } },
    );
    expect((await client.query('sales-by-region', { year: 2024 })).results.length).toBeGreaterThan(0);
    const second = await client.query('sales-by-region', { year: 2023 });
    expect(second.results.length).toBeGreaterThan(0);

    const [first, limited, retried, ...rest] = proxy.requests;
    expect(rest).toEqual([]);
    expect([first?.status, limited?.status, retried?.status]).toEqual([200, 429, 200]);
    const retryAfter = (JSON.parse(limited?.body ?? '{}') as { error: { retry_after: number } }).error
      .retry_after;
    expect(retryAfter).toBeGreaterThan(0);
    // Never sooner than retry_after (a few ms of slack for two clocks' rounding; no upper bound).
    expect(retried!.receivedAt - limited!.respondedAt).toBeGreaterThanOrEqual(retryAfter * 1000 - 20);
    expect(retried?.idempotencyKey).toBeDefined();
    expect(retried?.idempotencyKey).toBe(limited?.idempotencyKey);
  }, 60_000);

  it('sends a call that fails with a 400 exactly once', async () => {
    const counting = await startCountingProxy(gateway!.url);
    try {
      const client = createQuarryClient(
        { baseUrl: counting.url, apiKey: demoKey },
        { retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 1_000 } },
      );
      const error = await client.query('sales-by-region', { year: 'not a year' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect((error as InvalidParamsError).details.map((d) => d.param)).toContain('year');
      // Give a wrongful retry time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(counting.requests.map((r) => r.status)).toEqual([400]);
    } finally {
      await counting.close();
    }
  }, 30_000);
});

describe('quarry CLI: global flags, the console password, usage and statements', () => {
  /** A new account through the API; its email and key. */
  async function signUp(name: string): Promise<{ email: string; key: string }> {
    const email = `${name}-${Date.now()}@cli.test`;
    const response = await fetch(`${gateway!.url}/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, name }),
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { key: { secret: string } };
    return { email, key: body.key.secret };
  }

  it('takes --url, --key and --json before the command too', async () => {
    const run = await quarry(['--url', gateway!.url, '--key', demoKey, '--json', 'keys', 'list']);
    expect(run.code, run.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(run.stdout))).toBe(true);
    const mixed = await quarry([`--url=${gateway!.url}`, 'usage', '--key', demoKey, '--json']);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(JSON.parse(mixed.stdout)).toHaveProperty('period');
    const unknown = await quarry(['--colour', 'usage']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--colour');
  }, 60_000);

  it('sets the console password from stdin, and the console then logs in with it', async () => {
    const { email, key } = await signUp('cli-password');
    const env = { QUARRY_URL: gateway!.url, QUARRY_API_KEY: key };
    const password = 'correct horse battery staple';
    // Not a terminal and no --password-stdin: refused, nothing read.
    const refused = await quarry(['account', 'password'], { env, input: `${password}\n` });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--password-stdin');
    const set = await quarry(['account', 'password', '--password-stdin'], { env, input: `${password}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(email);
    expect(set.stdout + set.stderr).not.toContain(password);
    const login = await fetch(`${gateway!.url}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gateway!.url },
      body: JSON.stringify({ email, password }),
    });
    expect(login.status, await login.text()).toBeLessThan(300);
    const short = await quarry(['account', 'password', '--password-stdin'], { env, input: 'short\n' });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/INVALID_REQUEST|INVALID_PARAMS/);
  }, 60_000);

  it('counts an owner’s own calls in `usage`, in credits wording', async () => {
    const env = { QUARRY_URL: gateway!.url, QUARRY_API_KEY: demoKey };
    const deployed = await fetch(`${gateway!.url}/v1/owner/analytics/cli-own-calls`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli-own-calls', connection: 'demo', sql: 'SELECT 1 AS one', price: 1 }),
    });
    expect(deployed.status, await deployed.text()).toBeLessThan(300);
    for (let i = 0; i < 4; i++) {
      const run = await quarry(['query', 'cli-own-calls', '--no-cache'], { env });
      expect(run.code, run.stderr).toBe(0);
    }
    const json = await quarry(['usage', '--json'], { env });
    const own = (JSON.parse(json.stdout) as { totals: { calls_by_origin: { owner: number } } }).totals
      .calls_by_origin.owner;
    expect(own).toBeGreaterThanOrEqual(4);
    const readable = await quarry(['usage'], { env });
    expect(readable.code, readable.stderr).toBe(0);
    expect(readable.stdout).not.toContain('No calls in this period');
    expect(readable.stdout).toContain(`${own} calls of your own analytics`);
    expect(readable.stdout).toMatch(/credits used \d+/);
    expect(readable.stdout).not.toMatch(/calls\/month|remaining \d/);
  }, 90_000);

  it('prints `statements` within 100 columns, all the fields with --wide', async () => {
    const env = { QUARRY_URL: gateway!.url, QUARRY_API_KEY: demoKey };
    const run = await quarry(['statements'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('cli-own-calls');
    const widest = Math.max(...run.stdout.split('\n').map((line) => [...line].length));
    expect(widest, run.stdout).toBeLessThanOrEqual(100);
    const wide = await quarry(['statements', '--wide'], { env });
    expect(wide.code, wide.stderr).toBe(0);
    expect(wide.stdout).toContain('owner share millicredits');
  }, 60_000);
});

// Issue 29, item 11: the gateway answers both refusals below with 403 FORBIDDEN; only the one about
// the key's scopes is the key's fault (exit 3 and the "get another key" hint). A destination the
// operator's network policy refuses is exit 1 with the gateway's reason.
describe('quarry CLI: which 403s blame the key (real gateway)', () => {
  it("prints the network policy's reason for a private warehouse host, exit 1, without blaming the key", async () => {
    const run = await quarry(
      [
        'connections',
        'add',
        'private-shop',
        '--type',
        'postgres',
        '--set',
        'host=10.0.0.5',
        '--set',
        'database=shop',
        '--set',
        'user=reader',
        '--no-test',
      ],
      { env: { QUARRY_URL: gateway!.url, QUARRY_API_KEY: demoKey } },
    );
    expect(run.stderr).toMatch(
      /^quarry: FORBIDDEN: This connection is not allowed: 10\.0\.0\.5 is a private address/,
    );
    expect(run.stderr).toContain('config.host');
    expect(run.stderr).not.toContain('The key lacks a scope');
    expect(run.code, run.stderr).toBe(1);
  }, 30_000);

  it('still blames a key that lacks the owner scope, exit 3', async () => {
    const made = await fetch(`${gateway!.url}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'cli-query-only', scopes: ['query'] }),
    });
    expect(made.status).toBe(201);
    const queryOnly = ((await made.json()) as { key: { secret: string } }).key.secret;
    const run = await quarry(['connections', 'list'], {
      env: { QUARRY_URL: gateway!.url, QUARRY_API_KEY: queryOnly },
    });
    expect(run.stderr).toMatch(/^quarry: FORBIDDEN: This key lacks the "owner" scope\./);
    expect(run.stderr).toContain('The key lacks a scope this command needs');
    expect(run.code).toBe(3);
  }, 30_000);
});
