// Every example analytic is loaded by the gateway on first start and shown on the marketplace:
// each must be complete, declare exactly the params its SQL uses, and run on the demo data with
// its example params, returning the columns its insights shape names.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// `yaml` is the gateway's YAML parser (hoisted in the workspace); only this test uses it here.
import { parse } from 'yaml';
import { type ParamSpecLike, runAnalyticSql, toNumberedPlaceholders } from './analytic-test-runner.js';
import { exampleAnalyticsDir } from './example-analytics-dir.js';
import { generateSales } from './sales-generator.js';
import { seedDemoWarehouse } from './seed-demo-warehouse.js';

interface Insights {
  readonly shape: 'single' | 'keyed' | 'series' | 'totals';
  readonly key?: string;
  readonly x?: string;
  readonly y?: readonly string[];
  readonly series?: string;
  readonly columns?: readonly string[];
}

interface AnalyticYaml {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly category: string;
  readonly tags: readonly string[];
  readonly connection: string;
  readonly sql: string;
  readonly params: Readonly<Record<string, ParamSpecLike & { readonly required?: boolean }>>;
  readonly insights: Insights;
  readonly cache: { readonly ttl: number };
  readonly limits: { readonly timeout_ms: number; readonly max_rows: number };
  readonly price: number;
  readonly visibility: string;
  readonly example_params: Readonly<Record<string, unknown>>;
}

const ROWS = 10_000;
let dir: string;
let instance: DuckDBInstance;
let connection: DuckDBConnection;
const analytics = new Map<string, AnalyticYaml>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-analytics-test-'));
  const file = join(dir, 'demo.duckdb');
  await seedDemoWarehouse(file, { rows: ROWS });
  instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  connection = await instance.connect();
  for (const name of await readdir(exampleAnalyticsDir())) {
    if (!name.endsWith('.yaml')) continue;
    analytics.set(name, parse(await readFile(join(exampleAnalyticsDir(), name), 'utf8')) as AnalyticYaml);
  }
});

afterAll(async () => {
  connection?.closeSync();
  instance?.closeSync();
  await rm(dir, { recursive: true, force: true });
});

function analytic(name: string): AnalyticYaml {
  const found = analytics.get(`${name}.yaml`);
  if (found === undefined) throw new Error(`examples/analytics/${name}.yaml is missing`);
  return found;
}

function run(a: AnalyticYaml, values: Readonly<Record<string, unknown>> = a.example_params) {
  return runAnalyticSql(connection, a.sql, a.params, values);
}

/** Columns an insights shape reads from each row. */
function insightColumns(insights: Insights): string[] {
  switch (insights.shape) {
    case 'single':
      return [];
    case 'keyed':
      return [insights.key!];
    case 'series':
      return [insights.x!, ...insights.y!, ...(insights.series === undefined ? [] : [insights.series])];
    case 'totals':
      return [...insights.columns!];
  }
}

describe('example analytics', () => {
  it('ships the two analytics docs/design.md §6 names and at least three more', () => {
    expect([...analytics.keys()]).toEqual(
      expect.arrayContaining(['sales-by-region.yaml', 'top-products.yaml']),
    );
    expect(analytics.size).toBeGreaterThanOrEqual(5);
  });

  it('gives every analytic the full catalogue definition', () => {
    for (const [file, a] of analytics) {
      expect(a.name, file).toBe(file.replace(/\.yaml$/, ''));
      expect(a.name, file).toMatch(/^[a-z][a-z0-9-]*$/);
      for (const text of [a.title, a.description, a.category])
        expect(typeof text === 'string' && text.length > 0, file).toBe(true);
      expect(a.tags.length, file).toBeGreaterThan(0);
      expect(a.connection, file).toBe('demo');
      expect(a.cache, file).toEqual({ ttl: 300 });
      expect(a.limits.timeout_ms, file).toBeGreaterThan(0);
      expect(a.limits.max_rows, file).toBeGreaterThan(0);
      expect(a.price, file).toBeGreaterThan(0);
      expect(a.visibility, file).toBe('public');
      expect(['single', 'keyed', 'series', 'totals'], file).toContain(a.insights.shape);
      expect(insightColumns(a.insights).length > 0 || a.insights.shape === 'single', file).toBe(true);
    }
  });

  it('declares exactly the params each SQL uses, and example params cover every required one', () => {
    for (const [file, a] of analytics) {
      const used = toNumberedPlaceholders(a.sql).names;
      expect([...used].sort(), file).toEqual(Object.keys(a.params).sort());
      for (const [name, spec] of Object.entries(a.params)) {
        if (spec.required === true) expect(a.example_params, `${file}: ${name}`).toHaveProperty(name);
      }
      for (const name of Object.keys(a.example_params))
        expect(a.params, `${file}: ${name}`).toHaveProperty(name);
    }
  });

  it('runs every analytic on the demo data with its example params, returning its insight columns', async () => {
    for (const [file, a] of analytics) {
      const rows = await run(a);
      expect(rows.length, file).toBeGreaterThan(0);
      expect(rows.length, file).toBeLessThanOrEqual(a.limits.max_rows);
      for (const column of insightColumns(a.insights))
        expect(rows[0], `${file}: ${column}`).toHaveProperty(column);
      if (a.insights.shape === 'single') expect(rows, file).toHaveLength(1);
    }
  });

  it('keeps sales-by-region exactly as docs/design.md §3 defines it', async () => {
    const a = analytic('sales-by-region');
    expect(a).toMatchObject({
      name: 'sales-by-region',
      title: 'Revenue by region',
      connection: 'demo',
      sql:
        'SELECT region, sum(amount) AS revenue\nFROM sales\n' +
        'WHERE year = :year AND (:region IS NULL OR region = :region)\n' +
        'GROUP BY region ORDER BY revenue DESC\n',
      params: {
        year: { type: 'integer', required: true, min: 2000, max: 2100 },
        region: { type: 'string', pattern: '^[A-Z]{2}$' },
      },
      insights: { shape: 'keyed', key: 'region' },
      cache: { ttl: 300 },
      limits: { timeout_ms: 5000, max_rows: 10000 },
      price: 1,
      visibility: 'public',
    });
    const all = await run(a, { year: 2024 });
    expect(all.map((r) => r.region).sort()).toEqual(['AF', 'AP', 'EU', 'LA', 'ME', 'NA']);
    const eu = await run(a, { year: 2024, region: 'EU' });
    expect(eu).toEqual([all.find((r) => r.region === 'EU')]);
  });

  it('keeps top-products as docs/design.md §6 defines it, honouring category and limit', async () => {
    const a = analytic('top-products');
    expect(a.sql.replace(/\s+/g, ' ').trim()).toBe(
      'SELECT product, category, sum(amount) AS revenue FROM sales WHERE category = :category ' +
        'GROUP BY product, category ORDER BY revenue DESC LIMIT :limit',
    );
    expect(a.params.category).toMatchObject({ type: 'string', required: true, maxLength: 64 });
    expect(a.params.limit).toMatchObject({ type: 'integer', min: 1, max: 100, default: 10 });

    const top3 = await run(a, { category: 'Toys', limit: 3 });
    expect(top3).toHaveLength(3);
    expect(new Set(top3.map((r) => r.category))).toEqual(new Set(['Toys']));
    const revenues = top3.map((r) => Number(r.revenue));
    expect(revenues).toEqual([...revenues].sort((x, y) => y - x));
    // Without a limit the default (10) applies; Toys has only 4 products.
    expect(await run(a, { category: 'Toys' })).toHaveLength(4);
    expect(await run(a, { category: 'Nonexistent' })).toEqual([]);
  });

  it('binds monthly-revenue regions as a typed DuckDB LIST, or NULL for all regions', async () => {
    const a = analytic('monthly-revenue');
    const some = await run(a, { year: 2023, regions: ['EU', 'NA'] });
    expect(new Set(some.map((r) => r.region))).toEqual(new Set(['EU', 'NA']));
    expect(some).toHaveLength(24); // 12 months × 2 regions: both sell every month
    const all = await run(a, { year: 2023 });
    expect(new Set(all.map((r) => r.region))).toEqual(new Set(['AF', 'AP', 'EU', 'LA', 'ME', 'NA']));
    // A value that looks like SQL is just a region that matches nothing: it is bound, not spliced.
    expect(await run(a, { year: 2023, regions: ["EU') OR 1=1 --"] })).toEqual([]);
  });

  it('sums sales-summary for a date range to the exact figures of the generated rows', async () => {
    const a = analytic('sales-summary');
    let orders = 0;
    let cents = 0;
    for (const row of generateSales({ rows: ROWS })) {
      if (row.sold_at >= '2024-03-01' && row.sold_at <= '2024-05-31') {
        orders++;
        cents += row.amount_cents;
      }
    }
    const [summary] = await run(a, { start_date: '2024-03-01', end_date: '2024-05-31' });
    expect(Number(summary?.orders)).toBe(orders);
    expect(Number(summary?.revenue)).toBeCloseTo(cents / 100, 2);
    expect(Number(summary?.average_order_value)).toBeCloseTo(cents / 100 / orders, 2);
  });

  it('filters category-totals by the enum channel param', async () => {
    const a = analytic('category-totals');
    const online = await run(a, { year: 2025, channel: 'online' });
    const everything = await run(a, { year: 2025 });
    const orders = (rows: Record<string, unknown>[]) => rows.reduce((n, r) => n + Number(r.orders), 0);
    expect(orders(online)).toBeGreaterThan(0);
    expect(orders(online)).toBeLessThan(orders(everything));
  });

  it('splits channel-mix into shares that add up to 100%', async () => {
    const rows = await run(analytic('channel-mix'), { year: 2024 });
    expect(rows.map((r) => r.channel).sort()).toEqual(['online', 'partner', 'retail']);
    const total = rows.reduce((sum, r) => sum + Number(r.revenue_share_pct), 0);
    expect(Math.abs(total - 100)).toBeLessThanOrEqual(0.2);
  });
});
