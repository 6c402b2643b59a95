// Every error of POST /v1/query, sent to one gateway through both of its listeners: with the
// node:http fast path (adapters/node-query.ts) and without it (the Hono route,
// adapters/hono-query.ts). Each refusal must come back the same way on both: status, code,
// message, details and the headers it carries.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { SCOPES } from '../auth/principal.js';
import { createTestGateway, type SignedUp, type TestGateway, withQueries } from '../testing/test-gateway.js';
import { createGatewayListener } from './node-listener.js';

let tg: TestGateway;
let bob: SignedUp;
let carol: SignedUp;
const servers: Server[] = [];

async function listen(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let fastUrl: string;
let appUrl: string;

beforeAll(async () => {
  tg = await createTestGateway({
    // Carol's Free plan runs out after two calls; Bob's SMB plan allows one request a minute.
    QUARRY_PLANS: JSON.stringify([
      { id: 'free', name: 'Tiny', included_credits: 2, monthly_price_cents: 0, credit_price_cents: 0 },
      { id: 'smb', name: 'SMB', included_credits: 250, monthly_price_cents: 4900, credit_price_cents: 0 },
      {
        id: 'enterprise',
        name: 'Enterprise',
        included_credits: null,
        monthly_price_cents: 19900,
        credit_price_cents: 0,
      },
    ]),
    QUARRY_RATE_LIMITS: JSON.stringify({
      free: { limit: 100000, window_seconds: 60, burst: 100000 },
      smb: { limit: 1, window_seconds: 60, burst: 1 },
    }),
    QUARRY_MAX_RESULT_BYTES: '4096',
  });
  bob = await tg.signUp('Bob');
  carol = await tg.signUp('Carol');
  await tg.gateway.services.store.accounts.setPlan(bob.accountId, 'smb');
  tg.gateway.services.auth.forgetAll();
  const { app, services } = tg.gateway;
  fastUrl = await listen(createGatewayListener(app, services));
  appUrl = await listen(createGatewayListener(app, services, { fastPath: false }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await tg?.close();
});

interface Sent {
  readonly status: number;
  readonly headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the envelope's fields.
  readonly body: any;
}

interface Request {
  readonly body?: unknown;
  readonly key?: string | null;
  readonly headers?: Record<string, string>;
  readonly method?: string;
}

async function send(base: string, request: Request): Promise<Sent> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...request.headers };
  const key = request.key === undefined ? tg.demoKey : request.key;
  if (key !== null) headers.authorization ??= `Bearer ${key}`;
  const body = request.body === undefined ? undefined : request.body;
  const response = await fetch(`${base}/v1/query`, {
    method: request.method ?? 'POST',
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: Object.fromEntries(response.headers), body: JSON.parse(text) };
}

/** Headers that differ between two answers of the same call (ids, dates, seconds that tick). */
const VARYING = new Set(['x-request-id', 'date', 'connection', 'keep-alive', 'content-length']);
const stable = (sent: Sent) => ({
  status: sent.status,
  headers: Object.fromEntries(
    Object.entries(sent.headers)
      .filter(([name]) => !VARYING.has(name))
      .map(([name, value]) => [name, name.startsWith('ratelimit') ? value.replace(/=\d+/g, '=N') : value]),
  ),
  error: {
    ...sent.body.error,
    request_id: 'x',
    // The two requests are sent one after the other, so the wait they are told differs a little.
    ...(typeof sent.body.error?.message === 'string'
      ? { message: sent.body.error.message.replace(/retry in [\d.]+ s/, 'retry in N s') }
      : {}),
    ...(sent.body.error?.retry_after ? { retry_after: 'N' } : {}),
  },
  retryAfter: sent.headers['retry-after'] === undefined ? undefined : 'N',
});

/** Sends `request` through both listeners and expects the same refusal with `status` and `code`. */
async function expectSameError(request: Request, status: number, code: string): Promise<Sent> {
  const viaFast = await send(fastUrl, request);
  const viaApp = await send(appUrl, request);
  expect(viaFast.status, JSON.stringify(viaFast.body)).toBe(status);
  expect(viaFast.body.error.code).toBe(code);
  expect(viaFast.body.error.request_id).toBe(viaFast.headers['x-request-id']);
  expect(viaApp.body.error.request_id).toBe(viaApp.headers['x-request-id']);
  expect(stable(viaFast)).toEqual(stable(viaApp));
  expect(viaFast.headers['x-content-type-options']).toBe('nosniff');
  return viaFast;
}

const GARDEN = { source: 'top-products', params: { category: 'Garden', limit: 4 } };

async function ownAnalytic(name: string, sql: string, extra: Record<string, unknown> = {}) {
  const created = await tg.call('POST', '/v1/owner/analytics', {
    key: tg.ownerKey,
    body: { name, connection: 'demo', sql, visibility: 'public', ...extra },
  });
  expect(created.status, created.text).toBe(201);
}

describe('every error of the query route, on both paths', () => {
  it('INVALID_REQUEST (400): body shape, JSON, depth and Idempotency-Key', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    for (const body of [
      '{"source": "top-products", "params": ',
      { params: {} },
      { source: 7, params: [] },
      { ...GARDEN, extra: 1 },
      { source: 'top-products', params: { category: deep } },
    ]) {
      await expectSameError({ body }, 400, 'INVALID_REQUEST');
    }
    await expectSameError(
      { body: GARDEN, headers: { 'idempotency-key': 'has spaces' } },
      400,
      'INVALID_REQUEST',
    );
    // The same key with another body.
    expect((await send(appUrl, { body: GARDEN, headers: { 'idempotency-key': 'errors-k1' } })).status).toBe(
      200,
    );
    const other = { source: 'top-products', params: { category: 'Garden', limit: 5 } };
    const mismatch = await expectSameError(
      { body: other, headers: { 'idempotency-key': 'errors-k1' } },
      400,
      'INVALID_REQUEST',
    );
    expect(mismatch.body.error.message).toMatch(/different request/);
  });

  it('INVALID_PARAMS (400), listing each param', async () => {
    const refused = await expectSameError(
      { body: { source: 'top-products', params: { category: 'Garden', limit: 1000, extra: 1 } } },
      400,
      'INVALID_PARAMS',
    );
    expect(refused.body.error.details.map((d: { param: string }) => d.param).sort()).toEqual([
      'extra',
      'limit',
    ]);
  });

  it('UNAUTHENTICATED (401): none, malformed, bad checksum, unknown', async () => {
    for (const authorization of [
      undefined,
      'Basic abc',
      'Bearer qry_live_not_a_real_key',
      'Bearer eyJ.x.y',
    ]) {
      const refused = await expectSameError(
        authorization === undefined
          ? { key: null, body: GARDEN }
          : { key: null, body: GARDEN, headers: { authorization } },
        401,
        'UNAUTHENTICATED',
      );
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('FORBIDDEN (403): a key without the query scope', async () => {
    const key = await tg.gateway.services.accounts.createKey(
      { accountId: bob.accountId, scopes: SCOPES },
      {
        name: 'keys only',
        scopes: ['keys'],
      },
    );
    await expectSameError({ key: key.secret, body: GARDEN }, 403, 'FORBIDDEN');
  });

  it("SOURCE_NOT_FOUND (404): unknown, and another account's private analytic alike", async () => {
    await expectSameError({ body: { source: 'no-such-analytic', params: {} } }, 404, 'SOURCE_NOT_FOUND');
    await ownAnalytic('errors-private', 'SELECT 1 AS one', { visibility: 'private' });
    await expectSameError({ body: { source: 'errors-private', params: {} } }, 404, 'SOURCE_NOT_FOUND');
  });

  it('METHOD_NOT_ALLOWED (405), PAYLOAD_TOO_LARGE (413), UNSUPPORTED_MEDIA_TYPE (415)', async () => {
    const wrongMethod = await expectSameError({ method: 'GET' }, 405, 'METHOD_NOT_ALLOWED');
    expect(wrongMethod.headers.allow).toBe('POST');
    const big = JSON.stringify({ source: 'top-products', params: { category: 'x'.repeat(70_000) } });
    await expectSameError({ body: big }, 413, 'PAYLOAD_TOO_LARGE');
    await expectSameError(
      { body: GARDEN, headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('CONFLICT (409): the same Idempotency-Key while the first call still runs', async () => {
    await ownAnalytic('errors-slow-idem', 'SELECT sum(hash(range)) AS h FROM range(1000000000000)', {
      limits: { timeout_ms: 3000 },
    });
    const body = { source: 'errors-slow-idem', params: {} };
    const headers = { 'idempotency-key': 'errors-running' };
    const first = send(appUrl, { body, headers });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await expectSameError({ body, headers }, 409, 'CONFLICT');
    expect(refused.headers['retry-after']).toBe('1');
    expect((await first).status).toBe(504);
  });

  it('RESULT_TOO_LARGE (422)', async () => {
    await ownAnalytic('errors-wide', "SELECT range AS n, repeat('x', 100) AS pad FROM range(1000)");
    await expectSameError({ body: { source: 'errors-wide', params: {} } }, 422, 'RESULT_TOO_LARGE');
  });

  it('RATE_LIMIT_EXCEEDED (429) with the rate-limit headers', async () => {
    expect((await send(appUrl, { key: bob.key, body: GARDEN })).status).toBe(200);
    const refused = await expectSameError({ key: bob.key, body: GARDEN }, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.headers.ratelimit).toBeDefined();
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('QUOTA_EXCEEDED (429) with the monthly quota in the headers', async () => {
    for (let i = 0; i < 2; i++)
      expect((await send(appUrl, { key: carol.key, body: GARDEN })).status).toBe(200);
    const refused = await expectSameError({ key: carol.key, body: GARDEN }, 429, 'QUOTA_EXCEEDED');
    expect(refused.headers['ratelimit-policy']).toContain('monthly');
  });

  it('UPSTREAM_ERROR (502), QUERY_TIMEOUT (504), SOURCE_UNAVAILABLE (503)', async () => {
    // Accepted at deploy (a typed NULL casts fine), failed by the warehouse when it runs.
    await ownAnalytic('errors-broken', 'SELECT CAST(:v AS INTEGER) AS n', {
      params: { v: { type: 'string', default: 'not a number' } },
    });
    await expectSameError({ body: { source: 'errors-broken', params: {} } }, 502, 'UPSTREAM_ERROR');
    await ownAnalytic('errors-slow', 'SELECT sum(hash(range)) AS h FROM range(1000000000000)', {
      limits: { timeout_ms: 200 },
    });
    await expectSameError({ body: { source: 'errors-slow', params: {} } }, 504, 'QUERY_TIMEOUT');

    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // Saved untested (?test=false): it is the warehouse that later cannot be reached.
    const connection = await tg.call('POST', '/v1/owner/connections?test=false', {
      key: tg.ownerKey,
      body: {
        name: 'errors-closed',
        type: 'postgres',
        config: { host: '127.0.0.1', port, database: 'test', user: 'postgres', connectTimeoutMs: 500 },
      },
    });
    expect(connection.status, connection.text).toBe(201);
    // A deploy cannot check SQL on a warehouse it cannot reach (it answers 503 too): the
    // analytic is deployed unchecked, as the analytics directory is at start.
    const deployedAt = await tg.call('PUT', '/v1/owner/analytics/errors-unreachable', {
      key: tg.ownerKey,
      body: { connection: 'errors-closed', sql: 'SELECT 1 AS one', visibility: 'public' },
    });
    expect(deployedAt.status, deployedAt.text).toBe(503);
    await tg.gateway.services.analytics.deploy(
      tg.ownerId,
      {
        name: 'errors-unreachable',
        connection: 'errors-closed',
        sql: 'SELECT 1 AS one',
        visibility: 'public',
      },
      { checkSql: false },
    );
    const refused = await expectSameError(
      { body: { source: 'errors-unreachable', params: {} } },
      503,
      'SOURCE_UNAVAILABLE',
    );
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('INTERNAL (500), with nothing internal in the body', async () => {
    const { app, services } = tg.gateway;
    const failing = withQueries(services, {
      ...services.queries,
      execute: async () => {
        throw new TypeError('boom: secret_internal_detail');
      },
    });
    // The fast path over the failing services, in front of the unchanged app: a 500 can only come
    // from the fast path itself (the app would have answered 200).
    const fast = await listen(createGatewayListener(app, failing));
    const slow = await listen(createGatewayListener(createApp(failing), failing, { fastPath: false }));
    const request = { body: { source: 'sales-by-region', params: { year: 2024 } } };
    const viaFast = await send(fast, request);
    const viaApp = await send(slow, request);
    expect(viaFast.status).toBe(500);
    expect(viaFast.body.error.code).toBe('INTERNAL');
    expect(JSON.stringify(viaFast.body)).not.toMatch(/boom|secret_internal_detail|TypeError/);
    expect(stable(viaFast)).toEqual(stable(viaApp));
  });
});
