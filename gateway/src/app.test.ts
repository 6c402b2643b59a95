// The app's operational surface: OpenAPI 3.1 covering every served route (and validating like the
// handlers do), the docs page, liveness, readiness and Prometheus metrics by route template.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallResult, createTestGateway, type TestGateway } from './testing/test-gateway.js';

let tg: TestGateway;

beforeAll(async () => {
  tg = await createTestGateway();
});
afterAll(async () => {
  await tg?.close();
});

/** `/v1/keys/:id` → `/v1/keys/{id}`. */
const openApiPath = (path: string) => path.replace(/:([^/]+)/g, '{$1}');

describe('OpenAPI', () => {
  it('is OpenAPI 3.1 and documents every route the app serves', async () => {
    const res = await tg.call('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toBe('Quarry API');
    const served = tg.gateway.app.routes
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => `${r.method} ${openApiPath(r.path)}`);
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(served.length).toBeGreaterThan(15);
    expect([...new Set(documented)].sort()).toEqual([...new Set(served)].sort());
  });

  it('describes the query request exactly as the handler validates it', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const body = doc.paths['/v1/query'].post.requestBody.content['application/json'].schema;
    const schema = body.$ref ? doc.components.schemas[body.$ref.split('/').at(-1)] : body;
    expect(schema.type).toBe('object');
    // params may be left out when the analytic requires none.
    expect(schema.required).toEqual(['source']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.source.type).toBe('string');
    expect(schema.properties.params.type).toBe('object');
    // What the schema refuses, the handler refuses.
    const extra = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: { year: 2024 }, extra: true },
    });
    expect(extra.status).toBe(400);
    const noSource = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: { params: {} } });
    expect(noSource.status).toBe(400);
    const stringParams = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'sales-by-region', params: 'year=2024' },
    });
    expect(stringParams.status).toBe(400);
    expect(stringParams.json.error.code).toBe('INVALID_REQUEST');
    // A missing `params` is `{}` (the analytic's param schema then names any required one), as
    // the document and docs/design.md §2 say; the first design asked for INVALID_REQUEST, which
    // made callers of parameterless analytics send `{}` for nothing.
    const noParams = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'yearly-growth' },
    });
    expect(noParams.status, noParams.text).toBe(200);
    const emptyParams = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'yearly-growth', params: {} },
    });
    expect(emptyParams.status).toBe(200);
  });

  it('documents the error envelope on the query route', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const responses = doc.paths['/v1/query'].post.responses;
    for (const status of ['400', '401', '403', '404', '413', '415', '429', '500', '502', '503', '504']) {
      expect(responses[status], status).toBeDefined();
    }
    expect(doc.components.schemas.Error.properties.error.required).toEqual(
      expect.arrayContaining(['code', 'message', 'request_id', 'details']),
    );
  });

  it('documents every header the query routes read and send, 304 included', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const post = doc.paths['/v1/query'].post;
    const get = doc.paths['/v1/analytics/{name}'].get;
    const headerParams = (op: { parameters?: { in: string; name: string }[] }) =>
      (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
    expect(headerParams(post).sort()).toEqual([
      'accept',
      'cache-control',
      'idempotency-key',
      'if-none-match',
      'prefer',
    ]);
    expect(headerParams(get).sort()).toEqual(['accept', 'cache-control', 'if-none-match', 'prefer']);
    expect(post.responses['200'].headers['X-Cache'].schema.enum).toEqual(['HIT', 'STALE', 'MISS']);

    /** Fails on any header a real answer carries that the document does not declare for it. */
    const declared = (op: { responses: Record<string, { headers?: object }> }, res: CallResult) => {
      const documented = new Set(
        Object.keys(op.responses[String(res.status)]?.headers ?? {}).map((name) => name.toLowerCase()),
      );
      // What HTTP itself says about the body is not the API's to document.
      const sent = [...res.headers.keys()].filter(
        (name) => !['content-type', 'content-length'].includes(name),
      );
      expect(
        sent.filter((name) => !documented.has(name)),
        `undeclared on ${res.status}`,
      ).toEqual([]);
      return sent;
    };
    const body = { source: 'sales-by-region', params: { year: 2024 } };
    const first = await tg.call('POST', '/v1/query', { key: tg.demoKey, body });
    expect(first.status).toBe(200);
    expect(declared(post, first)).toEqual(
      expect.arrayContaining([
        'x-cache',
        'etag',
        'cache-control',
        'ratelimit',
        'ratelimit-policy',
        'x-request-id',
      ]),
    );
    const etag = first.headers.get('etag') ?? '';
    const unchanged = await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', {
      key: tg.demoKey,
      headers: { 'if-none-match': etag },
    });
    expect(unchanged.status).toBe(304);
    declared(get, unchanged);
    declared(post, await tg.call('POST', '/v1/query', { key: 'qk_nope', body }));
    declared(
      post,
      await tg.call('POST', '/v1/query', { key: tg.demoKey, body: { source: 'no-such', params: {} } }),
    );
    declared(get, await tg.call('GET', '/v1/analytics/sales-by-region?year=x', { key: tg.demoKey }));
    // A Free account past its month's calls: 429 QUOTA_EXCEEDED with Retry-After.
    const metered = await createTestGateway({ QUARRY_FREE_CALLS: '1' });
    try {
      const free = await metered.signUp('Quota');
      expect((await metered.call('POST', '/v1/query', { key: free.key, body })).status).toBe(200);
      const refused = await metered.call('POST', '/v1/query', { key: free.key, body });
      expect(refused.json.error.code).toBe('QUOTA_EXCEEDED');
      expect(declared(post, refused)).toContain('retry-after');
    } finally {
      await metered.close();
    }
  });

  it('serves the docs page as HTML from its own assets, under a CSP with no inline script', async () => {
    const res = await tg.call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    // Nothing is loaded from another host (no CDN), and no script is inline: the reference at
    // /docs loads its one script; the Swagger UI explorer at /docs/swagger its bundle, styles and
    // start-up script.
    expect(res.text).toContain('data-op="POST /v1/query"');
    const explorer = await tg.call('GET', '/docs/swagger');
    expect(explorer.headers.get('content-security-policy')).toBe(csp);
    for (const [page, atLeast] of [
      [res.text, 1],
      [explorer.text, 3],
    ] as const) {
      const loads = [...page.matchAll(/<(?:script|link)[^>]*(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(loads.length).toBeGreaterThanOrEqual(atLeast);
      for (const url of loads) expect(url).toMatch(/^\/docs\/assets\//);
      expect(page).not.toMatch(/<script>/);
    }
    // Every text of the document is escaped: no element but the page's own.
    expect(res.text).not.toMatch(
      /<(?!\/?(?:html|head|meta|title|style|body|header|p|span|nav|a|main|h1|h2|h4|section|label|input|ul|li|code|details|summary|div|table|caption|thead|tbody|tr|th|td|textarea|button|output|script)\b)[a-z]/i,
    );
    const init = await tg.call('GET', '/docs/assets/init.js');
    expect(init.text).toContain('/v1/openapi.json');
    const bundle = await tg.call('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(bundle.text.length).toBeGreaterThan(100_000);
    expect((await tg.call('GET', '/docs/assets/swagger-ui.css')).headers.get('content-type')).toMatch(
      /^text\/css/,
    );
    // Only the page's own files: not the package's other files, and no path out of it.
    for (const path of ['/docs/assets/package.json', '/docs/assets/..%2F..%2Fpackage.json']) {
      expect((await tg.call('GET', path)).status).toBe(404);
    }
  });
});

describe('operations', () => {
  it('answers /healthz and /readyz', async () => {
    const health = await tg.call('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const ready = await tg.call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ok' });
    for (const res of [
      health,
      ready,
      await tg.call('GET', '/docs'),
      await tg.call('GET', '/v1/openapi.json'),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('shows /readyz checks (connection ids included) to the operator token only', async () => {
    const admin = await createTestGateway({ QUARRY_ADMIN_TOKEN: 'operator-token-0123456789' });
    try {
      // A connection in the pool: its id must not reach anonymous callers.
      await admin.call('POST', '/v1/query', {
        key: admin.demoKey,
        body: { source: 'sales-by-region', params: { year: 2024 } },
      });
      const anonymous = await admin.call('GET', '/readyz');
      expect(anonymous.json).toEqual({ status: 'ok' });
      expect(anonymous.text).not.toContain('connection:');
      for (const key of [admin.demoKey, 'operator-token-wrong-56789']) {
        expect((await admin.call('GET', '/readyz', { key })).json).toEqual({ status: 'ok' });
      }
      const operator = await admin.call('GET', '/readyz', { key: 'operator-token-0123456789' });
      expect(operator.json.checks.store).toEqual({ ok: true });
      expect(Object.keys(operator.json.checks).some((k) => k.startsWith('connection:'))).toBe(true);
    } finally {
      await admin.close();
    }
  });

  it('counts requests in /metrics by route template, not raw path', async () => {
    await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key: tg.demoKey });
    await tg.call('GET', '/v1/analytics/top-products?category=Books', { key: tg.demoKey });
    await tg.call('GET', '/v1/analytics/no-such-thing', { key: tg.demoKey });
    await tg.call('GET', '/v1/random-path-1');
    await tg.call('GET', '/v1/random-path-2');
    const res = await tg.call('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const line = (labels: string) =>
      res.text.split('\n').find((l) => l.startsWith(`quarry_http_requests_total{${labels}}`));
    expect(line('method="GET",route="/v1/analytics/:name",status="200"')).toMatch(/ 2$/);
    expect(line('method="GET",route="/v1/analytics/:name",status="404"')).toMatch(/ 1$/);
    expect(res.text).not.toMatch(/route="\/v1\/analytics\/(sales-by-region|top-products|no-such-thing)"/);
    // Unmatched paths share one label, so a scanner cannot blow up the series count.
    expect(res.text).not.toContain('random-path');
    expect(line('method="GET",route="unmatched",status="404"')).toMatch(/ 2$/);
    expect(res.text).toContain('quarry_http_request_duration_seconds_bucket');
    expect(res.text).toContain('quarry_connector_query_duration_seconds');
    expect(res.text).toMatch(/quarry_pool_sessions_total\{connection="[^"]+",type="duckdb"\}/);
  });

  it('reports the result cache in /metrics: lookups by outcome, evictions, entries and bytes', async () => {
    const value = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    const scrape = async () => (await tg.call('GET', '/metrics')).text;
    const before = await scrape();
    // A params combination no other test uses: one miss, then two hits.
    const call = () =>
      tg.call('GET', '/v1/analytics/top-products?category=Garden&limit=7', { key: tg.demoKey });
    expect((await call()).headers.get('x-cache')).toBe('MISS');
    await call();
    await call();
    const after = await scrape();
    const delta = (series: string) => (value(after, series) ?? Number.NaN) - (value(before, series) ?? 0);
    expect(delta('quarry_result_cache_lookups_total{outcome="miss"}')).toBe(1);
    expect(delta('quarry_result_cache_lookups_total{outcome="hit"}')).toBe(2);
    expect(value(after, 'quarry_result_cache_lookups_total{outcome="stale"}')).toBe(0);
    expect(value(after, 'quarry_result_cache_evictions_total')).toBe(0);
    expect(value(after, 'quarry_result_cache_entries')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'quarry_result_cache_bytes')).toBeGreaterThan(0);
    expect(value(after, 'quarry_result_cache_max_bytes')).toBe(tg.gateway.services.config.cacheMaxBytes);
  });

  it('echoes a fresh request id on every response, ignoring one the caller sent', async () => {
    const res = await tg.call('GET', '/healthz', { headers: { 'x-request-id': 'caller-chosen' } });
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  });
});
