// OWASP API10:2023 Unsafe Consumption of APIs. A warehouse is an owner's, so what it answers is
// attacker input too: keys that are JavaScript's own (`__proto__`, `constructor`), markup and line
// separators, integers past 2^53, NaN and infinities, duplicate column names, nested JSON with
// prototype keys, and error messages. The gateway passes data on as exact, valid JSON (never
// executing or merging it into its own objects), and a warehouse's error text reaches only the
// warehouse's owner. (Unbounded answers are refused in api4; hostile HTTP warehouses — redirects,
// nextUri off origin, endless pages — in the Trino, Snowflake and BigQuery connectors' tests.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { deployAnalytic } from '../support/metering-fixture.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;

beforeAll(async () => {
  w = await createAttackWorld({ label: 'unsafe' });
  const deploy = (name: string, sql: string) =>
    deployAnalytic(w.http, w.gateway, w.owner.key, { name, connection: 'wh', sql, visibility: 'public' });
  await deploy(
    'sec-hostile-keys',
    `SELECT 1 AS "__proto__", 2 AS "constructor", 3 AS "toString", '{"__proto__":{"polluted":true}}'::jsonb AS doc`,
  );
  await deploy(
    'sec-hostile-values',
    `SELECT '<script>alert(1)</script>' AS markup, E'line\\u2028sep' AS sep,
            9007199254740993::bigint AS big, 'NaN'::float8 AS nan, 'Infinity'::float8 AS inf,
            12345678901234567890.123456789::numeric AS exact`,
  );
  await deploy('sec-duplicate-columns', 'SELECT 1 AS a, 2 AS a');
  await deploy(
    'sec-fails',
    "SELECT 1 / (SELECT count(*) FROM pg_class WHERE relname = 'no such table') AS boom",
  );
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const call = (source: string, key = w.attacker.key) => w.call('POST', '/v1/query', { key, json: { source } });

describe('API10 unsafe consumption of warehouse answers', () => {
  it("passes JavaScript's own keys on as data, without polluting anything", async () => {
    const res = await call('sec-hostile-keys');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const [row] = res.body.results;
    // Own properties of the parsed row, not prototype tricks.
    expect(Object.getOwnPropertyNames(row)).toEqual(
      expect.arrayContaining(['__proto__', 'constructor', 'toString']),
    );
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(1);
    expect(JSON.stringify(row.doc)).toContain('polluted');
    // A later answer is untouched: nothing was merged into the gateway's objects.
    const again = await call(w.names.listed);
    expect(again.status).toBe(200);
    expect(again.text).not.toContain('polluted');
    expect(JSON.parse(again.text).results[0].polluted).toBeUndefined();
  });

  it('keeps markup, separators, big integers and non-finite floats exact and valid JSON', async () => {
    const res = await call('sec-hostile-values');
    expect(res.status, res.text).toBe(200);
    const [row] = res.body.results;
    expect(row.markup).toBe('<script>alert(1)</script>');
    expect(row.sep).toBe('line\u2028sep');
    // Past 2^53 a JSON number would silently change; the exact digits must survive.
    expect(String(row.big)).toBe('9007199254740993');
    expect(String(row.exact)).toBe('12345678901234567890.123456789');
    // JSON has no NaN or Infinity: never invalid JSON, never a silent 0.
    for (const v of [row.nan, row.inf]) expect(v === null || typeof v === 'string').toBe(true);
  });

  it('answers duplicate column names without losing the call', async () => {
    const res = await call('sec-duplicate-columns');
    expect([200, 502], res.text).toContain(res.status);
    if (res.status === 200) expect(res.body.columns.length).toBe(2);
  });

  it("shows a warehouse's error text to its owner only", async () => {
    const caller = await call('sec-fails');
    expectErrorEnvelope(caller, 502, 'UPSTREAM_ERROR');
    expect(caller.text).not.toMatch(/division by zero/);
    const owner = await call('sec-fails', w.owner.key);
    expectErrorEnvelope(owner, 502, 'UPSTREAM_ERROR');
    expect(owner.text).toMatch(/division by zero/);
  });
});
