// The query fast path against the app it stands in for: one gateway served by two real node:http
// listeners, one with the fast path and one without, sent the same requests. A call must come
// back with the same status, the same headers (bar the request id, the draining flag and the
// calls left) and the same body (bar request_id and duration_ms) whichever way it went — cache
// hit, miss, uncached analytic, 304, refusal — be metered the same, and anything the fast path
// cannot decide from memory must reach the app untouched.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodOf } from '../money/billing-period.js';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';
import { createGatewayListener } from './node-listener.js';

let tg: TestGateway;
let alice: SignedUp;
let fast: Server;
let slow: Server;
let draining = false;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
let fastUrl: string;
let slowUrl: string;

beforeAll(async () => {
  // Free plan with 30 calls would run out: a plan with room, and a rate limit that never bites.
  tg = await createTestGateway();
  alice = await tg.signUp('Alice');
  const { app, services } = tg.gateway;
  fast = createServer(createGatewayListener(app, services, { shuttingDown: () => draining }));
  slow = createServer(createGatewayListener(app, services, { fastPath: false }));
  fastUrl = await listen(fast);
  slowUrl = await listen(slow);
});
afterAll(async () => {
  await Promise.all([fast, slow].map((s) => new Promise((resolve) => s?.close(resolve))));
  await tg?.close();
});

interface Sent {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

async function post(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const response = await fetch(`${base}/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  };
}

/**
 * Headers that legitimately differ between two answers (content-length too: the body carries
 * `meta.duration_ms`, whose digits vary; each answer's length is checked against its own body).
 */
const VARYING = new Set(['x-request-id', 'date', 'connection', 'keep-alive', 'content-length']);
/** Without what differs between two answers of the same call. */
const stable = (headers: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !VARYING.has(name))
      .map(([name, value]) => [
        name,
        // Calls left go down by one per call; seconds to the month's end tick between two calls.
        name.startsWith('ratelimit')
          ? value.replace(/;r=\d+/g, ';r=N').replace(/"monthly";(q=\d+;w|r=N;t)=\d+/g, '"monthly";$1=N')
          : value,
      ]),
  );
const normalised = (text: string) => {
  const body = JSON.parse(text);
  if (body.meta) body.meta = { ...body.meta, request_id: 'x', duration_ms: 0 };
  if (body.error) body.error = { ...body.error, request_id: 'x' };
  return body;
};
const counter = () => tg.gateway.services.money.usage.counter(alice.accountId, periodOf(new Date()));
const served = () => tg.gateway.services.metering.stats().reserves.items;

const GARDEN = { source: 'top-products', params: { category: 'Garden', limit: 4 } };

describe('query fast path', () => {
  it('answers a cache hit exactly as the app does, and meters it like the app', async () => {
    const miss = await post(slowUrl, GARDEN);
    expect(miss.headers['x-cache']).toBe('MISS');
    const before = await counter();
    const viaApp = await post(slowUrl, GARDEN);
    const viaFast = await post(fastUrl, GARDEN);
    expect(viaApp.headers['x-cache']).toBe('HIT');
    expect(viaFast.status).toBe(viaApp.status);
    expect(stable(viaFast.headers)).toEqual(stable(viaApp.headers));
    expect(normalised(viaFast.text)).toEqual(normalised(viaApp.text));
    for (const answer of [viaApp, viaFast])
      expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
    expect(viaFast.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    expect(JSON.parse(viaFast.text).meta.request_id).toBe(viaFast.headers['x-request-id']);
    expect(await counter()).toBe(before + 2);
  });

  it('counts its requests in the same metrics series as the app', async () => {
    const series = async () => {
      const text = await (await fetch(`${slowUrl}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('quarry_http_requests_total{') &&
            l.includes('route="/v1/query"') &&
            l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await series();
    await post(fastUrl, GARDEN);
    expect(await series()).toBe(before + 1);
  });

  it('answers If-None-Match with the same 304', async () => {
    const first = await post(fastUrl, GARDEN);
    expect(first.headers['x-cache']).toBe('HIT');
    const etag = first.headers.etag as string;
    const viaApp = await post(slowUrl, GARDEN, { 'if-none-match': etag });
    const viaFast = await post(fastUrl, GARDEN, { 'if-none-match': etag });
    expect(viaApp.status).toBe(304);
    expect(viaFast.status).toBe(304);
    expect(viaFast.text).toBe('');
    expect(stable(viaFast.headers)).toEqual(stable(viaApp.headers));
  });

  it('runs misses and bypasses through the same pipeline, metered the same', async () => {
    const before = await counter();
    const fresh = { source: 'top-products', params: { category: 'Toys', limit: 2 } };
    const viaFast = await post(fastUrl, fresh); // a miss, served by the fast path
    const viaApp = await post(slowUrl, { ...fresh, params: { ...fresh.params, limit: 3 } }); // a miss via the app
    expect(viaFast.headers['x-cache']).toBe('MISS');
    expect(viaApp.headers['x-cache']).toBe('MISS');
    expect(Object.keys(stable(viaFast.headers)).sort()).toEqual(Object.keys(stable(viaApp.headers)).sort());
    expect(JSON.parse(viaFast.text).results).toHaveLength(2);
    const bypass = await post(fastUrl, fresh, { 'cache-control': 'no-cache' });
    expect(bypass.headers['x-cache']).toBe('MISS');
    expect(normalised(bypass.text).results).toEqual(normalised(viaFast.text).results);
    expect(await counter()).toBe(before + 3);
  });

  it('hands everything it cannot decide from memory to the app, body intact', async () => {
    const cases: [unknown, Record<string, string>?][] = [
      [{ source: 'no-such-analytic', params: {} }],
      [{ source: 'top-products', params: { category: 'Garden', limit: 1000 } }], // bad params
      [{ source: 'top-products', params: { category: 'Garden' }, extra: 1 }],
      ['{"source": "top-products", "params": '],
      [GARDEN, { 'idempotency-key': 'fast-path-test-1' }],
      [GARDEN, { authorization: 'Bearer qry_live_not_a_real_key' }],
    ];
    for (const [body, headers] of cases) {
      const viaFast = await post(fastUrl, body, headers);
      const viaApp = await post(slowUrl, body, headers);
      expect(viaFast.status, JSON.stringify(body)).toBe(viaApp.status);
      const a = normalised(viaFast.text);
      const b = normalised(viaApp.text);
      if (a.error) expect(a.error).toEqual(b.error);
      else expect(a.results).toEqual(b.results);
    }
  });

  it('refuses a spent rate limit with the same envelope, uncharged', async () => {
    const tight = await createTestGateway({
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1, window_seconds: 60, burst: 1 } }),
    });
    const bob = await tight.signUp('Bob');
    const server = createServer(createGatewayListener(tight.gateway.app, tight.gateway.services));
    const base = await listen(server);
    try {
      const send = async () => {
        const r = await fetch(`${base}/v1/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${bob.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(GARDEN),
        });
        // biome-ignore lint/suspicious/noExplicitAny: the test reads the envelope's fields.
        return { status: r.status, headers: Object.fromEntries(r.headers), body: (await r.json()) as any };
      };
      const first = await send(); // a miss through the app, now cached
      expect(first.status).toBe(200);
      const before = await tight.gateway.services.money.usage.counter(bob.accountId, periodOf(new Date()));
      const refused = await send(); // a hit, decided by the fast path
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(refused.body.error.retry_after).toBeGreaterThan(0);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.headers.ratelimit).toBeDefined();
      expect(refused.body.error.request_id).toBe(refused.headers['x-request-id']);
      expect(await tight.gateway.services.money.usage.counter(bob.accountId, periodOf(new Date()))).toBe(
        before,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await tight.close();
    }
  });

  it('refuses a spent quota with QUOTA_EXCEEDED and records nothing', async () => {
    const small = await createTestGateway({
      QUARRY_PLANS: JSON.stringify([
        { id: 'free', name: 'Tiny', included_credits: 1, monthly_price_cents: 0, credit_price_cents: 0 },
      ]),
    });
    const carol = await small.signUp('Carol');
    const server = createServer(createGatewayListener(small.gateway.app, small.gateway.services));
    const base = await listen(server);
    try {
      const send = async () => {
        const r = await fetch(`${base}/v1/query`, {
          method: 'POST',
          headers: { authorization: `Bearer ${carol.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(GARDEN),
        });
        // biome-ignore lint/suspicious/noExplicitAny: the test reads the envelope's fields.
        return { status: r.status, headers: Object.fromEntries(r.headers), body: (await r.json()) as any };
      };
      expect((await send()).status).toBe(200);
      const refused = await send();
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('QUOTA_EXCEEDED');
      expect(refused.headers['ratelimit-policy']).toContain('monthly');
      expect(await small.gateway.services.money.usage.counter(carol.accountId, periodOf(new Date()))).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await small.close();
    }
  });

  it('decides a repeated body afresh once its analytic has a new version', async () => {
    const connection = await tg.call('POST', '/v1/owner/connections', {
      key: alice.key,
      body: { name: 'alice-duck', type: 'duckdb', config: { path: `${tg.dataDir}/demo.duckdb` } },
    });
    expect(connection.status, connection.text).toBe(201);
    // One definition, three versions: the SQL's constant and the largest n allowed change.
    const definition = (v: number, max: number) => ({
      connection: 'alice-duck',
      sql: `SELECT :n AS n, ${v} AS v`,
      params: { n: { type: 'integer', required: true, max } },
      cache: { ttl: 600 },
    });
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { name: 'alice-memo', ...definition(1, 10) },
    });
    expect(created.status, created.text).toBe(201);
    const body = { source: 'alice-memo', params: { n: 5 } };
    expect(JSON.parse((await post(fastUrl, body)).text).results).toEqual([{ n: 5, v: 1 }]);
    const hit = await post(fastUrl, body);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(JSON.parse(hit.text).meta.version).toBe(1);

    // Version 2 allows n ≤ 3: the remembered decision (n = 5 valid) must not be used.
    const narrowed = await tg.call('PATCH', '/v1/owner/analytics/alice-memo', {
      key: alice.key,
      body: definition(1, 3),
    });
    expect(narrowed.status, narrowed.text).toBe(200);
    const refused = await post(fastUrl, body);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error.code).toBe('INVALID_PARAMS');

    // Version 3 changes the SQL: the same body is a miss of the new version, not version 1's answer.
    const changed = await tg.call('PATCH', '/v1/owner/analytics/alice-memo', {
      key: alice.key,
      body: definition(3, 10),
    });
    expect(changed.status, changed.text).toBe(200);
    const fresh = await post(fastUrl, body);
    expect(fresh.headers['x-cache']).toBe('MISS');
    expect(JSON.parse(fresh.text).results).toEqual([{ n: 5, v: 3 }]);
    expect(JSON.parse(fresh.text).meta.version).toBe(3);
  });

  it('sends non-ASCII answers whole, with their length in bytes, on both paths', async () => {
    const connection = await tg.call('POST', '/v1/owner/connections', {
      key: alice.key,
      body: { name: 'alice-utf8', type: 'duckdb', config: { path: `${tg.dataDir}/demo.duckdb` } },
    });
    expect(connection.status, connection.text).toBe(201);
    // Latin-1, BMP and astral characters: 1, 2 and 3 UTF-16 units' worth of UTF-8 bytes each.
    const city = 'Zürich – 東京 🚀';
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: {
        name: 'alice-utf8',
        connection: 'alice-utf8',
        sql: `SELECT '${city}' AS city, :n AS n`,
        params: { n: { type: 'integer', required: true } },
        cache: { ttl: 600 },
      },
    });
    expect(created.status, created.text).toBe(201);
    for (const [base, n] of [
      [fastUrl, 1],
      [slowUrl, 2],
    ] as const) {
      for (const outcome of ['MISS', 'HIT']) {
        const answer = await post(base, { source: 'alice-utf8', params: { n } });
        expect(answer.status, answer.text).toBe(200);
        expect(answer.headers['x-cache']).toBe(outcome);
        expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
        expect(JSON.parse(answer.text).results).toEqual([{ city, n }]);
      }
    }
  });

  it('tells keep-alive clients to close while the server drains', async () => {
    await post(fastUrl, GARDEN);
    const reservesBefore = served();
    draining = true;
    try {
      const drained = await post(fastUrl, GARDEN);
      expect(drained.status).toBe(200);
      expect(drained.headers['x-cache']).toBe('HIT');
      expect(drained.headers.connection).toBe('close');
      expect(served()).toBe(reservesBefore + 1);
    } finally {
      draining = false;
    }
  });
});

async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Sent> {
  const response = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${alice.key}`, ...headers },
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  };
}

describe('query fast path, GET /v1/analytics/{name}', () => {
  const GARDEN_GET = '/v1/analytics/top-products?category=Garden&limit=4';

  it('answers a cache hit exactly as the app does, metered and counted in the same series', async () => {
    const miss = await get(slowUrl, GARDEN_GET);
    expect(miss.status, miss.text).toBe(200);
    const series = async () => {
      const text = await (await fetch(`${slowUrl}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('quarry_http_requests_total{') &&
            l.includes('route="/v1/analytics/:name"') &&
            l.includes('method="GET"') &&
            l.includes('status="200"'),
        );
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await counter();
    const seen = await series();
    const viaApp = await get(slowUrl, GARDEN_GET);
    const viaFast = await get(fastUrl, GARDEN_GET);
    expect(viaApp.headers['x-cache']).toBe('HIT');
    expect(viaFast.status).toBe(viaApp.status);
    expect(stable(viaFast.headers)).toEqual(stable(viaApp.headers));
    expect(normalised(viaFast.text)).toEqual(normalised(viaApp.text));
    expect(Number(viaFast.headers['content-length'])).toBe(Buffer.byteLength(viaFast.text));
    expect(JSON.parse(viaFast.text).meta.request_id).toBe(viaFast.headers['x-request-id']);
    expect(await counter()).toBe(before + 2);
    expect(await series()).toBe(seen + 2);
    // The same call as POST /v1/query's: the same cached answer.
    const posted = await post(fastUrl, GARDEN);
    expect(normalised(posted.text).results).toEqual(normalised(viaFast.text).results);
  });

  it('answers If-None-Match with the same 304', async () => {
    const first = await get(fastUrl, GARDEN_GET);
    const etag = first.headers.etag as string;
    const viaApp = await get(slowUrl, GARDEN_GET, { 'if-none-match': etag });
    const viaFast = await get(fastUrl, GARDEN_GET, { 'if-none-match': etag });
    expect(viaApp.status).toBe(304);
    expect(viaFast.status).toBe(304);
    expect(stable(viaFast.headers)).toEqual(stable(viaApp.headers));
  });

  it('reads names and query strings as the app does, refusals included, and charges only what it serves', async () => {
    const paths = [
      '/v1/analytics/top-products?limit=3&category=Toys', // a miss
      '/v1/analytics/top-products?category=Home+%26+Garden&limit=2', // `+` and escapes
      '/v1/analytics/top-products?category=Garden&limit=4&limit=5', // repeated: an array for an integer
      '/v1/analytics/top-products?category=Garden&limit=4&max_credits=1', // the price limit
      '/v1/analytics/top-products?category=Garden&limit=4&max_credits=abc',
      '/v1/analytics/top-products?category=Garden&limit=4&__proto__=1', // an unknown param, not a prototype
      '/v1/analytics/top-products?category=Garden&limit=1000', // out of range
      '/v1/analytics/top-products', // required params missing
      '/v1/analytics/top-products?', // an empty query string
      '/v1/analytics/no-such-analytic?x=1',
      '/v1/analytics/top%2Dproducts?category=Garden&limit=4', // an escaped name: the app decodes it
      '/v1/analytics/top-products/?category=Garden&limit=4', // no such route
      '/v1/analytics/.?x=1',
    ];
    for (const path of paths) {
      const before = await counter();
      const viaFast = await get(fastUrl, path);
      const charged = (await counter()) - before;
      const viaApp = await get(slowUrl, path);
      expect(viaFast.status, `${path}: ${viaFast.text}`).toBe(viaApp.status);
      expect(charged, path).toBe(viaFast.status === 200 ? 1 : 0);
      if (viaApp.headers['content-type']?.startsWith('application/json')) {
        const a = normalised(viaFast.text);
        const b = normalised(viaApp.text);
        if (b.error) expect(a.error, path).toEqual(b.error);
        else expect(a.results, path).toEqual(b.results);
      }
      expect(Object.keys(stable(viaFast.headers)).sort(), path).toEqual(
        Object.keys(stable(viaApp.headers)).sort(),
      );
    }
  });

  it('refuses a missing key and HEAD as the app does, uncharged', async () => {
    const before = await counter();
    const anonymous = async (base: string) => {
      const r = await fetch(`${base}${GARDEN_GET}`);
      return { status: r.status, body: normalised(await r.text()) };
    };
    expect(await anonymous(fastUrl)).toEqual(await anonymous(slowUrl));
    const head = await fetch(`${fastUrl}${GARDEN_GET}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${alice.key}` },
    });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET');
    expect(await counter()).toBe(before);
  });
});
