// The query contract (docs/design.md §2–3) in process: response shape and types, query-string
// coercion, param errors, and every insights shape of the example analytics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf } from '../money/billing-period.js';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;

beforeAll(async () => {
  tg = await createTestGateway();
});
afterAll(async () => {
  await tg?.close();
});

function expectQueryBody(res: Awaited<ReturnType<TestGateway['call']>>, source: string): void {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = res.json;
  expect(Object.keys(body).sort()).toEqual(
    ['columns', 'meta', 'results', 'source', ...('insights' in body ? ['insights'] : [])].sort(),
  );
  expect(body.source).toBe(source);
  expect(Array.isArray(body.results)).toBe(true);
  for (const column of body.columns) {
    expect(typeof column.name).toBe('string');
    expect(typeof column.type).toBe('string');
  }
  const meta = body.meta;
  expect(meta.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(meta.request_id).toBe(res.headers.get('x-request-id'));
  // A repeated call may be served from the result cache; the header and meta agree.
  expect(meta.cached).toBe(res.headers.get('x-cache') !== 'MISS');
  expect(typeof meta.duration_ms).toBe('number');
  expect(meta.row_count).toBe(body.results.length);
  expect(typeof meta.truncated).toBe('boolean');
  expect(Number.isInteger(meta.credits)).toBe(true);
  expect(Number.isInteger(meta.version)).toBe(true);
}

describe('POST /v1/query and GET /v1/analytics/:name', () => {
  it('answer {source, results, insights, columns, meta} with typed values', async () => {
    const res = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expectQueryBody(res, 'sales-by-region');
    const { results, columns, meta } = res.json;
    expect(columns).toEqual([
      { name: 'region', type: 'string' },
      { name: 'revenue', type: expect.stringMatching(/^(number|decimal)$/) },
    ]);
    expect(results.length).toBeGreaterThan(1);
    for (const row of results) {
      expect(row.region).toMatch(/^[A-Z]{2}$/);
      expect(typeof row.revenue).toBe('number');
    }
    // ORDER BY revenue DESC
    const revenues = results.map((r: { revenue: number }) => r.revenue);
    expect(revenues).toEqual([...revenues].sort((a, b) => b - a));
    expect(meta).toMatchObject({ truncated: false, credits: 1, version: 1, row_count: results.length });
  });

  it('gives the same answer over GET with the year coerced to an integer', async () => {
    const post = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    const get = await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key: tg.demoKey });
    expectQueryBody(get, 'sales-by-region');
    expect(get.json.results).toEqual(post.json.results);
    expect(get.json.insights).toEqual(post.json.insights);
    expect(get.json.meta.request_id).not.toBe(post.json.meta.request_id);
  });

  it('filters by an optional query-string param', async () => {
    const res = await tg.call('GET', '/v1/analytics/sales-by-region?year=2024&region=EU', {
      key: tg.demoKey,
    });
    expectQueryBody(res, 'sales-by-region');
    expect(res.json.results).toHaveLength(1);
    expect(res.json.results[0].region).toBe('EU');
  });

  it('makes arrays from a comma list and from repeated keys alike', async () => {
    const comma = await tg.call('GET', '/v1/analytics/monthly-revenue?year=2024&regions=EU,NA', {
      key: tg.demoKey,
    });
    const repeated = await tg.call('GET', '/v1/analytics/monthly-revenue?year=2024&regions=EU&regions=NA', {
      key: tg.demoKey,
    });
    expectQueryBody(comma, 'monthly-revenue');
    expectQueryBody(repeated, 'monthly-revenue');
    const regions = new Set(comma.json.results.map((r: { region: string }) => r.region));
    expect([...regions].sort()).toEqual(['EU', 'NA']);
    expect(repeated.json.results).toEqual(comma.json.results);
    const viaPost = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'monthly-revenue', params: { year: 2024, regions: ['EU', 'NA'] } },
    });
    expect(viaPost.json.results).toEqual(comma.json.results);
  });

  it('marks a result cut at max_rows as truncated', async () => {
    // sales-summary has max_rows 1 and returns one row: not truncated. An owner analytic with a
    // smaller cap than its rows must say truncated.
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: {
        name: 'query-test-truncated',
        connection: 'demo',
        sql: 'SELECT id FROM sales ORDER BY id',
        limits: { max_rows: 3 },
        visibility: 'public',
      },
    });
    expect(created.status, created.text).toBe(201);
    const res = await tg.call('GET', '/v1/analytics/query-test-truncated', { key: tg.demoKey });
    expectQueryBody(res, 'query-test-truncated');
    expect(res.json.results).toHaveLength(3);
    expect(res.json.meta).toMatchObject({ truncated: true, row_count: 3 });
    expect(res.json).not.toHaveProperty('insights');
  });

  it('takes limits.max_bytes_billed (ignored by engines that do not bill by bytes) and refuses a bad one', async () => {
    const body = {
      name: 'query-test-bytes-guard',
      connection: 'demo',
      sql: 'SELECT id FROM sales ORDER BY id LIMIT 2',
      visibility: 'public',
    };
    const bad = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: { ...body, limits: { max_bytes_billed: 0 } },
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_REQUEST');
    expect(bad.text).toContain('max_bytes_billed');
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: { ...body, limits: { max_bytes_billed: 10_000_000_000 } },
    });
    expect(created.status, created.text).toBe(201);
    const res = await tg.call('GET', '/v1/analytics/query-test-bytes-guard', { key: tg.demoKey });
    expectQueryBody(res, 'query-test-bytes-guard');
    expect(res.json.results).toHaveLength(2);
  });
});

describe('param errors', () => {
  it('lists one detail per failing param (bad integer, bad array item, unknown param)', async () => {
    const res = await tg.call('GET', '/v1/analytics/monthly-revenue?year=abc&regions=EU,eu&colour=red', {
      key: tg.demoKey,
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('INVALID_PARAMS');
    expect(res.json.error.request_id).toBe(res.headers.get('x-request-id'));
    const params = res.json.error.details.map((d: { param: string }) => d.param).sort();
    expect(params).toEqual(['colour', 'regions[1]', 'year']);
    for (const d of res.json.error.details) expect(d.message.length).toBeGreaterThan(0);
  });

  it('reports a missing required param and an out-of-bounds one over POST', async () => {
    const res = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'top-products', params: { limit: 1000 } },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('INVALID_PARAMS');
    expect(res.json.error.details.map((d: { param: string }) => d.param).sort()).toEqual([
      'category',
      'limit',
    ]);
  });

  it('takes a body without params when the analytic requires none, and names what is required otherwise', async () => {
    const none = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: { source: 'yearly-growth' } });
    expect(none.status, none.text).toBe(200);
    expect(none.json.results.length).toBeGreaterThan(0);
    const missing = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: { source: 'top-products' } });
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('INVALID_PARAMS');
    expect(missing.json.error.details.map((d: { param: string }) => d.param)).toEqual(['category']);
  });

  it('refuses a value of the wrong JSON type', async () => {
    const res = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: { year: 2024.5 } },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('INVALID_PARAMS');
    expect(res.json.error.details).toEqual([{ param: 'year', message: expect.any(String) }]);
  });

  it('treats ?__proto__= as an unknown param, not a prototype', async () => {
    const res = await tg.call('GET', '/v1/analytics/sales-by-region?year=2024&__proto__=x', {
      key: tg.demoKey,
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details.map((d: { param: string }) => d.param)).toEqual(['__proto__']);
  });
});

describe('insights shapes of the example analytics', () => {
  it('keyed: one entry per key column value, the rest of the row as value', async () => {
    const res = await tg.call('GET', '/v1/analytics/channel-mix?year=2023', { key: tg.demoKey });
    expectQueryBody(res, 'channel-mix');
    const { results, insights } = res.json;
    expect(Object.keys(insights).sort()).toEqual(results.map((r: { channel: string }) => r.channel).sort());
    for (const row of results) {
      const { channel, ...rest } = row;
      expect(insights[channel]).toEqual(rest);
    }
  });

  it('single: the one row as an object', async () => {
    const res = await tg.call(
      'GET',
      '/v1/analytics/sales-summary?start_date=2024-01-01&end_date=2024-12-31&region=EU',
      { key: tg.demoKey },
    );
    expectQueryBody(res, 'sales-summary');
    expect(res.json.results).toHaveLength(1);
    expect(res.json.insights).toEqual(res.json.results[0]);
    expect(res.json.insights.orders).toBeGreaterThan(0);
  });

  it('series without `series`: x values and one series per y column', async () => {
    const res = await tg.call('GET', '/v1/analytics/yearly-growth', { key: tg.demoKey });
    expectQueryBody(res, 'yearly-growth');
    const { results, insights } = res.json;
    expect(insights.x).toEqual(results.map((r: { year: number }) => r.year));
    expect(insights.series.map((s: { name: string }) => s.name)).toEqual(['revenue', 'growth_pct']);
    expect(insights.series[0].data).toEqual(results.map((r: { revenue: number }) => r.revenue));
    expect(insights.series[1].data[0]).toBeNull();
  });

  it('series with `series`: one line per region aligned on x', async () => {
    const res = await tg.call('GET', '/v1/analytics/monthly-revenue?year=2024&regions=EU,NA,AP', {
      key: tg.demoKey,
    });
    expectQueryBody(res, 'monthly-revenue');
    const { results, insights } = res.json;
    const months = [...new Set(results.map((r: { month: string }) => r.month))];
    expect(insights.x).toEqual(months);
    expect(months[0]).toBe('2024-01-01');
    expect(insights.series.map((s: { name: string }) => s.name).sort()).toEqual(['AP', 'EU', 'NA']);
    for (const s of insights.series) {
      expect(s.data).toHaveLength(months.length);
      for (const [i, month] of months.entries()) {
        const row = results.find(
          (r: { month: string; region: string }) => r.month === month && r.region === s.name,
        );
        expect(s.data[i]).toBe(row ? row.revenue : null);
      }
    }
  });

  it('totals: column sums and the row count', async () => {
    const res = await tg.call('GET', '/v1/analytics/category-totals?year=2024&channel=online', {
      key: tg.demoKey,
    });
    expectQueryBody(res, 'category-totals');
    const { results, insights } = res.json;
    const revenue = results.reduce((s: number, r: { revenue: number }) => s + r.revenue, 0);
    const orders = results.reduce((s: number, r: { orders: number }) => s + r.orders, 0);
    expect(insights.revenue).toBeCloseTo(revenue, 2);
    expect(insights.orders).toBe(orders);
    expect(insights.rows).toBe(results.length);
  });
});

describe('RESULT_TOO_LARGE', () => {
  it('refuses a result past QUARRY_MAX_RESULT_BYTES with 422, uncharged and uncached', async () => {
    const small = await createTestGateway({ QUARRY_MAX_RESULT_BYTES: '65536' });
    try {
      const created = await small.call('POST', '/v1/owner/analytics', {
        key: small.ownerKey,
        body: {
          name: 'wide-rows',
          connection: 'demo',
          sql: "SELECT repeat('x', 200) AS s, i FROM range(:n) t(i)",
          params: { n: { type: 'integer', required: true, min: 1, max: 100000 } },
          cache: { ttl: 300 },
          limits: { max_rows: 100000 },
          visibility: 'public',
        },
      });
      expect(created.status, created.text).toBe(201);
      const caller = await small.signUp('Wide');
      const call = (n: number) =>
        small.call('POST', '/v1/query', { key: caller.key, body: { source: 'wide-rows', params: { n } } });
      const usage = () => small.gateway.services.money.usage.counter(caller.accountId, periodOf(new Date()));

      // ~270 bytes a row against a 64 KiB bound: 100 rows fit, 1,000 do not.
      expect((await call(100)).status).toBe(200);
      const before = await usage();
      for (let i = 0; i < 2; i++) {
        const refused = await call(1000);
        expect(refused.status, refused.text).toBe(422);
        expect(refused.json.error.code).toBe('RESULT_TOO_LARGE');
        expect(refused.json.error.message).toContain('64 KiB');
        expect(refused.headers.get('x-cache')).toBeNull();
      }
      // Neither refusal was charged or counted.
      expect(await usage()).toEqual(before);
    } finally {
      await small.close();
    }
  });
});
