// What the connector does on the wire, through snowflake-sdk 3.3.0 against the fake Snowflake
// service: login (password and key pair), the binds and statement parameters it sends, both
// cancel paths (by request id while the first request is held, by query id once the driver
// polls), the service's own statement timeout, chunked results cut at the row limit, session
// token renewal, dead sessions found by a sibling, exact types, and logout on close.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Connector,
  createConnector,
  isConnectorError,
  type ParamValues,
  parseTemplate,
} from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { snowflakeConfigSchema } from '../src/snowflake-config.js';
import { snowflakeConnectionOptions } from '../src/snowflake-connection-options.js';
import { snowflakePlugin } from '../src/snowflake-plugin.js';
import { loadSnowflakeSdk } from '../src/snowflake-sdk.js';
import { createSnowflakeSession } from '../src/snowflake-session.js';
import { type FakeRequest, type FakeSnowflakeServer, startFakeSnowflake } from './fake-snowflake-server.js';

const PASSWORD = 'protocol-secret-pw';
const PASSPHRASE = 'protocol-key-passphrase';
const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE },
});
const otherKeys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

const opened: Connector[] = [];
const fakes: FakeSnowflakeServer[] = [];

async function startFake(holdMs = 60_000): Promise<FakeSnowflakeServer> {
  const fake = await startFakeSnowflake({
    users: {
      reader: { password: PASSWORD },
      keyed: { publicKeyPem: keys.publicKey },
    },
    holdMs,
    inlineRows: 100,
    chunkRows: 500,
  });
  fakes.push(fake);
  return fake;
}

function passwordConfig(fake: FakeSnowflakeServer): Record<string, unknown> {
  return {
    account: fake.account,
    username: 'reader',
    password: PASSWORD,
    warehouse: 'QUARRY_WH',
    database: 'QUARRY',
    schema: 'PUBLIC',
    role: 'QUARRY_READER',
    accessUrl: fake.url,
  };
}

async function connector(config: Record<string, unknown>, max = 3): Promise<Connector> {
  const created = await createConnector(snowflakePlugin, config, { pool: { max } });
  opened.push(created);
  return created;
}

function query(c: Connector, sql: string, params: ParamValues = {}, extra: object = {}) {
  return c.query({ template: parseTemplate(sql, snowflakePlugin.dialect), params, ...extra });
}

function sent(fake: FakeSnowflakeServer, path: string | RegExp): FakeRequest[] {
  return fake.requests.filter((r) => (typeof path === 'string' ? r.path === path : path.test(r.path)));
}

/** The `data` object of a recorded login request. */
function loginData(request: FakeRequest | undefined): Record<string, unknown> {
  const body = request?.body as { data?: Record<string, unknown> } | undefined;
  if (body?.data === undefined) throw new Error('no login request was recorded');
  return body.data;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(20);
  expect(check(), what).toBe(true);
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe('login', () => {
  let fake: FakeSnowflakeServer;
  beforeAll(async () => {
    fake = await startFake();
  });

  it('logs in with a password, sends the session context, and never probes the platform', async () => {
    const c = await connector(passwordConfig(fake));
    await c.test();
    const login = sent(fake, '/session/v1/login-request').at(-1);
    expect(login?.query).toMatchObject({
      warehouse: 'QUARRY_WH',
      databaseName: 'QUARRY',
      schemaName: 'PUBLIC',
      roleName: 'QUARRY_READER',
    });
    const data = loginData(login);
    expect(data).toMatchObject({ LOGIN_NAME: 'reader', PASSWORD, CLIENT_APP_ID: 'JavaScript' });
    expect(data.SESSION_PARAMETERS).toMatchObject({ JS_TREAT_INTEGER_AS_BIGINT: true });
    expect((data.CLIENT_ENVIRONMENT as { PLATFORM: unknown }).PLATFORM).toEqual(['disabled']);
    expect(process.env.SNOWFLAKE_DISABLE_PLATFORM_DETECTION).toBe('true');
  });

  it('logs in with an encrypted private key: the JWT verifies against the registered public key', async () => {
    const c = await connector({
      account: fake.account,
      username: 'keyed',
      privateKey: keys.privateKey,
      privateKeyPassphrase: PASSPHRASE,
      accessUrl: fake.url,
    });
    const result = await query(c, 'SELECT 1 AS "one"');
    expect(result.rows).toEqual([{ one: 1 }]);
    const data = loginData(sent(fake, '/session/v1/login-request').at(-1));
    expect(data.AUTHENTICATOR).toBe('SNOWFLAKE_JWT');
    expect(data.PASSWORD).toBeUndefined();
    expect(String(data.TOKEN).split('.')).toHaveLength(3);
  });

  it('is refused with CONNECT_FAILED for a key the user did not register, or a wrong password', async () => {
    for (const config of [
      { account: fake.account, username: 'keyed', privateKey: otherKeys.privateKey, accessUrl: fake.url },
      { ...passwordConfig(fake), password: 'not-the-password' },
    ]) {
      const c = await connector(config);
      const error = await errorOf(c.test());
      expect(isConnectorError(error, 'CONNECT_FAILED'), String(error)).toBe(true);
      const text = `${String(error)} ${JSON.stringify(error)}`;
      expect(text).not.toContain('not-the-password');
      expect(text).not.toContain('PRIVATE KEY');
    }
  });
});

describe('statements', () => {
  let fake: FakeSnowflakeServer;
  let c: Connector;
  beforeAll(async () => {
    fake = await startFake();
    await fake.run('CREATE TABLE quarry_nums AS SELECT range AS n FROM range(2500)');
  });
  afterEach(() => {
    fake.requests.length = 0;
  });

  it('sends typed binds, casts, and the statement parameters that bound it on the service', async () => {
    c = await connector(passwordConfig(fake));
    const params: ParamValues = {
      i: { type: 'integer', array: false, value: 42 },
      big: { type: 'integer', array: false, value: 9223372036854775807n },
      x: { type: 'number', array: false, value: 1.5 },
      b: { type: 'boolean', array: false, value: true },
      s: { type: 'string', array: false, value: "it's" },
      d: { type: 'date', array: false, value: '2024-02-29' },
      t: { type: 'timestamp', array: false, value: '2024-01-31T12:34:56.789Z' },
      none: { type: 'date', array: false, value: null },
      ids: { type: 'integer', array: true, value: [1, 2] },
    };
    const result = await query(
      c,
      'SELECT :i AS "i", :big AS "big", :x AS "x", :b AS "b", :s AS "s", :d AS "d", :t AS "t", :none AS "none", 1 IN (:ids) AS "hit"',
      params,
      { timeoutMs: 2_500 },
    );
    expect(result.rows[0]).toMatchObject({
      x: 1.5,
      b: true,
      s: "it's",
      d: '2024-02-29',
      none: null,
      hit: true,
    });
    expect(result.rows[0]?.t).toBe('2024-01-31T12:34:56.789Z');
    const body = sent(fake, '/queries/v1/query-request').at(-1)?.body as Record<string, unknown>;
    expect(body.sqlText).toBe(
      'SELECT ? AS "i", ? AS "big", ?::FLOAT AS "x", ?::BOOLEAN AS "b", ? AS "s", ?::DATE AS "d", ' +
        '?::TIMESTAMP_TZ AS "t", ?::DATE AS "none", 1 IN (?, ?) AS "hit"',
    );
    expect(body.bindings).toEqual({
      '1': { type: 'FIXED', value: '42' },
      '2': { type: 'TEXT', value: '9223372036854775807' },
      '3': { type: 'REAL', value: '1.5' },
      '4': { type: 'BOOLEAN', value: 'true' },
      '5': { type: 'TEXT', value: "it's" },
      '6': { type: 'TEXT', value: '2024-02-29' },
      '7': { type: 'TEXT', value: '2024-01-31T12:34:56.789Z' },
      '8': { type: 'TEXT', value: null },
      '9': { type: 'FIXED', value: '1' },
      '10': { type: 'FIXED', value: '2' },
    });
    expect(body.parameters).toEqual({
      MULTI_STATEMENT_COUNT: 1,
      TIMEZONE: 'UTC',
      STATEMENT_TIMEOUT_IN_SECONDS: 3,
    });
  });

  it('refuses writes before anything is sent', async () => {
    c = await connector(passwordConfig(fake));
    for (const sql of [
      'DELETE FROM quarry_nums',
      'SELECT 1; DROP TABLE quarry_nums',
      'WITH x AS (SELECT 1) DELETE FROM quarry_nums',
    ]) {
      const error = await errorOf(query(c, sql));
      expect(isConnectorError(error, 'QUERY_FAILED') && error.driverCode === 'READ_ONLY', sql).toBe(true);
    }
    expect(sent(fake, '/queries/v1/query-request')).toEqual([]);
  });

  it('maps the service errors to QUERY_FAILED without copying their text', async () => {
    c = await connector(passwordConfig(fake));
    const error = await errorOf(query(c, 'SELECT * FROM no_such_table_anywhere'));
    expect(isConnectorError(error, 'QUERY_FAILED')).toBe(true);
    expect((error as Error).message).not.toContain('no_such_table_anywhere');
    expect(await query(c, 'SELECT 2 AS "two"')).toMatchObject({ rows: [{ two: 2 }] });
  });

  it('downloads only the chunks that hold rows up to the row limit', async () => {
    c = await connector(passwordConfig(fake));
    const sql = 'SELECT n AS "n" FROM quarry_nums ORDER BY n';
    const cut = await query(c, sql, {}, { maxRows: 150 });
    expect(cut.truncated).toBe(true);
    expect(cut.rows.map((row) => row.n)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    // 100 rows inline, then chunks of 500: rows 100–150 are all in the first chunk.
    expect(sent(fake, /^\/chunks\//)).toHaveLength(1);
    const all = await query(c, sql, {}, { maxRows: 10_000 });
    expect(all.truncated).toBe(false);
    expect(all.rows.map((row) => row.n)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    expect(sent(fake, /^\/chunks\//)).toHaveLength(1 + 5);
  });

  it('reads integers beyond 2^53 exactly, without the driver warning about precision loss', async () => {
    const messages: string[] = [];
    const note = (_fields: object, message?: string) => messages.push(String(message));
    const logging = await createConnector(snowflakePlugin, passwordConfig(fake), {
      logger: { debug: note, info: note, warn: note, error: note },
    });
    opened.push(logging);
    const sql = 'SELECT n + 9007199254740992 AS "big" FROM quarry_nums WHERE n IN (1, 2) ORDER BY n';
    const result = await query(logging, sql);
    expect(result.rows.map((row) => row.big)).toEqual(['9007199254740993', '9007199254740994']);
    // The driver logs (and reports by telemetry) a precision loss while it converts the row.
    expect(messages.length, 'the driver messages are routed here').toBeGreaterThan(0);
    expect(messages.filter((m) => m.includes('precision loss'))).toEqual([]);
  });

  it('reports exact types: bytes, JSON values, times, sub-millisecond timestamps, wide numbers', async () => {
    await fake.run(
      `CREATE OR REPLACE TABLE quarry_types AS SELECT 'AB'::BLOB AS b, '{"a":[1,2]}'::JSON AS j, [1, 2] AS l,
       {'k': 'v'} AS st, TIME '12:34:56' AS t, TIMESTAMP '2024-01-31 12:34:56.123456' AS ntz,
       TIMESTAMPTZ '1969-07-20 20:17:40.5+00' AS tz, 123456789012345678901234567.89::DECIMAL(38,2) AS d,
       99999999999999999999999999999999999999::HUGEINT AS h, DATE '1969-07-20' AS day, NULL::DECIMAL(10,2) AS nd`,
    );
    c = await connector(passwordConfig(fake));
    const names = ['b', 'j', 'l', 'st', 't', 'ntz', 'tz', 'd', 'h', 'day', 'nd'];
    const result = await query(
      c,
      `SELECT ${names.map((n) => `${n} AS "${n}"`).join(', ')} FROM quarry_types`,
    );
    expect(result.columns.map((col) => [col.name, col.type, col.nativeType])).toEqual([
      ['b', 'bytes', 'BINARY'],
      ['j', 'json', 'VARIANT'],
      ['l', 'json', 'ARRAY'],
      ['st', 'json', 'OBJECT'],
      ['t', 'time', 'TIME'],
      ['ntz', 'timestamp', 'TIMESTAMP_NTZ'],
      ['tz', 'timestamp', 'TIMESTAMP_TZ'],
      ['d', 'decimal', 'NUMBER(38,2)'],
      ['h', 'integer', 'NUMBER(38,0)'],
      ['day', 'date', 'DATE'],
      ['nd', 'decimal', 'NUMBER(10,2)'],
    ]);
    expect(result.rows).toEqual([
      {
        b: 'QUI=',
        j: { a: [1, 2] },
        l: [1, 2],
        st: { k: 'v' },
        t: '12:34:56',
        ntz: '2024-01-31T12:34:56.123456Z',
        tz: '1969-07-20T20:17:40.500Z',
        d: '123456789012345678901234567.89',
        h: '99999999999999999999999999999999999999',
        day: '1969-07-20',
        nd: null,
      },
    ]);
  });
});

describe('cancel and time limits', () => {
  it('cancels by request id while the first request is still held', async () => {
    const fake = await startFake(60_000);
    const c = await connector(passwordConfig(fake));
    const marker = 'quarry_cancel_by_request';
    const error = await errorOf(
      query(c, `SELECT SYSTEM$WAIT(10) AS "w" /* ${marker} */`, {}, { timeoutMs: 400 }),
    );
    expect(isConnectorError(error, 'QUERY_TIMEOUT')).toBe(true);
    const started = sent(fake, '/queries/v1/query-request').at(-1);
    const aborts = sent(fake, '/queries/v1/abort-request');
    expect(aborts.map((a) => (a.body as { requestId: string }).requestId)).toEqual([
      started?.query.requestId,
    ]);
    await until(() => fake.runningQueries(marker) === 0, 'the statement is gone from the service');
    expect(await query(c, 'SELECT 1 AS "one"')).toMatchObject({ rows: [{ one: 1 }] });
  });

  it('cancels by query id once the driver polls for the result, also when the caller aborts', async () => {
    const fake = await startFake(50);
    const c = await connector(passwordConfig(fake));
    const marker = 'quarry_cancel_by_id';
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 400);
    const error = await errorOf(
      query(c, `SELECT SYSTEM$WAIT(10) AS "w" /* ${marker} */`, {}, { signal: controller.signal }),
    );
    expect(isConnectorError(error, 'QUERY_ABORTED')).toBe(true);
    const polls = sent(fake, /^\/queries\/[0-9a-f-]+\/result$/);
    expect(polls.length).toBeGreaterThan(0);
    const id = polls[0]?.path.split('/')[2];
    expect(sent(fake, `/queries/${id}/abort-request`)).toHaveLength(1);
    await until(() => fake.runningQueries(marker) === 0, 'the statement is gone from the service');
  });

  it('sets STATEMENT_TIMEOUT_IN_SECONDS, so the service stops a statement on its own', async () => {
    const fake = await startFake(60_000);
    const sdk = await loadSnowflakeSdk();
    const config = snowflakeConfigSchema.parse(passwordConfig(fake));
    const session = await createSnowflakeSession({
      sdk,
      connection: snowflakeConnectionOptions(config),
      health: { epoch: 0 },
    });
    try {
      // No runtime around the session: nothing but the service enforces the limit here.
      const error = await errorOf(
        session.execute(
          { sql: 'SELECT SYSTEM$WAIT(10) AS "w"', params: [] },
          { timeoutMs: 900, rowLimit: 10, signal: new AbortController().signal },
        ),
      );
      expect(isConnectorError(error, 'QUERY_TIMEOUT') && error.driverCode === '000630').toBe(true);
    } finally {
      await session.close();
    }
  });
});

describe('session lifetime', () => {
  let fake: FakeSnowflakeServer;
  beforeAll(async () => {
    fake = await startFake();
  });

  it('renews an expired session token with the master token and keeps the session', async () => {
    const c = await connector(passwordConfig(fake));
    await query(c, 'SELECT 1 AS "one"');
    fake.expireSessionTokens();
    expect(await query(c, 'SELECT 2 AS "two"')).toMatchObject({ rows: [{ two: 2 }] });
    expect(sent(fake, '/session/token-request').length).toBeGreaterThan(0);
    expect(c.stats().created).toBe(1);
  });

  it('when one session finds the service gone, idle siblings prove themselves before reuse', async () => {
    const c = await connector(passwordConfig(fake));
    await Promise.all([1, 2, 3].map((n) => query(c, `SELECT ${n} AS "n"`)));
    expect(c.stats().idle).toBe(3);
    fake.killSessions();
    // One at a time: each borrow would otherwise get another dead idle session.
    for (const n of [4, 5, 6]) expect(await query(c, `SELECT ${n} AS "n"`)).toMatchObject({ rows: [{ n }] });
    expect(sent(fake, '/session/heartbeat').length).toBeGreaterThan(0);
  });

  it('sends telemetry with the session token and logs out on close', async () => {
    const c = await connector(passwordConfig(fake));
    await query(c, 'SELECT 1 AS "one"');
    expect(sent(fake, '/telemetry/send').every((r) => r.authorization?.startsWith('Snowflake Token="'))).toBe(
      true,
    );
    const before = sent(fake, '/session').length;
    await c.close();
    expect(sent(fake, '/session').length).toBe(before + 1);
    expect(sent(fake, '/session').at(-1)?.query.delete).toBe('true');
    expect(fake.sessionCount()).toBe(0);
  });
});
