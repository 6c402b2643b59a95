// Every error code of docs/design.md §2 that one in-process gateway can produce, each checked for
// status, code, a message, the request id in body and header, and the headers the code needs.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { generateApiKey } from '../security/api-key.js';
import {
  type CallResult,
  createTestGateway,
  type SignedUp,
  type TestGateway,
  withQueries,
} from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;

beforeAll(async () => {
  tg = await createTestGateway();
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

function expectError(res: CallResult, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const error = res.json?.error;
  expect(error?.code).toBe(code);
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(error.request_id).toBe(res.headers.get('x-request-id'));
  expect(Array.isArray(error.details)).toBe(true);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const query = (body: unknown, key = tg.demoKey) => tg.call('POST', '/v1/query', { key, body });

describe('INVALID_REQUEST (400)', () => {
  it('refuses malformed JSON', async () => {
    const res = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: '{"source": "sales-by-region",',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it('refuses a body without source', async () => {
    const res = await query({ params: { year: 2024 } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.json.error.details).toContainEqual({ field: 'source', message: expect.any(String) });
  });

  it('refuses wrong types of source and params, listing both', async () => {
    const res = await query({ source: 42, params: [2024] });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.json.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'params',
      'source',
    ]);
  });

  it('refuses an unknown top-level field', async () => {
    const res = await query({ source: 'sales-by-region', params: { year: 2024 }, sorce: 'typo' });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.json.error.message).toContain('sorce');
  });

  it('refuses JSON nested deeper than 32 levels, but takes 32', async () => {
    // Levels: the body object, the params object, then `arrays` nested arrays.
    const send = (arrays: number) =>
      tg.call('POST', '/v1/query', {
        key: tg.demoKey,
        body: `{"source":"sales-by-region","params":{"year":2024,"x":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`,
        headers: { 'content-type': 'application/json' },
      });
    const deep = await send(31);
    expectError(deep, 400, 'INVALID_REQUEST');
    expect(deep.json.error.message).toMatch(/nested/);
    // 32 levels pass the depth check and reach param validation (x is an unknown param).
    expectError(await send(30), 400, 'INVALID_PARAMS');
  });
});

describe('INVALID_PARAMS (400)', () => {
  it('lists each failing param', async () => {
    const res = await query({ source: 'sales-by-region', params: { year: 1900, region: 'europe' } });
    expectError(res, 400, 'INVALID_PARAMS');
    expect(res.json.error.details.map((d: { param: string }) => d.param).sort()).toEqual(['region', 'year']);
  });
});

describe('UNAUTHENTICATED (401)', () => {
  const body = { source: 'sales-by-region', params: { year: 2024 } };

  async function expect401(headers: Record<string, string>): Promise<void> {
    const res = await tg.call('POST', '/v1/query', { body, headers });
    expectError(res, 401, 'UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  }

  it('refuses a call without a credential', () => expect401({}));
  it('refuses a malformed Authorization header', () => expect401({ authorization: `Basic ${tg.demoKey}` }));
  it('refuses a key with a wrong checksum', () => {
    const last = tg.demoKey.at(-1) === 'a' ? 'b' : 'a';
    return expect401({ authorization: `Bearer ${tg.demoKey.slice(0, -1)}${last}` });
  });
  it('refuses a well-formed unknown key', () =>
    expect401({ authorization: `Bearer ${generateApiKey('live').secret}` }));

  it('refuses a revoked key', async () => {
    const created = await tg.call('POST', '/v1/keys', { key: alice.key, body: { name: 'to-revoke' } });
    expect(created.status).toBe(201);
    expect((await query(body, created.json.key.secret)).status).toBe(200);
    const revoked = await tg.call('DELETE', `/v1/keys/${created.json.key.id}`, { key: alice.key });
    expect(revoked.status).toBe(200);
    await expect401({ authorization: `Bearer ${created.json.key.secret}` });
  });

  it('refuses an expired key', async () => {
    // The API refuses a past expiry at creation, so the key is planted in the store directly.
    const generated = generateApiKey('live');
    await tg.gateway.services.store.keys.create({
      accountId: alice.accountId,
      name: 'expired',
      prefix: generated.prefix,
      digest: generated.digest,
      expiresAt: new Date(Date.now() - 60_000),
    });
    await expect401({ authorization: `Bearer ${generated.secret}` });
  });
});

describe('FORBIDDEN (403)', () => {
  it('refuses a key without the query scope', async () => {
    const created = await tg.call('POST', '/v1/keys', {
      key: alice.key,
      body: { name: 'keys-only', scopes: ['keys'] },
    });
    expect(created.status).toBe(201);
    const res = await query({ source: 'sales-by-region', params: { year: 2024 } }, created.json.key.secret);
    expectError(res, 403, 'FORBIDDEN');
    expect(res.json.error.message).toContain('query');
  });
});

describe('SOURCE_NOT_FOUND (404)', () => {
  it('answers an unknown source', async () => {
    const res = await query({ source: 'no-such-analytic', params: {} });
    expectError(res, 404, 'SOURCE_NOT_FOUND');
  });

  it("answers another account's private analytic exactly as if it did not exist", async () => {
    const bob = await tg.signUp('Bob');
    const connection = await tg.call('POST', '/v1/owner/connections', {
      key: bob.key,
      body: { name: 'bob-duck', type: 'duckdb', config: { path: `${tg.dataDir}/demo.duckdb` } },
    });
    expect(connection.status, connection.text).toBe(201);
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: bob.key,
      body: { name: 'bob-private-sales', connection: 'bob-duck', sql: 'SELECT count(*) AS n FROM sales' },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.analytic.visibility).toBe('private');
    expect((await tg.call('GET', '/v1/analytics/bob-private-sales', { key: bob.key })).status).toBe(200);

    const hidden = await query({ source: 'bob-private-sales', params: {} }, alice.key);
    const hiddenGet = await tg.call('GET', '/v1/analytics/bob-private-sales', { key: alice.key });
    expect((await tg.call('DELETE', '/v1/owner/analytics/bob-private-sales', { key: bob.key })).status).toBe(
      204,
    );
    const absent = await query({ source: 'bob-private-sales', params: {} }, alice.key);
    const absentGet = await tg.call('GET', '/v1/analytics/bob-private-sales', { key: alice.key });

    const normalise = (res: CallResult) => ({
      status: res.status,
      body: res.text.replace(/req_[0-9a-f]{32}/g, 'req_X'),
      // The RateLimit item's `t=` (seconds to the window's reset) may tick between two calls.
      headers: [...res.headers]
        .filter(([name]) => name !== 'x-request-id')
        .map(([name, value]) => [name, value.replace(/;t=\d+/g, ';t=T')]),
    });
    expectError(hidden, 404, 'SOURCE_NOT_FOUND');
    expect(normalise(hidden)).toEqual(normalise(absent));
    expect(normalise(hiddenGet)).toEqual(normalise(absentGet));
  });
});

describe('VERSION_SUNSET (410)', () => {
  it('answers a pinned version past the sunset its owner set, naming the current version', async () => {
    const deploy = (n: number) =>
      tg.call('PUT', '/v1/owner/analytics/errors-test-pinned', {
        key: tg.ownerKey,
        body: { connection: 'demo', sql: `SELECT ${n} AS v`, visibility: 'public' },
      });
    for (const n of [1, 2]) expect((await deploy(n)).status).toBe(200);
    const sunset = new Date(Date.now() + 1200).toISOString();
    const deprecated = await tg.call('PUT', '/v1/owner/analytics/errors-test-pinned/versions/1/deprecation', {
      key: tg.ownerKey,
      body: { sunset },
    });
    expect(deprecated.status, deprecated.text).toBe(200);
    expect((await query({ source: 'errors-test-pinned@1', params: {} })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const res = await query({ source: 'errors-test-pinned@1', params: {} });
    expectError(res, 410, 'VERSION_SUNSET');
    expect(res.json.error.message).toContain('current version is 2');
    expectError(
      await tg.call('GET', '/v1/analytics/errors-test-pinned@1', { key: tg.demoKey }),
      410,
      'VERSION_SUNSET',
    );
  });
});

describe('router errors', () => {
  it('answers an unknown path with NOT_FOUND', async () => {
    expectError(await tg.call('GET', '/v1/nothing-here'), 404, 'NOT_FOUND');
    // `/` is the web console's page; a path beside it is nobody's.
    expectError(await tg.call('GET', '/nothing-here'), 404, 'NOT_FOUND');
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const put = await tg.call('PUT', '/v1/query', { key: tg.demoKey });
    expectError(put, 405, 'METHOD_NOT_ALLOWED');
    expect(put.headers.get('allow')).toBe('POST');
    const post = await tg.call('POST', '/v1/analytics/sales-by-region', { key: tg.demoKey });
    expectError(post, 405, 'METHOD_NOT_ALLOWED');
    expect(post.headers.get('allow')).toBe('GET');
    const keys = await tg.call('PATCH', '/v1/keys', { key: tg.demoKey });
    expect(keys.status).toBe(405);
    expect(keys.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
  });
});

describe('CONFLICT (409)', () => {
  it('refuses a duplicate email', async () => {
    const email = `dup-${Date.now()}@example.com`;
    expect((await tg.call('POST', '/v1/accounts', { body: { email, name: 'One' } })).status).toBe(201);
    expectError(await tg.call('POST', '/v1/accounts', { body: { email, name: 'Two' } }), 409, 'CONFLICT');
  });

  it('refuses a duplicate connection name', async () => {
    const body = { name: 'dup-conn', type: 'duckdb', config: { path: `${tg.dataDir}/demo.duckdb` } };
    expect((await tg.call('POST', '/v1/owner/connections', { key: alice.key, body })).status).toBe(201);
    expectError(await tg.call('POST', '/v1/owner/connections', { key: alice.key, body }), 409, 'CONFLICT');
  });

  it('refuses a duplicate analytic name, also one another owner holds', async () => {
    const body = { name: 'sales-by-region', connection: 'demo', sql: 'SELECT 1 AS one' };
    expectError(await tg.call('POST', '/v1/owner/analytics', { key: tg.ownerKey, body }), 409, 'CONFLICT');
    const taken = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { ...body, connection: 'dup-conn' },
    });
    expectError(taken, 409, 'CONFLICT');
  });
});

describe('body errors', () => {
  it('refuses a body over 64 KiB with PAYLOAD_TOO_LARGE', async () => {
    const res = await query({
      source: 'sales-by-region',
      params: { year: 2024, pad: 'x'.repeat(64 * 1024) },
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a body that is not application/json with UNSUPPORTED_MEDIA_TYPE', async () => {
    const json = JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } });
    const plain = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: json,
      headers: { 'content-type': 'text/plain' },
    });
    expectError(plain, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const none = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: json });
    expectError(none, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('warehouse errors', () => {
  it('answers SQL the warehouse fails with UPSTREAM_ERROR: no DuckDB text for callers, the warehouse message for its owner', async () => {
    // SQL the warehouse accepts at deploy (a typed NULL casts fine) but fails when it runs.
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: {
        name: 'errors-test-broken',
        connection: 'demo',
        sql: 'SELECT CAST(:v AS INTEGER) AS n',
        params: { v: { type: 'string', default: 'no_such_number_zz' } },
        visibility: 'public',
      },
    });
    expect(created.status, created.text).toBe(201);
    const res = await query({ source: 'errors-test-broken', params: {} }, tg.demoKey);
    expectError(res, 502, 'UPSTREAM_ERROR');
    expect(res.text).not.toMatch(/no_such|conversion|duckdb|int32/i);
    // The full error is for the operator's log.
    expect(tg.logs.text()).toContain('no_such_number_zz');
    // The analytic's owner is told what its warehouse said, to fix the SQL.
    const own = await query({ source: 'errors-test-broken', params: {} }, tg.ownerKey);
    expectError(own, 502, 'UPSTREAM_ERROR');
    expect(own.json.error.details).toEqual([{ message: expect.stringContaining('no_such_number_zz') }]);
    expect(own.json.error.message).toContain('no_such_number_zz');
  });

  it('answers a query past its time limit with QUERY_TIMEOUT within about a second', async () => {
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: {
        name: 'errors-test-slow',
        connection: 'demo',
        sql: 'SELECT sum(hash(range)) AS h FROM range(1000000000000)',
        limits: { timeout_ms: 300 },
      },
    });
    expect(created.status, created.text).toBe(201);
    const started = performance.now();
    const res = await query({ source: 'errors-test-slow', params: {} }, tg.ownerKey);
    const elapsed = performance.now() - started;
    expectError(res, 504, 'QUERY_TIMEOUT');
    expect(elapsed).toBeLessThan(1_500);
    // The connection is still usable afterwards (the query was cancelled, not left running).
    expect((await query({ source: 'sales-by-region', params: { year: 2024 } })).status).toBe(200);
  });

  it('answers an unreachable warehouse with SOURCE_UNAVAILABLE and Retry-After', async () => {
    const port = await closedPort();
    // Saved untested: the warehouse it names is down from the start.
    const connection = await tg.call('POST', '/v1/owner/connections?test=false', {
      key: alice.key,
      body: {
        name: 'closed-port',
        type: 'postgres',
        config: { host: '127.0.0.1', port, database: 'test', user: 'postgres', connectTimeoutMs: 1000 },
      },
    });
    expect(connection.status, connection.text).toBe(201);
    // Its SQL cannot be checked either (503), so it is deployed unchecked, as at start.
    const refusedDeploy = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { name: 'errors-test-unreachable', connection: 'closed-port', sql: 'SELECT 1 AS one' },
    });
    expectError(refusedDeploy, 503, 'SOURCE_UNAVAILABLE');
    await tg.gateway.services.analytics.deploy(
      alice.accountId,
      { name: 'errors-test-unreachable', connection: 'closed-port', sql: 'SELECT 1 AS one' },
      { checkSql: false },
    );
    const res = await query({ source: 'errors-test-unreachable', params: {} }, alice.key);
    expectError(res, 503, 'SOURCE_UNAVAILABLE');
    expect(typeof res.json.error.retry_after).toBe('number');
    expect(res.json.error.retry_after).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(String(Math.ceil(res.json.error.retry_after)));
    const tested = await tg.call('POST', `/v1/owner/connections/${connection.json.connection.id}/test`, {
      key: alice.key,
    });
    expectError(tested, 503, 'SOURCE_UNAVAILABLE');
    // Its owner is told what the driver saw.
    expect(tested.json.error.message).toContain('ECONNREFUSED');
  });
});

describe('INTERNAL (500)', () => {
  it('says nothing internal to the caller and logs the whole error', async () => {
    const { services } = tg.gateway;
    const app = createApp(
      withQueries(services, {
        ...services.queries,
        execute: async () => {
          throw new TypeError('boom: cannot read secret_internal_detail of undefined at /srv/quarry/x.ts');
        },
      }),
    );
    const res = await app.request('/v1/query', {
      method: 'POST',
      // no-cache: the failing service must be reached even if an earlier test cached the answer.
      headers: {
        authorization: `Bearer ${tg.demoKey}`,
        'content-type': 'application/json',
        'cache-control': 'no-cache',
      },
      body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
    });
    const text = await res.text();
    expectError({ status: res.status, headers: res.headers, text, json: JSON.parse(text) }, 500, 'INTERNAL');
    expect(text).not.toMatch(/boom|secret_internal_detail|TypeError|\/srv\//);
    const requestId = res.headers.get('x-request-id');
    const logged = tg.logs.records().find((r) => r.request_id === requestId && r.err !== undefined);
    expect(JSON.stringify(logged)).toContain('secret_internal_detail');
    expect(JSON.stringify(logged)).toContain('TypeError');
  });
});

describe('FAILED_CALLS_THROTTLED', () => {
  let throttled: TestGateway | undefined;
  afterAll(async () => {
    await throttled?.close();
  });

  it('answers a caller whose failed calls used the warehouse budget with 429 and Retry-After, before running', async () => {
    // A budget of 1 ms: one timed-out call of another account's analytic uses it up.
    throttled = await createTestGateway({ QUARRY_FAILED_WAREHOUSE_SECONDS: '0.001' });
    const created = await throttled.call('POST', '/v1/owner/analytics', {
      key: throttled.ownerKey,
      body: {
        name: 'errors-test-slow-public',
        connection: 'demo',
        sql: 'SELECT sum(hash(range)) AS h FROM range(1000000000000)',
        limits: { timeout_ms: 200 },
        visibility: 'public',
      },
    });
    expect(created.status, created.text).toBe(201);
    const call = () =>
      throttled!.call('POST', '/v1/query', {
        key: throttled!.demoKey,
        body: { source: 'errors-test-slow-public', params: {} },
      });
    expectError(await call(), 504, 'QUERY_TIMEOUT');
    const started = performance.now();
    const res = await call();
    expect(performance.now() - started).toBeLessThan(200);
    expectError(res, 429, 'FAILED_CALLS_THROTTLED');
    expect(res.json.error.retry_after).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(String(Math.ceil(res.json.error.retry_after)));
    // The owner's own calls are neither counted nor throttled.
    expectError(
      await throttled.call('POST', '/v1/query', {
        key: throttled.ownerKey,
        body: { source: 'errors-test-slow-public', params: {} },
      }),
      504,
      'QUERY_TIMEOUT',
    );
  });
});
