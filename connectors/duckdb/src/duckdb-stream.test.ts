// Connector.stream on DuckDB through the SDK runtime: rows arrive in batches, JSON-safe and in
// order, the next chunk computed only once the sink took the last; `maxRows` cuts the result and
// says so; a sink's own error stops the query and comes out as itself.
import { createConnector, parseTemplate, type ResultRow } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbPlugin } from './duckdb-plugin.js';

let connector: Awaited<ReturnType<typeof createConnector>>;

beforeAll(async () => {
  connector = await createConnector(duckdbPlugin, { path: ':memory:' });
});
afterAll(async () => {
  await connector?.close();
});

const template = parseTemplate(
  "SELECT i::BIGINT AS id, DATE '2024-01-01' + (i % 7)::INTEGER AS day FROM range(:n) t(i) ORDER BY id",
  duckdbPlugin.dialect,
);

describe('DuckDB streaming', () => {
  it('hands every row once, in order, batch by batch, and cuts at maxRows', async () => {
    const seen: ResultRow[] = [];
    let batches = 0;
    let columns: unknown;
    const summary = await connector.stream(
      { template, params: { n: { type: 'integer', array: false, value: 50_000 } }, maxRows: 30_000 },
      {
        columns(described) {
          columns = described.map((c) => `${c.name}:${c.type}`);
        },
        async rows(batch) {
          batches++;
          await new Promise((resolve) => setImmediate(resolve));
          seen.push(...batch);
        },
      },
    );
    expect(columns).toEqual(['id:integer', 'day:date']);
    expect(summary).toMatchObject({ rowCount: 30_000, truncated: true });
    expect(seen).toHaveLength(30_000);
    expect(seen[0]).toEqual({ id: 0, day: '2024-01-01' });
    expect(seen.every((row, index) => row.id === index)).toBe(true);
    expect(batches).toBeGreaterThan(5);
  });

  it("stops for a failed sink with the sink's own error, and keeps answering", async () => {
    const full = new Error('disk full');
    const refused = await connector
      .stream(
        { template, params: { n: { type: 'integer', array: false, value: 1_000_000 } }, maxRows: 1_000_000 },
        {
          columns() {},
          rows() {
            throw full;
          },
        },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBe(full);
    const again = await connector.query({
      template,
      params: { n: { type: 'integer', array: false, value: 3 } },
    });
    expect(again.rows.map((r) => r.id)).toEqual([0, 1, 2]);
  });
});
