// Smoke test of the peer bench: one short round, so CI proves `npm run bench:peer` still works end
// to end (world, gateway, bare server and PostGraphile processes, the check that Quarry and the
// peer return the same row, load, CPU by party, JSON, cleanup). It asserts the bench measured
// what it claims to, never a speed. Needs Postgres: skipped loudly without it, failed under CI=true.
import { readFile, rm } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runPeerBench } from './peer-bench.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function pgAvailable(): Promise<true | string> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    return `Postgres at ${PG_URL} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

const availability = await pgAvailable();
if (availability !== true) {
  if (process.env.CI === 'true') throw new Error(`CI requires Postgres: ${availability}`);
  console.warn(`\n!!!!!!!! SKIPPING the peer bench smoke test: ${availability} !!!!!!!!\n`);
}

describe.skipIf(availability !== true)('peer bench (smoke: one ~1 s round)', () => {
  const files: string[] = [];
  afterAll(async () => {
    for (const file of files) await rm(file, { force: true });
  });

  it('serves the lookup three ways, measures each side, writes the JSON and removes its schemas', async () => {
    const result = await runPeerBench({
      rounds: 1,
      seconds: 1,
      warmup: 0,
      connections: 4,
      pgUrl: PG_URL,
      pin: false,
    });
    files.push(result.file);
    expect(result.results.map((r) => r.side)).toEqual(['bare', 'quarry', 'peer']);
    for (const side of result.results) {
      expect(side.failures, side.side).toBe(0);
      expect(side.reqPerSec, side.side).toBeGreaterThan(0);
      expect(side.server, side.side).toBeGreaterThan(0);
    }
    // Quarry's and the peer's own PostgreSQL sessions did the lookups (and Quarry's usage events).
    const [, quarry, peer] = result.results;
    expect(quarry?.ownPostgres).toBeGreaterThan(0);
    expect(peer?.ownPostgres).toBeGreaterThan(0);
    expect(result.pairs).toHaveLength(1);
    const json = JSON.parse(await readFile(result.file, 'utf8')) as { results: unknown[] };
    expect(json.results).toHaveLength(3);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const left = await client.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [
        `quarry_bench_%_${process.pid}_%`,
      ]);
      expect(left.rows).toEqual([]);
    } finally {
      await client.end();
    }
  }, 180_000);
});
