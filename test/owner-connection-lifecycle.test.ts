// Issue 29 #10, against a real gateway process (embedded store, QUARRY_ALLOW_HOST_FILES=true, the
// demo account calling): an owner whose connection backs a published analytic cannot delete it
// by accident (`quarry connections rm` is a 409 naming the analytic, and callers keep being
// served); `--force` deletes it and takes the listing off the marketplace, and callers then get
// a 404 naming the missing connection with no `retry_after` (never a 503 inviting retries). A
// connection's config is changed in place (`quarry connections update`): tested before it is
// saved, so a broken one changes nothing, and the next call reads the new warehouse.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';

let dir: string;
let gateway: GatewayProcess;
let demoKey: string;

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `quarry …` as a subprocess, logged in through QUARRY_URL/QUARRY_API_KEY when `key` is given. */
function quarry(args: readonly string[], key?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'), ...args], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: join(dir, 'home'),
        XDG_CONFIG_HOME: join(dir, 'config'),
        NODE_PATH: join(REPO_ROOT, 'node_modules'),
        QUARRY_URL: gateway.url,
        ...(key === undefined ? {} : { QUARRY_API_KEY: key }),
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

interface Answer {
  readonly status: number;
  readonly json: {
    readonly results?: readonly { readonly n: number }[];
    readonly error?: { readonly code: string; readonly message: string };
  };
}

async function call(name: string, year = 2024): Promise<Answer> {
  const response = await fetch(`${gateway.url}/v1/analytics/${name}?year=${year}`, {
    headers: { authorization: `Bearer ${demoKey}` },
  });
  return { status: response.status, json: (await response.json()) as Answer['json'] };
}

/** Signs up a new owner with the CLI; its key. */
async function signUp(email: string): Promise<string> {
  const run = await quarry(['signup', '--email', email, '--name', 'Owner', '--json']);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { key: { secret: string } }).key.secret;
}

const analytic = (name: string, connection: string) => `name: ${name}
title: Revenue by sales channel
category: sales
connection: ${connection}
sql: |
  SELECT channel, sum(amount) AS revenue, count(*) AS n FROM sales
  WHERE year = :year GROUP BY channel ORDER BY revenue DESC
params:
  year: {type: integer, required: true, min: 2000, max: 2100}
example_params: {year: 2024}
price: 1
visibility: public
`;

async function deploy(key: string, name: string, connection: string): Promise<void> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, analytic(name, connection));
  const run = await quarry(['analytics', 'deploy', file], key);
  expect(run.code, run.stderr + run.stdout).toBe(0);
}

const rows = (answer: Answer) => (answer.json.results ?? []).reduce((sum, r) => sum + Number(r.n), 0);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-owner-connections-'));
  const dataDir = join(dir, '.quarry');
  await mkdir(dataDir);
  await mkdir(join(dir, 'home'));
  await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 3000 });
  // Two warehouses of different sizes, to tell which one a call read.
  await copyFile(join(dataDir, 'demo.duckdb'), join(dir, 'big.duckdb'));
  await seedDemoWarehouse(join(dir, 'small.duckdb'), { rows: 300 });
  gateway = await startGateway({
    env: {
      QUARRY_DATA_DIR: dataDir,
      QUARRY_ALLOW_HOST_FILES: 'true',
      QUARRY_LOG_LEVEL: 'warn',
      // The test makes more management calls a minute than the Free plan's 10.
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
    },
    readyTimeoutMs: 90_000,
  });
  demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('deleting a connection that published analytics use', () => {
  it('is refused naming them; --force deletes it, unlists them, and callers get a 404 naming it, never a retry', async () => {
    const key = await signUp('conn-rm@example.com');
    const add = await quarry(
      ['connections', 'add', 'shop', '--type', 'duckdb', '--set', `path=${join(dir, 'big.duckdb')}`],
      key,
    );
    expect(add.code, add.stderr).toBe(0);
    await deploy(key, 'revenue-by-channel', 'shop');
    const publish = await quarry(['listings', 'publish', 'revenue-by-channel'], key);
    expect(publish.code, publish.stderr).toBe(0);
    expect((await call('revenue-by-channel')).status).toBe(200);

    const refused = await quarry(['connections', 'rm', 'shop'], key);
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.stderr).toContain('CONFLICT');
    expect(refused.stderr).toContain('revenue-by-channel');
    expect(refused.stderr).toContain('--force');
    // Nothing changed: the listing is up and callers are served.
    expect((await call('revenue-by-channel')).status).toBe(200);
    const listed = await fetch(`${gateway.url}/v1/marketplace/listings/revenue-by-channel`);
    expect(listed.status).toBe(200);

    const forced = await quarry(['connections', 'rm', 'shop', '--force'], key);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('revenue-by-channel');
    const unlisted = await fetch(`${gateway.url}/v1/marketplace/listings/revenue-by-channel`);
    expect(unlisted.status).toBe(404);
    const gone = await call('revenue-by-channel');
    expect(gone.status, JSON.stringify(gone.json)).toBe(404);
    expect(gone.json.error?.code).toBe('NOT_FOUND');
    expect(gone.json.error?.message).toContain('"shop"');
    expect(gone.json.error).not.toHaveProperty('retry_after');
  }, 120_000);
});

describe('changing a connection in place', () => {
  it('tests the new config before saving it, and the next call reads the new warehouse', async () => {
    const key = await signUp('conn-update@example.com');
    const add = await quarry(
      ['connections', 'add', 'wh', '--type', 'duckdb', '--set', `path=${join(dir, 'big.duckdb')}`],
      key,
    );
    expect(add.code, add.stderr).toBe(0);
    await deploy(key, 'wh-revenue', 'wh');
    const before = await call('wh-revenue');
    expect(before.status).toBe(200);

    // A file that is not there: refused, nothing saved, callers still served from the old one.
    const broken = await quarry(
      ['connections', 'update', 'wh', '--set', `path=${join(dir, 'missing.duckdb')}`],
      key,
    );
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('INVALID_REQUEST');
    const still = await call('wh-revenue');
    expect(still.status).toBe(200);
    expect(rows(still)).toBe(rows(before));

    const moved = await quarry(
      ['connections', 'update', 'wh', '--set', `path=${join(dir, 'small.duckdb')}`],
      key,
    );
    expect(moved.code, moved.stderr).toBe(0);
    const after = await call('wh-revenue');
    expect(after.status).toBe(200);
    expect(rows(after)).toBeLessThan(rows(before));
  }, 120_000);
});
