import {
  type BoundParam,
  type CompiledQuery,
  createDestinationGuard,
  isConnectorError,
  noopLogger,
  OPERATOR_TRUSTED,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { postgresConfigSchema, resolvePostgresSettings } from './postgres-config.js';
import { createPostgresSession, type PostgresSession } from './postgres-session.js';
import { adminQuery, pgAvailable, requirePg, TEST_PG_URL, uniqueSuffix } from './postgres-test-server.js';

const suffix = uniqueSuffix();
const table = `quarry_pg_session_${suffix}`;
const schema = `quarry_pg_schema_${suffix}`;
const appName = `quarry_pg_test_${suffix}`;
let availability: true | string = 'not checked';
const trusted = createDestinationGuard(OPERATOR_TRUSTED);

function settings(extra: Record<string, unknown> = {}) {
  return resolvePostgresSettings(
    postgresConfigSchema.parse({ connectionString: TEST_PG_URL, applicationName: appName, ...extra }),
  );
}

async function open(extra: Record<string, unknown> = {}): Promise<PostgresSession> {
  const session = await createPostgresSession(settings(extra), noopLogger, trusted);
  onTestFinished(() => session.close());
  return session;
}

function run(session: PostgresSession, sql: string, params: readonly BoundParam[] = [], limits = {}) {
  const query: CompiledQuery = { sql, params };
  return session.execute(query, {
    timeoutMs: 10_000,
    rowLimit: 1000,
    signal: new AbortController().signal,
    ...limits,
  });
}

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (isConnectorError(error)) return error;
    throw error;
  }
  throw new Error('expected the query to fail');
}

async function activeCount(marker: string): Promise<number> {
  const { rows } = await adminQuery(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid() AND state = 'active'`,
    [marker],
  );
  return rows[0].n as number;
}

beforeAll(async () => {
  availability = await pgAvailable();
  if (availability !== true) return;
  await adminQuery(`CREATE TABLE ${table} (id int PRIMARY KEY, name text)`);
  await adminQuery(`INSERT INTO ${table} VALUES (1, 'one'), (2, 'two')`);
  await adminQuery(`CREATE SCHEMA ${schema}`);
  await adminQuery(`CREATE TABLE ${schema}.only_here (x int)`);
});

afterAll(async () => {
  if (availability !== true) return;
  await adminQuery(`DROP TABLE IF EXISTS ${table}`);
  await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

describe('postgres session', () => {
  it('stops keeping rows past maxResultBytes, fails RESULT_TOO_LARGE, and stays usable', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    // 2,000 rows of 1,000 bytes: about 2 MB of text against a 100 kB bound.
    const wide = `SELECT repeat('x', 1000) AS s, i FROM generate_series(1, 2000) i`;
    const error = await failure(run(session, wide, [], { rowLimit: 0, maxResultBytes: 100_000 }));
    expect(error.code).toBe('RESULT_TOO_LARGE');
    expect(error.message).toContain('100000 bytes');
    // The whole result was read off the wire: the session answers the next query at once.
    const next = await run(session, `SELECT 1 AS one`);
    expect(next.rows).toEqual([[1]]);
    // Under the bound, every row.
    const fits = await run(session, wide, [], { rowLimit: 0, maxResultBytes: 3_000_000 });
    expect(fits.rows).toHaveLength(2000);
  });

  it("streams rows in batches at the sink's pace, stops at the row limit, and stops for a failed sink", async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const query: CompiledQuery = { sql: 'SELECT i FROM generate_series(1, 100000) i', params: [] };
    const options = { timeoutMs: 20_000, rowLimit: 60_001, signal: new AbortController().signal };
    let columns: unknown;
    const seen: number[] = [];
    let batches = 0;
    await session.stream(query, options, {
      columns(described) {
        columns = described.map((c) => c.name);
      },
      async rows(batch) {
        batches++;
        // A slow sink: the session waits for it rather than piling rows up.
        if (batches % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        for (const row of batch) seen.push(row[0] as number);
      },
    });
    expect(columns).toEqual(['i']);
    expect(seen).toHaveLength(60_001);
    expect(seen.every((value, index) => value === index + 1)).toBe(true);
    expect(batches).toBeGreaterThan(20);
    const full = new Error('disk full');
    const stopping = performance.now();
    const refused = await session
      .stream(
        { sql: 'SELECT i, pg_sleep(0.0001) FROM generate_series(1, 1000000) i', params: [] },
        { ...options, rowLimit: 0 },
        {
          columns() {},
          rows() {
            throw full;
          },
        },
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBe(full);
    // Read to its end, the query would sleep 100 s (a million rows, 0.1 ms each).
    expect(performance.now() - stopping).toBeLessThan(10_000);
    // The query was cancelled on the server, not read to its end, and the session still answers.
    const next = await run(session, 'SELECT 1 AS one');
    expect(next.rows).toEqual([[1]]);
  });

  it('returns typed raw values in column order', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const result = await run(
      session,
      `SELECT 9223372036854775807::int8 AS big, 12.50::numeric(10,2) AS amount, 1.5::float8 AS ratio,
              true AS flag, '2024-02-29'::date AS day, '2024-01-31 12:34:56.789'::timestamp AS ts,
              '2024-01-31 12:00:00+02'::timestamptz AS tstz, '12:30:00'::time AS t, '\\xdead'::bytea AS raw,
              '{"a":[1,2]}'::jsonb AS doc, ARRAY[1,NULL]::int4[] AS list, NULL::text AS nothing`,
    );
    expect(result.columns.map((c) => [c.name, c.type, c.nativeType])).toEqual([
      ['big', 'integer', 'int8'],
      ['amount', 'decimal', 'numeric'],
      ['ratio', 'number', 'float8'],
      ['flag', 'boolean', 'bool'],
      ['day', 'date', 'date'],
      ['ts', 'timestamp', 'timestamp'],
      ['tstz', 'timestamp', 'timestamptz'],
      ['t', 'time', 'time'],
      ['raw', 'bytes', 'bytea'],
      ['doc', 'json', 'jsonb'],
      ['list', 'array', 'int4[]'],
      ['nothing', 'string', 'text'],
    ]);
    expect(result.rows).toEqual([
      [
        '9223372036854775807',
        '12.50',
        1.5,
        true,
        '2024-02-29',
        '2024-01-31T12:34:56.789Z',
        '2024-01-31T10:00:00.000Z',
        '12:30:00',
        Buffer.from([0xde, 0xad]),
        { a: [1, 2] },
        [1, null],
        null,
      ],
    ]);
  });

  it('binds every param type through the dialect casts, typed NULLs included', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const result = await run(
      session,
      'SELECT $1::int8 AS i, $2::float8 AS n, $3::text AS s, $4::bool AS b, $5::date AS d, $6::timestamptz AS t, $7::text[] AS a, $8::int8 IS NULL AS isnull',
      [
        { name: 'i', type: 'integer', array: false, value: 9007199254740993n },
        { name: 'n', type: 'number', array: false, value: -2.5e100 },
        { name: 's', type: 'string', array: false, value: 'O\'Brien"; DROP TABLE x; --' },
        { name: 'b', type: 'boolean', array: false, value: false },
        { name: 'd', type: 'date', array: false, value: '2024-02-29' },
        { name: 't', type: 'timestamp', array: false, value: '2038-01-19T03:14:08.000Z' },
        { name: 'a', type: 'string', array: true, value: ['x,y', '{}', 'q"uote', 'back\\slash'] },
        { name: 'z', type: 'integer', array: false, value: null },
      ],
    );
    expect(result.rows).toEqual([
      [
        '9007199254740993',
        -2.5e100,
        'O\'Brien"; DROP TABLE x; --',
        false,
        '2024-02-29',
        '2038-01-19T03:14:08.000Z',
        ['x,y', '{}', 'q"uote', 'back\\slash'],
        true,
      ],
    ]);
  });

  it('refuses writes and DDL: the session is read-only', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    for (const sql of [
      `INSERT INTO ${table} VALUES (3, 'three')`,
      `UPDATE ${table} SET name = 'x'`,
      `DELETE FROM ${table}`,
      `WITH gone AS (DELETE FROM ${table} RETURNING id) SELECT count(*) FROM gone`,
      `CREATE TABLE ${table}_new (x int)`,
      `DROP TABLE ${table}`,
    ]) {
      expect(await failure(run(session, sql)), sql).toMatchObject({
        code: 'QUERY_FAILED',
        driverCode: '25006',
      });
    }
    const { rows } = await adminQuery(`SELECT id, name FROM ${table} ORDER BY id`);
    expect(rows).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);
    expect(await session.validate()).toBe(true);
  });

  it('refuses stacked statements, even without params', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const error = await failure(run(session, `SELECT 1; DELETE FROM ${table}`));
    expect(error).toMatchObject({ code: 'QUERY_FAILED', driverCode: '42601' });
    const { rows } = await adminQuery(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0].n).toBe(2);
  });

  it('stops on the server at the row limit', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    // Row 5 divides by zero: reaching it would fail the query, so success proves the server stopped.
    const limited = await run(session, 'SELECT g, 10 / (g - 5) AS q FROM generate_series(1, 10) g', [], {
      rowLimit: 3,
    });
    expect(limited.rows).toEqual([
      [1, -2],
      [2, -3],
      [3, -5],
    ]);
    const exact = await run(session, 'SELECT g FROM generate_series(1, 3) g', [], { rowLimit: 3 });
    expect(exact.rows).toHaveLength(3);
  });

  it('with portalRowLimit off, keeps only rowLimit rows but lets the server run the whole query', async (context) => {
    requirePg(availability, context.skip);
    const session = await open({ portalRowLimit: false });
    const limited = await run(session, 'SELECT g FROM generate_series(1, 10) g', [], { rowLimit: 3 });
    expect(limited.rows).toEqual([[1], [2], [3]]);
    const error = await failure(
      run(session, 'SELECT g, 10 / (g - 5) AS q FROM generate_series(1, 10) g', [], { rowLimit: 3 }),
    );
    expect(error).toMatchObject({ code: 'QUERY_FAILED', driverCode: '22012' });
  });

  it('enforces the timeout on the server and changes it only when a query asks for another', async (context) => {
    requirePg(availability, context.skip);
    const session = await open({ statementTimeoutMs: 7000 });
    const show = async (timeoutMs: number) =>
      (await run(session, "SELECT current_setting('statement_timeout') AS t", [], { timeoutMs }))
        .rows[0]?.[0];
    expect(await show(7000)).toBe('7s');
    // A few ms less (the runtime passes the time left) keeps the session's setting: no SET.
    expect(await show(6990)).toBe('7s');
    expect(await show(250)).toBe('250ms');
    expect(await failure(run(session, 'SELECT pg_sleep(5)', [], { timeoutMs: 250 }))).toMatchObject({
      code: 'QUERY_TIMEOUT',
      driverCode: '57014',
    });
    expect(await show(1500)).toBe('1500ms');
    expect(await session.validate()).toBe(true);
  });

  it('prepares a statement once per session and binds it on later calls', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const lookup = `SELECT name FROM ${table} WHERE id = $1`;
    const param = (v: number): BoundParam => ({ name: 'id', type: 'integer', array: false, value: v });
    expect((await run(session, lookup, [param(1)])).rows).toEqual([['one']]);
    expect((await run(session, lookup, [param(2)])).rows).toEqual([['two']]);
    expect((await run(session, lookup, [param(1)])).rows).toEqual([['one']]);
    const { rows } = await run(
      session,
      "SELECT name, statement, (generic_plans + custom_plans)::int FROM pg_prepared_statements WHERE statement LIKE '%' || $1 || '%' AND statement NOT LIKE '%pg_prepared%'",
      [{ name: 'table', type: 'string', array: false, value: table }],
    );
    // One statement for the three calls, named by its text's hash, run three times.
    expect(rows).toHaveLength(1);
    expect(rows[0]?.[0]).toMatch(/^quarry_[0-9a-f]{40}$/);
    expect(rows[0]?.[2]).toBe(3);
  });

  it('lets go of the least recently used statements past 64 per session', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    for (let i = 0; i < 70; i++) await run(session, `SELECT ${i} AS n`);
    const { rows } = await run(session, 'SELECT count(*)::int FROM pg_prepared_statements');
    // 64 kept, the ones let go closed with the next query, and this count's own statement.
    expect(rows[0]?.[0]).toBe(65);
    // A statement let go is prepared again when it comes back.
    expect((await run(session, 'SELECT 0 AS n')).rows).toEqual([[0]]);
  });

  it('re-prepares a statement whose columns a table change altered, and the call succeeds', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const changing = `${table}_changing`;
    await adminQuery(`CREATE TABLE ${changing} (id int)`);
    onTestFinished(() => adminQuery(`DROP TABLE IF EXISTS ${changing}`).then(() => undefined));
    await adminQuery(`INSERT INTO ${changing} VALUES (1)`);
    const all = `SELECT * FROM ${changing}`;
    expect((await run(session, all)).columns.map((c) => c.name)).toEqual(['id']);
    await adminQuery(`ALTER TABLE ${changing} ADD COLUMN label text DEFAULT 'x'`);
    // PostgreSQL refuses the prepared plan (0A000, cached plan must not change result type).
    const after = await run(session, all);
    expect(after.columns.map((c) => c.name)).toEqual(['id', 'label']);
    expect(after.rows).toEqual([[1, 'x']]);
  });

  it('falls back to unnamed statements once a prepared one went missing (a pooler in the way)', async (context) => {
    requirePg(availability, context.skip);
    const session = await open({ statementTimeoutMs: 7000 });
    const lookup = `SELECT name FROM ${table} WHERE id = $1`;
    const param: BoundParam = { name: 'id', type: 'integer', array: false, value: 2 };
    await run(session, lookup, [param]);
    // What a transaction-mode pooler's other server connection, or DISCARD ALL, looks like.
    await run(session, 'DEALLOCATE ALL');
    // The Bind fails (26000) before anything ran: sent again, unnamed, with its timeout.
    expect((await run(session, lookup, [param], { timeoutMs: 250 })).rows).toEqual([['two']]);
    const show = await run(session, "SELECT current_setting('statement_timeout')", [], { timeoutMs: 250 });
    expect(show.rows).toEqual([['250ms']]);
    const { rows } = await run(session, 'SELECT count(*)::int FROM pg_prepared_statements');
    expect(rows[0]?.[0]).toBe(0);
    expect(session.validate()).toBe(true);
  });

  it('cancel() stops the running statement on the server and the session stays usable', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const marker = `cancel_me_${suffix}`;
    const running = run(session, `SELECT pg_sleep(20) /* ${marker} */`, [], { timeoutMs: 60_000 });
    const settled = failure(running);
    for (let i = 0; i < 100 && (await activeCount(marker)) === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await activeCount(marker)).toBe(1);
    await session.cancel();
    expect(await settled).toMatchObject({ code: 'QUERY_TIMEOUT', driverCode: '57014' });
    expect(await activeCount(marker)).toBe(0);
    expect((await run(session, 'SELECT 1 AS one')).rows).toEqual([[1]]);
    await session.cancel(); // nothing running: a no-op that must not throw
  });

  it('reports a session killed by the server as dead, without crashing', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    expect(await session.validate()).toBe(true);
    await adminQuery('SELECT pg_terminate_backend($1)', [session.processId]);
    for (let i = 0; i < 100 && (await session.validate()); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await session.validate()).toBe(false);
    expect(await failure(run(session, 'SELECT 1'))).toMatchObject({ code: 'CONNECT_FAILED' });
  });

  it('fails a query whose session is killed mid-flight with CONNECT_FAILED', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    const settled = failure(run(session, 'SELECT pg_sleep(20)'));
    await new Promise((r) => setTimeout(r, 200));
    await adminQuery('SELECT pg_terminate_backend($1)', [session.processId]);
    expect(await settled).toMatchObject({ code: 'CONNECT_FAILED' });
    expect(await session.validate()).toBe(false);
  });

  it('retires a session a query left in a transaction or made writable', async (context) => {
    requirePg(availability, context.skip);
    const begun = await open();
    expect(await failure(run(begun, 'BEGIN READ WRITE'))).toMatchObject({ code: 'QUERY_FAILED' });
    expect(await begun.validate()).toBe(false);
    const unlocked = await open();
    expect(
      await failure(run(unlocked, "SELECT set_config('default_transaction_read_only', 'off', false)")),
    ).toMatchObject({ code: 'QUERY_FAILED' });
    expect(await unlocked.validate()).toBe(false);
    // Even without validate-on-borrow, the session runs nothing more.
    expect(await failure(run(unlocked, 'SELECT 1'))).toMatchObject({ code: 'CONNECT_FAILED' });
  });

  it('applies the configured schema and application name', async (context) => {
    requirePg(availability, context.skip);
    const session = await open({ schema });
    const result = await run(
      session,
      "SELECT count(*)::int AS n, current_setting('application_name') AS app, current_setting('default_transaction_read_only') AS ro FROM only_here",
    );
    expect(result.rows).toEqual([[0, appName, 'on']]);
  });

  it('fails to connect with CONNECT_FAILED and no secret in the message', async (context) => {
    requirePg(availability, context.skip);
    const refused = await failure(
      createPostgresSession(
        settings({ connectionString: 'postgres://ana:s3cret-pw@127.0.0.1:1/db', connectTimeoutMs: 2000 }),
        noopLogger,
        trusted,
      ),
    );
    expect(refused.code).toBe('CONNECT_FAILED');
    expect(refused.message).not.toMatch(/s3cret-pw|ana/);
    const noDatabase = await failure(
      createPostgresSession(
        settings({ connectionString: `${TEST_PG_URL}_no_such_db_${suffix}` }),
        noopLogger,
        trusted,
      ),
    );
    expect(noDatabase).toMatchObject({ code: 'CONNECT_FAILED', driverCode: '3D000' });
    expect(noDatabase.message).not.toContain('no_such_db');
    // The test server has TLS off: asking for TLS must fail cleanly, not hang or crash.
    const noTls = await failure(createPostgresSession(settings({ ssl: true }), noopLogger, trusted));
    expect(noTls.code).toBe('CONNECT_FAILED');
  });

  it('close() is idempotent and the session refuses work afterwards', async (context) => {
    requirePg(availability, context.skip);
    const session = await open();
    await session.close();
    await session.close();
    expect(await session.validate()).toBe(false);
    expect(await failure(run(session, 'SELECT 1'))).toMatchObject({ code: 'CLOSED' });
  });
});
