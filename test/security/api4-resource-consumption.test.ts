// OWASP API4:2023 Unrestricted Resource Consumption. What one caller or owner may make the
// gateway spend is bounded: request bodies, param values and arrays, a pattern's work, the rows and
// bytes of an answer, a query's time, requests per account (whichever of its keys), and how many
// keys, connections and analytics one account holds. Each bound answers in the envelope, and the
// gateway keeps serving others meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { deployAnalytic } from '../support/metering-fixture.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;

beforeAll(async () => {
  w = await createAttackWorld({
    label: 'consume',
    env: {
      QUARRY_BODY_LIMIT: '65536',
      QUARRY_MAX_RESULT_BYTES: '200000',
      QUARRY_MAX_KEYS_PER_ACCOUNT: '5',
      QUARRY_MAX_CONNECTIONS_PER_ACCOUNT: '2',
      QUARRY_MAX_VERSIONS_KEPT: '3',
      // 40 queries a minute per account, all at once; management calls have their own bucket.
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 40, window_seconds: 60, burst: 40 } }),
    },
  });
  const deploy = (name: string, sql: string, extra: Record<string, unknown> = {}) =>
    deployAnalytic(w.http, w.gateway, w.owner.key, {
      name,
      connection: 'wh',
      sql,
      visibility: 'public',
      ...extra,
    });
  await deploy('sec-wide', "SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 1000) AS g");
  await deploy('sec-slow', 'SELECT 1 AS one FROM pg_sleep(5)', { limits: { timeout_ms: 500 } });
  await deploy('sec-many', 'SELECT g FROM generate_series(1, 5000) AS g', { limits: { max_rows: 100 } });
  await deploy('sec-pattern', 'SELECT :s::text AS s', {
    params: { s: { type: 'string', pattern: '(a+)+$', maxLength: 4096 } },
  });
  await deploy('sec-array', 'SELECT cardinality(:ids::int[]) AS n', {
    params: { ids: { type: 'array', items: { type: 'integer' }, maxItems: 100 } },
  });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const query = (source: string, params: Record<string, unknown> = {}, key = w.friend.key) =>
  w.call('POST', '/v1/query', { key, json: { source, params } });

describe('API4 unrestricted resource consumption', () => {
  it('refuses a body over QUARRY_BODY_LIMIT with 413, before parsing it', async () => {
    const res = await w.call('POST', '/v1/query', {
      key: w.friend.key,
      raw: JSON.stringify({ source: w.names.listed, params: { pad: 'x'.repeat(100_000) } }),
      headers: { 'content-type': 'application/json' },
    });
    expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('bounds param values: string length, array size, and a catastrophic pattern in linear time', async () => {
    expectErrorEnvelope(await query('sec-pattern', { s: 'a'.repeat(5000) }), 400, 'INVALID_PARAMS');
    expectErrorEnvelope(
      await query('sec-array', { ids: Array.from({ length: 101 }, (_, i) => i) }),
      400,
      'INVALID_PARAMS',
    );
    const started = performance.now();
    const evil = await query('sec-pattern', { s: `${'a'.repeat(4000)}!` });
    expectErrorEnvelope(evil, 400, 'INVALID_PARAMS');
    // Linear-time matching: far below the seconds a backtracking engine would take.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await w.call('GET', '/healthz')).status).toBe(200);
  });

  it("bounds an answer's bytes (422) and rows (truncated), and a query's time (504)", async () => {
    expectErrorEnvelope(await query('sec-wide'), 422, 'RESULT_TOO_LARGE');
    const many = await query('sec-many');
    expect(many.status, many.text).toBe(200);
    expect(many.body.results).toHaveLength(100);
    expect(many.body.meta.truncated).toBe(true);
    const started = performance.now();
    expectErrorEnvelope(await query('sec-slow'), 504, 'QUERY_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('limits requests per account across all its keys, leaving its management calls alone', async () => {
    const account = await w.signUp('flooder');
    const second = await w.call('POST', '/v1/keys', { key: account.key, json: { name: 'second' } });
    const keys = [account.key, second.body.key.secret as string];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => query(w.names.listed, { upto: 1 }, keys[i % 2])),
    );
    const served = answers.filter((a) => a.status === 200).length;
    expect(served).toBeLessThanOrEqual(40);
    const refused = answers.find((a) => a.status === 429);
    expect(refused, answers.map((a) => a.status).join(',')).toBeDefined();
    expectErrorEnvelope(refused!, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused!.body.error.retry_after).toBeGreaterThan(0);
    expect(refused!.headers.get('retry-after')).toBeTruthy();
    expect((await w.call('GET', '/v1/account/usage', { key: account.key })).status).toBe(200);
  });

  it('bounds what one account holds: keys, connections, versions kept', async () => {
    const account = await w.signUp('hoarder');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await w.call('POST', '/v1/keys', { key: account.key, json: { name: `k${i}` } })).status);
    }
    // The sign-up's key and four more make five.
    expect(statuses).toEqual([201, 201, 201, 201, 409, 409]);
    const connect = (name: string) =>
      w.call('POST', '/v1/owner/connections?test=false', {
        key: account.key,
        json: {
          name,
          type: 'postgres',
          config: { host: '127.0.0.1', port: 5432, database: 'test', user: 'x' },
        },
      });
    expect((await connect('a')).status).toBe(201);
    expect((await connect('b')).status).toBe(201);
    const third = await connect('c');
    expectErrorEnvelope(third, 409, 'CONFLICT');
    expect(third.body.error.message).toMatch(/QUARRY_MAX_CONNECTIONS_PER_ACCOUNT/);
    for (let v = 1; v <= 5; v++) {
      const res = await w.call('PUT', '/v1/owner/analytics/sec-versions', {
        key: w.owner.key,
        json: { connection: 'wh', sql: `SELECT ${v} AS v` },
      });
      expect(res.status, res.text).toBe(200);
    }
    const versions = await w.call('GET', '/v1/owner/analytics/sec-versions/versions', { key: w.owner.key });
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 4, 5]);
  });
});
