// What an SRE sees of a gateway served on node:http (issue 37, finding 5): the access line of a
// query (fast path) and of a Hono route carries the client address (as QUARRY_TRUST_PROXY reads
// X-Forwarded-For), the error code, the user agent, the bytes, the cache status and the build,
// even with QUARRY_LOG_LEVEL=warn; health probes are left out; 429s are counted by reason; a
// caller who hangs up is a 499 in the log and the metrics, never a 504; the Redis limiter's
// fallback shows in /metrics and makes /readyz `degraded` (still 200); the store's pool is in
// /metrics.
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectorError } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayListener } from '../adapters/node-listener.js';
import { createApp } from '../app.js';
import type { QueryService } from '../query/query-service.js';
import { createTestGateway, type TestGateway, withQueries } from '../testing/test-gateway.js';

const SUMMARY = { source: 'sales-summary', params: { start_date: '2024-01-01', end_date: '2024-12-31' } };
const HANGING = 'hangs-until-cancelled';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const accessLines = (tg: TestGateway) => tg.logs.records().filter((r) => r.msg === 'request');
const lineOf = (tg: TestGateway, requestId: string | null) =>
  accessLines(tg).find((r) => r.request_id === requestId);

async function until<T>(probe: () => T | undefined, what: string, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A counter's value in Prometheus text (0 when the series is absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('a gateway at QUARRY_LOG_LEVEL=warn behind one proxy', () => {
  let tg: TestGateway;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    tg = await createTestGateway({ QUARRY_LOG_LEVEL: 'warn', QUARRY_TRUST_PROXY: '1' });
    const { services } = tg.gateway;
    // A warehouse that runs until the caller's signal cancels it, as a real one does.
    const queries: QueryService = {
      ...services.queries,
      execute: (entry, params, signal, maxRows) =>
        entry.name !== HANGING
          ? services.queries.execute(entry, params, signal, maxRows)
          : new Promise((_resolve, reject) => {
              signal?.addEventListener('abort', () =>
                reject(new ConnectorError('QUERY_ABORTED', 'the caller went away')),
              );
            }),
    };
    const hanging = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: { name: HANGING, connection: 'demo', sql: 'SELECT 1 AS one', visibility: 'public' },
    });
    expect(hanging.status, hanging.text).toBe(201);
    const withHanging = withQueries(services, queries);
    server = createServer(createGatewayListener(createApp(withHanging), withHanging));
    base = await listen(server);
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await tg?.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/query`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tg.demoKey}`,
        'content-type': 'application/json',
        'user-agent': 'sre-test/1.0',
        'x-forwarded-for': '203.0.113.9',
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('writes a query access line with client, user agent, bytes, cache status and build', async () => {
    const first = await post(SUMMARY);
    const second = await post(SUMMARY);
    expect([first.status, second.status]).toEqual([200, 200]);
    const bytes = Number(second.headers.get('content-length'));
    await first.text();
    await second.text();
    const line = lineOf(tg, second.headers.get('x-request-id'));
    expect(line).toMatchObject({
      log: 'access',
      route: '/v1/query',
      status: 200,
      client: '203.0.113.9',
      user_agent: 'sre-test/1.0',
      bytes,
      cache: 'HIT',
    });
    expect(line?.build).toMatch(/^\d+\.\d+\.\d+\+\S+$/);
    expect(lineOf(tg, first.headers.get('x-request-id'))).toMatchObject({ cache: 'MISS' });
  });

  it('writes the error code of a refused query and of a refused Hono route', async () => {
    const missing = await post({ source: 'no-such-analytic', params: {} });
    expect(missing.status).toBe(404);
    expect(lineOf(tg, missing.headers.get('x-request-id'))).toMatchObject({
      status: 404,
      error_code: 'SOURCE_NOT_FOUND',
      client: '203.0.113.9',
    });
    const usage = await fetch(`${base}/v1/keys`, {
      headers: {
        authorization: 'Bearer qry_live_nope',
        'x-forwarded-for': '198.51.100.7',
        'user-agent': 'ua/2',
      },
    });
    expect(usage.status).toBe(401);
    expect(lineOf(tg, usage.headers.get('x-request-id'))).toMatchObject({
      route: '/v1/keys',
      status: 401,
      error_code: 'UNAUTHENTICATED',
      client: '198.51.100.7',
      user_agent: 'ua/2',
    });
  });

  it('leaves health probes out of the access log', async () => {
    const ready = await fetch(`${base}/readyz`);
    const alive = await fetch(`${base}/healthz`);
    expect([ready.status, alive.status]).toEqual([200, 200]);
    const probes = accessLines(tg).filter((l) => l.route === '/readyz' || l.route === '/healthz');
    expect(probes).toEqual([]);
    // While every query has its line (QUARRY_LOG_LEVEL=warn notwithstanding).
    expect(accessLines(tg).some((l) => l.route === '/v1/query')).toBe(true);
  });

  it('logs and counts a caller who hangs up as 499, not 504 (fast path and Hono route)', async () => {
    const before = await tg.gateway.services.metrics.registry.metrics();
    const hangUp = (method: string, path: string, body?: string) =>
      new Promise<void>((resolve) => {
        const req = request(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${tg.demoKey}`,
            'content-type': 'application/json',
            ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }),
          },
        });
        req.on('error', () => resolve());
        req.end(body);
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      });
    await hangUp('POST', '/v1/query', JSON.stringify({ source: HANGING, params: {} }));
    await hangUp('GET', `/v1/analytics/${HANGING}`);
    const lines = await until(() => {
      const found = accessLines(tg).filter((l) => l.status === 499);
      return found.length === 2 ? found : undefined;
    }, 'two 499 access lines');
    expect(lines.map((l) => l.route).sort()).toEqual(['/v1/analytics/:name', '/v1/query']);
    for (const line of lines) expect(line).toMatchObject({ error_code: 'CLIENT_CLOSED', reply_status: 504 });
    expect(accessLines(tg).filter((l) => l.status === 504)).toEqual([]);
    const after = await tg.gateway.services.metrics.registry.metrics();
    expect(after).not.toContain('status="504"');
    expect(
      sample(after, 'quarry_client_aborts_total{route="/v1/query"}') -
        sample(before, 'quarry_client_aborts_total{route="/v1/query"}'),
    ).toBe(1);
    expect(sample(after, 'quarry_http_requests_total{method="POST",route="/v1/query",status="499"}')).toBe(1);
  });

  it('exports its build', async () => {
    const text = await tg.gateway.services.metrics.registry.metrics();
    expect(text).toMatch(/^quarry_build_info\{version="\d+\.\d+\.\d+",commit="[^"]+",node="[^"]+"\} 1$/m);
  });
});

describe('429s by reason', () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await createTestGateway({
      QUARRY_FREE_CREDITS: '2',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1, window_seconds: 3600, burst: 4 } }),
    });
  });
  afterAll(async () => tg?.close());

  it('counts a quota refusal apart from a rate-limit refusal', async () => {
    const free = await tg.signUp('Free caller');
    const codes: string[] = [];
    for (let i = 0; i < 12 && !codes.includes('RATE_LIMIT_EXCEEDED'); i++) {
      const res = await tg.call('POST', '/v1/query', { key: free.key, body: SUMMARY });
      codes.push(res.status === 200 ? 'OK' : res.json.error.code);
    }
    const quota = codes.filter((c) => c === 'QUOTA_EXCEEDED').length;
    const rate = codes.filter((c) => c === 'RATE_LIMIT_EXCEEDED').length;
    expect(quota).toBeGreaterThan(0);
    expect(rate).toBe(1);
    const text = await tg.gateway.services.metrics.registry.metrics();
    expect(sample(text, 'quarry_rate_limited_total{reason="quota"}')).toBe(quota);
    expect(sample(text, 'quarry_rate_limited_total{reason="rate_limit"}')).toBe(rate);
    expect(sample(text, 'quarry_http_errors_total{route="/v1/query",code="QUOTA_EXCEEDED"}')).toBe(quota);
  });
});

describe('a Redis limiter that lost Redis', () => {
  let tg: TestGateway;
  const adminToken = randomBytes(18).toString('base64url');
  beforeAll(async () => {
    // Nothing listens on port 1: the limiter falls back to memory at once.
    tg = await createTestGateway({ QUARRY_REDIS_URL: 'redis://127.0.0.1:1', QUARRY_ADMIN_TOKEN: adminToken });
  });
  afterAll(async () => tg?.close());

  it('shows the fallback in /metrics and /readyz says degraded, still ready', async () => {
    const query = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: SUMMARY });
    expect(query.status).toBe(200);
    const metrics = await tg.call('GET', '/metrics', { key: adminToken });
    expect(sample(metrics.text, 'quarry_rate_limiter_fallback')).toBe(1);
    expect(sample(metrics.text, 'quarry_rate_limiter_fallbacks_total')).toBeGreaterThanOrEqual(1);
    const ready = await tg.call('GET', '/readyz', { key: adminToken });
    expect(ready.status).toBe(200);
    expect(ready.json.status).toBe('degraded');
    expect(ready.json.checks.rate_limiter).toMatchObject({ ok: true, degraded: true });
    const anonymous = await tg.call('GET', '/readyz');
    expect(anonymous.json).toEqual({ status: 'degraded' });
  });
});
