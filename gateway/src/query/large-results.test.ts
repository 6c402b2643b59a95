// Pages and exports through the app (the Hono adapter), on the demo DuckDB warehouse: pages of
// a result come once each and in order, from one charged call; a cursor outlives nothing it
// should not; exports answer the right media types, with refusals before the first byte as the
// JSON envelope (uncharged). test/large-results-export.test.ts runs 2,000,000 rows end to end.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
const ROWS = 5_000;

beforeAll(async () => {
  tg = await createTestGateway();
  const deployed = await tg.call('PUT', '/v1/owner/analytics/numbered-rows', {
    key: tg.ownerKey,
    body: {
      connection: 'demo',
      sql: `SELECT i::BIGINT AS id, 'row "' || i::VARCHAR || '", ok' AS label, i * 1.5 AS amount,
        DATE '2024-01-01' + (i % 30)::INTEGER AS day FROM range(${ROWS}) t(i) ORDER BY id`,
      limits: { max_rows: 100_000 },
      visibility: 'public',
    },
  });
  expect(deployed.status, deployed.text).toBeLessThan(300);
});
afterAll(async () => {
  await tg?.close();
});

const callsOf = async (key: string) => {
  const usage = await tg.call('GET', '/v1/account/usage', { key });
  expect(usage.status, usage.text).toBe(200);
  return (usage.json as { totals: { calls: number } }).totals.calls;
};

/** Results files in the gateway's result store. */
async function snapshotFiles(): Promise<number> {
  const root = join(tg.dataDir, 'results');
  let count = 0;
  for (const folder of await readdir(root)) count += (await readdir(join(root, folder))).length;
  return count;
}

interface Page {
  results: { id: number }[];
  meta: { next: string | null; credits: number; offset: number; total_rows: number; row_count: number };
}

describe('pages', () => {
  it('answers every row once, in order, from one charged call', async () => {
    const before = await callsOf(tg.demoKey);
    let res = await tg.call('GET', '/v1/analytics/numbered-rows?page_size=1200', { key: tg.demoKey });
    const ids: number[] = [];
    const credits: number[] = [];
    for (;;) {
      expect(res.status, res.text).toBe(200);
      const page = res.json as Page;
      expect(page.meta.total_rows).toBe(ROWS);
      expect(page.meta.offset).toBe(ids.length);
      ids.push(...page.results.map((r) => r.id));
      credits.push(page.meta.credits);
      if (page.meta.next === null) break;
      res = await tg.call('POST', '/v1/query', {
        key: tg.demoKey,
        body: { source: 'numbered-rows', cursor: page.meta.next },
      });
    }
    expect(ids).toEqual(Array.from({ length: ROWS }, (_, i) => i));
    expect(credits).toEqual([1, 0, 0, 0, 0]);
    expect(await callsOf(tg.demoKey)).toBe(before + 1);
  });

  it('refuses a page size past 10,000, a cursor of another analytic, and both at once', async () => {
    const tooBig = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'numbered-rows', page_size: 10_001 },
    });
    expect(tooBig.status, tooBig.text).toBe(400);
    const first = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'numbered-rows', page_size: 10 },
    });
    const cursor = (first.json as Page).meta.next as string;
    const elsewhere = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', cursor, params: { year: 2024 } },
    });
    expect(elsewhere.status, elsewhere.text).toBe(400);
    const both = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'numbered-rows', cursor, page_size: 10 },
    });
    expect(both.status, both.text).toBe(400);
    const csvPage = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'numbered-rows', page_size: 10 },
      headers: { accept: 'text/csv' },
    });
    expect(csvPage.status, csvPage.text).toBe(400);
  });
});

describe('exports', () => {
  it('answers CSV (quoted where needed), NDJSON, and each charged once', async () => {
    const before = await callsOf(tg.demoKey);
    const kept = await snapshotFiles();
    const csv = await tg.call('GET', '/v1/analytics/numbered-rows?format=csv', { key: tg.demoKey });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv');
    expect(csv.headers.get('x-row-count')).toBe(String(ROWS));
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe('id,label,amount,day');
    expect(lines[1]).toBe('0,"row ""0"", ok",0,2024-01-01');
    expect(lines[ROWS]).toBe(
      `${ROWS - 1},"row ""${ROWS - 1}"", ok",${(ROWS - 1) * 1.5},2024-01-${String(((ROWS - 1) % 30) + 1).padStart(2, '0')}`,
    );
    const ndjson = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'numbered-rows' },
      headers: { accept: 'application/x-ndjson, application/json;q=0.5' },
    });
    expect(ndjson.status).toBe(200);
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const rows = ndjson.text.trimEnd().split('\n');
    expect(rows).toHaveLength(ROWS);
    expect(JSON.parse(rows[7] as string)).toEqual({
      id: 7,
      label: 'row "7", ok',
      amount: 10.5,
      day: '2024-01-08',
    });
    expect(await callsOf(tg.demoKey)).toBe(before + 2);
    // An export's result (its analytic caches nothing) leaves the result store once sent.
    expect(await snapshotFiles()).toBe(kept);
  });

  it('answers a refusal before the first byte as the JSON envelope, uncharged', async () => {
    const before = await callsOf(tg.demoKey);
    const missing = await tg.call('GET', '/v1/analytics/no-such-analytic?format=parquet', {
      key: tg.demoKey,
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
    expect((missing.json as { error: { code: string } }).error.code).toBe('SOURCE_NOT_FOUND');
    const badParams = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: { year: 'x' } },
      headers: { accept: 'application/vnd.apache.arrow.stream' },
    });
    expect(badParams.status).toBe(400);
    expect((badParams.json as { error: { code: string } }).error.code).toBe('INVALID_PARAMS');
    const unknownFormat = await tg.call('GET', '/v1/analytics/numbered-rows?format=xml', { key: tg.demoKey });
    expect(unknownFormat.status).toBe(400);
    expect(await callsOf(tg.demoKey)).toBe(before);
  });
});
