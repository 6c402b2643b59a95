// The README's owner quick start, run as written (issue 18): a real gateway process started as
// its first block says (embedded store, an empty data directory, QUARRY_ALLOW_HOST_FILES=true;
// the demo warehouse seeded as `npm start` seeds it), then its second block run by bash, command
// by command (`set -ex`), in a directory whose `.quarry` is that data directory. `npx quarry` is
// the workspace's own bin (npx would resolve it the same way from the repository's root); the
// gateway's port comes from QUARRY_URL. It must end with the owner's statement showing the
// demo account's call.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';

let dir: string;
let gateway: GatewayProcess | undefined;

/** The ```sh blocks of one README section. */
function shellBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, `README has a "${heading}" section`).toBeGreaterThan(-1);
  const rest = readme.slice(start + heading.length + 2);
  const section = rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

function bash(script: string, env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-owner-qs-'));
  await mkdir(join(dir, '.quarry'));
  await mkdir(join(dir, 'home'));
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe("the README's owner quick start", () => {
  it('signs up, connects, deploys, lists, and ends with a statement showing another account’s call', async () => {
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    const [start, steps] = shellBlocks(readme, '## Owner quick start');
    expect(start?.trim()).toBe('QUARRY_ALLOW_HOST_FILES=true npm start');
    expect(steps).toBeDefined();

    const dataDir = join(dir, '.quarry');
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 3000 });
    gateway = await startGateway({
      env: { QUARRY_DATA_DIR: dataDir, QUARRY_ALLOW_HOST_FILES: 'true', QUARRY_LOG_LEVEL: 'warn' },
      readyTimeoutMs: 90_000,
    });
    const bin = join(REPO_ROOT, 'client', 'bin', 'quarry.mjs');
    const script = [
      'set -ex',
      `npx() { if [ "$1" = quarry ]; then shift; node ${JSON.stringify(bin)} "$@"; else command npx "$@"; fi; }`,
      steps as string,
    ].join('\n');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: join(dir, 'home'),
      XDG_CONFIG_HOME: join(dir, 'config'),
      QUARRY_URL: gateway.url,
      // bin/quarry.mjs resolves tsx from the repository, wherever it is run.
      NODE_PATH: join(REPO_ROOT, 'node_modules'),
    };
    const run = await bash(script, env, dir);
    expect(run.code, `${run.stderr}\n${run.stdout}`).toBe(0);
    // The last command, `npx quarry statements`, shows the analytic's call.
    const statement = run.stdout.slice(run.stdout.lastIndexOf('Statement for'));
    expect(statement, run.stdout).toMatch(/^revenue-by-channel\s+1\s/m);
    // The same over the API, with the owner's saved key.
    const saved = JSON.parse(await readFile(join(dir, 'config', 'quarry', 'credentials.json'), 'utf8')) as {
      key: string;
    };
    // The quick start spent the owner's management allowance (10 a minute on Free): wait it out.
    let response = await fetch(`${gateway.url}/v1/owner/statements`, {
      headers: { authorization: `Bearer ${saved.key}` },
    });
    for (let i = 0; i < 3 && response.status === 429; i++) {
      const wait = Number(response.headers.get('retry-after') ?? '5');
      await new Promise((resolve) => setTimeout(resolve, (wait + 0.5) * 1000));
      response = await fetch(`${gateway.url}/v1/owner/statements`, {
        headers: { authorization: `Bearer ${saved.key}` },
      });
    }
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const json = JSON.parse(text) as { analytics: { name: string; calls: number }[] };
    expect(json.analytics.find((a) => a.name === 'revenue-by-channel')?.calls).toBe(1);
  }, 240_000);
});
