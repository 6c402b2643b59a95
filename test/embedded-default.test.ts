// The embedded default, as `npm start` runs it: the seeder CLI fills an empty data dir with the
// DuckDB demo warehouse, the gateway starts with no database settings at all (PGlite store,
// demo account), and the curl command it prints answers with revenue for six regions.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';

const run = promisify(execFile);
/** The command the gateway prints for newcomers. */
const CURL =
  /curl -s -X POST (\S+) -H "Authorization: Bearer (\S+)" -H 'Content-Type: application\/json' -d '([^']+)'/;

describe('embedded default (npm start with no database)', () => {
  let dataDir: string | undefined;
  let gateway: GatewayProcess | undefined;

  afterAll(async () => {
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('seeds, starts, prints a working curl command, and answers it with six regions', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-embedded-'));
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', QUARRY_DATA_DIR: dataDir };
    const seedStarted = performance.now();
    const seeded = await run('npm', ['run', '-s', 'seed', '-w', '@quarry/examples'], { cwd: REPO_ROOT, env });
    const seedMs = performance.now() - seedStarted;
    expect(seeded.stdout).toMatch(/created demo warehouse .*demo\.duckdb/);

    gateway = await startGateway({ env: { QUARRY_DATA_DIR: dataDir }, readyTimeoutMs: 90_000 });
    const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    // The banner is written right after the listening log line, so it may trail /healthz a little.
    const deadline = performance.now() + 5000;
    while (!CURL.test(gateway.stdout()) && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const match = CURL.exec(gateway.stdout());
    expect(match, gateway.stdout()).not.toBeNull();
    const [, url, printedKey, body] = match as RegExpExecArray;
    expect(printedKey).toBe(key);
    expect(JSON.parse(body as string)).toEqual({ source: 'sales-by-region', params: { year: 2024 } });

    const response = await fetch(url as string, {
      method: 'POST',
      headers: { authorization: `Bearer ${printedKey}`, 'content-type': 'application/json' },
      body,
    });
    const answeredMs = performance.now() - gateway.spawnedAt;
    const answer = (await response.json()) as { results: { region: string; revenue: unknown }[] };
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer.results).toHaveLength(6);
    expect(new Set(answer.results.map((r) => r.region)).size).toBe(6);
    for (const row of answer.results) {
      expect(row.region).toMatch(/^[A-Z]{2}$/);
      expect(Number(row.revenue)).toBeGreaterThan(0);
    }
    console.log(
      `[e2e] embedded default: seed ${Math.round(seedMs)} ms; gateway spawn → /healthz ${Math.round(gateway.startupMs)} ms; spawn → first answer ${Math.round(answeredMs)} ms`,
    );
  }, 150_000);
});
