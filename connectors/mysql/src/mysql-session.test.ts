// Direct tests of one session against the real test server (MariaDB 10.11 here): read-only,
// no stacked statements, exact values, row cap, server-side timeout, cancel, liveness, and one
// round trip per query on the hot path.
import { type BoundParam, type CompiledQuery, type ExecuteOptions, noopLogger } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { mysqlConfigSchema } from './mysql-config.js';
import { mysqlConnectionOptions } from './mysql-plugin.js';
import { createMysqlSession, type MysqlSession, pinnedSqlMode } from './mysql-session.js';
import {
  connectMysqlAdmin,
  ident,
  type MysqlAdmin,
  mysqlAvailable,
  mysqlTestTarget,
  uniqueSuffix,
} from './mysql-test-server.js';

const TABLE = `quarry_mysql_session_${uniqueSuffix()}`;
const T = ident(TABLE);

let unavailable: string | undefined;
let admin: MysqlAdmin;
const sessions: MysqlSession[] = [];

function options(overrides: Partial<ExecuteOptions> = {}): ExecuteOptions {
  return { timeoutMs: 5_000, rowLimit: 1_000, signal: new AbortController().signal, ...overrides };
}

function q(sql: string, params: readonly BoundParam[] = []): CompiledQuery {
  return { sql, params };
}

function p(type: BoundParam['type'], value: BoundParam['value']): BoundParam {
  return { name: 'p', type, value, array: false };
}

async function open(config: Record<string, unknown> = {}): Promise<MysqlSession> {
  const parsed = mysqlConfigSchema.parse({ ...mysqlTestTarget(), ...config });
  const session = await createMysqlSession({
    connection: mysqlConnectionOptions(parsed),
    logger: noopLogger,
  });
  sessions.push(session);
  return session;
}

function guard(context: TestContext): void {
  if (unavailable !== undefined) context.skip(unavailable);
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code?: string; driverCode?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; driverCode?: string; message: string };
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  const available = await mysqlAvailable();
  if (available !== true) {
    unavailable = available;
    return;
  }
  admin = await connectMysqlAdmin(mysqlTestTarget().database);
  await admin.query(
    `CREATE TABLE ${T} (id INT PRIMARY KEY, big BIGINT, amount DECIMAL(20,2), flag BOOLEAN, day DATE,
      dt DATETIME(3), ts TIMESTAMP(6) NULL, tm TIME, doc JSON, raw VARBINARY(8), name VARCHAR(50))`,
  );
  await admin.query(
    `INSERT INTO ${T} VALUES
      (1, 9223372036854775807, 12345678901234567.89, TRUE, '2024-02-29', '2024-01-31 12:34:56.789',
       '2024-01-31 12:34:56.123456', '-01:02:03', '{"a":[1,2]}', x'00ff', 'alpha'),
      (2, -9007199254740993, -0.01, FALSE, '1970-01-01', '1970-01-01 00:00:00', NULL, NULL, NULL, NULL, 'beta'),
      (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
  );
});

afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  if (unavailable === undefined) {
    await admin.query(`DROP TABLE IF EXISTS ${T}`);
    await admin.close();
  }
});

describe('mysql session', () => {
  it('detects the server flavour', async (context) => {
    guard(context);
    const session = await open();
    const [row] = await admin.query<{ v: string }>('SELECT VERSION() AS v');
    expect(session.flavour).toBe(row!.v.includes('MariaDB') ? 'mariadb' : 'mysql');
  });

  it('returns exact values with logical column types', async (context) => {
    guard(context);
    const session = await open();
    const result = await session.execute(q(`SELECT * FROM ${T} ORDER BY id`), options());
    expect(result.columns.map((c) => [c.name, c.type])).toEqual([
      ['id', 'integer'],
      ['big', 'integer'],
      ['amount', 'decimal'],
      ['flag', 'boolean'],
      ['day', 'date'],
      ['dt', 'timestamp'],
      ['ts', 'timestamp'],
      ['tm', 'time'],
      ['doc', 'json'],
      ['raw', 'bytes'],
      ['name', 'string'],
    ]);
    expect(result.rows[0]).toEqual([
      1,
      '9223372036854775807',
      '12345678901234567.89',
      1,
      '2024-02-29',
      '2024-01-31T12:34:56.789Z',
      '2024-01-31T12:34:56.123456Z',
      '-01:02:03',
      { a: [1, 2] },
      Buffer.from([0, 255]),
      'alpha',
    ]);
    expect(result.rows[1]?.[1]).toBe('-9007199254740993');
    expect(result.rows[2]).toEqual(Array.from({ length: 11 }, (_, i) => (i === 0 ? 3 : null)));
  });

  it('reads TIMESTAMP columns in UTC whatever the server time zone', async (context) => {
    guard(context);
    const session = await open();
    const [row] = await admin.query<{ utc: string }>(
      `SELECT CONVERT_TZ(ts, @@session.time_zone, '+00:00') AS utc FROM ${T} WHERE id = 1`,
    );
    const result = await session.execute(q(`SELECT ts FROM ${T} WHERE id = 1`), options());
    expect(result.rows[0]?.[0]).toBe(`${row!.utc.replace(' ', 'T')}Z`);
  });

  it('binds every param type without splicing it into the SQL', async (context) => {
    guard(context);
    const session = await open();
    const hostile = "x' OR '1'='1'; DROP TABLE t; -- \\'";
    const result = await session.execute(
      q('SELECT ? AS i, ? AS s, ? AS b, CAST(? AS DATE) AS d, CAST(? AS DATETIME(3)) AS ts, ? AS n', [
        p('integer', 9223372036854775807n),
        p('string', hostile),
        p('boolean', true),
        p('date', '2024-02-29'),
        p('timestamp', '2024-01-31T12:34:56.789Z'),
        p('number', null),
      ]),
      options(),
    );
    expect(result.rows[0]).toEqual([
      '9223372036854775807',
      hostile,
      1,
      '2024-02-29',
      '2024-01-31T12:34:56.789Z',
      null,
    ]);
  });

  it('accepts a bound integer in LIMIT and filters by bound values', async (context) => {
    guard(context);
    const session = await open();
    const result = await session.execute(
      q(`SELECT id FROM ${T} WHERE flag = ? OR day = ? ORDER BY id LIMIT ?`, [
        p('boolean', false),
        p('date', '2024-02-29'),
        p('integer', 1),
      ]),
      options(),
    );
    expect(result.rows).toEqual([[1]]);
  });

  it('refuses writes and DDL, and the data is untouched', async (context) => {
    guard(context);
    const session = await open();
    for (const sql of [
      `INSERT INTO ${T} (id) VALUES (99)`,
      `UPDATE ${T} SET name = 'x'`,
      `DELETE FROM ${T}`,
      `CREATE TABLE ${ident(`${TABLE}_x`)} (a INT)`,
      `DROP TABLE ${T}`,
    ]) {
      const error = await rejection(session.execute(q(sql), options()));
      expect(error.code, sql).toBe('QUERY_FAILED');
      expect(error.driverCode, sql).toBe('ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION');
    }
    const [row] = await admin.query<{ n: number }>(`SELECT count(*) AS n FROM ${T}`);
    expect(Number(row!.n)).toBe(3);
    // A refused write is an ordinary query failure: the session stays in service.
    expect(await session.validate?.()).toBe(true);
    expect((await session.execute(q('SELECT 1'), options())).rows).toEqual([[1]]);
  });

  it('cannot run stacked statements', async (context) => {
    guard(context);
    const session = await open();
    const error = await rejection(session.execute(q(`SELECT 1; DELETE FROM ${T}`), options()));
    expect(error.code).toBe('QUERY_FAILED');
    expect(error.driverCode).toBe('ER_PARSE_ERROR');
    const [row] = await admin.query<{ n: number }>(`SELECT count(*) AS n FROM ${T}`);
    expect(Number(row!.n)).toBe(3);
  });

  it('retires a session after a statement that returns no rows (it could lift READ ONLY)', async (context) => {
    guard(context);
    const session = await open();
    const error = await rejection(session.execute(q('SET SESSION TRANSACTION READ WRITE'), options()));
    expect(error.code).toBe('QUERY_FAILED');
    expect(await session.validate?.()).toBe(false);
  });

  it('stops collecting rows at the row limit', async (context) => {
    guard(context);
    const session = await open();
    const result = await session.execute(q(`SELECT id FROM ${T} ORDER BY id`), options({ rowLimit: 2 }));
    expect(result.rows).toEqual([[1], [2]]);
  });

  it('sets the statement timeout on the server and stops a query past it', async (context) => {
    guard(context);
    const session = await open();
    const variable =
      session.flavour === 'mariadb' ? '@@session.max_statement_time' : '@@session.max_execution_time';
    const set = await session.execute(q(`SELECT ${variable} AS t`), options({ timeoutMs: 2_500 }));
    expect(Number(set.rows[0]?.[0])).toBe(session.flavour === 'mariadb' ? 2.5 : 2_500);
    // A longer limit is set again; the server must never stop a query before the runtime's limit.
    const longer = await session.execute(q(`SELECT ${variable} AS t`), options({ timeoutMs: 2_501 }));
    expect(Number(longer.rows[0]?.[0])).toBe(session.flavour === 'mariadb' ? 2.6 : 2_600);
    const error = await rejection(session.execute(q('SELECT SLEEP(5) AS s'), options({ timeoutMs: 300 })));
    if (session.flavour === 'mariadb') {
      expect(error.code).toBe('QUERY_TIMEOUT');
    } else {
      // MySQL's max_execution_time makes SLEEP return 1 instead of failing; not reached here.
      expect(error.code).toMatch(/QUERY_TIMEOUT|QUERY_FAILED/);
    }
    // The session stays usable for the next query.
    expect((await session.execute(q('SELECT 1'), options())).rows).toEqual([[1]]);
  });

  it('uses one round trip per query once the timeout is set', async (context) => {
    guard(context);
    const session = await open();
    const questions = q(
      "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'",
    );
    const before = Number((await session.execute(questions, options())).rows[0]?.[0]);
    // The runtime passes the time left, which jitters by a few ms: that must not cost a SET.
    for (let i = 0; i < 10; i++) {
      await session.execute(q('SELECT ? AS v', [p('integer', i)]), options({ timeoutMs: 5_000 - i }));
    }
    const after = Number((await session.execute(questions, options())).rows[0]?.[0]);
    // 10 queries plus the second probe: no SET (or anything else) between them.
    expect(after - before).toBe(11);
  });

  it('cancels a running statement on the server and retires the session', async (context) => {
    guard(context);
    const session = await open();
    const marker = `quarry_cancel_${uniqueSuffix()}`;
    const running = rejection(
      session.execute(q(`SELECT SLEEP(20) AS s /* ${marker} */`), options({ timeoutMs: 60_000 })),
    );
    const count = async (): Promise<number> => {
      const [row] = await admin.query<{ n: number }>(
        `SELECT count(*) AS n FROM information_schema.PROCESSLIST
         WHERE INFO LIKE ? AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute')`,
        [`%${marker}%`],
      );
      return Number(row!.n);
    };
    await waitFor(async () => (await count()) === 1, 'the slow query to start');
    await session.cancel?.();
    const error = await running;
    // MariaDB's SLEEP returns 1 when killed instead of failing; either way it ends now.
    if (error.code !== undefined) expect(error.code).toBe('QUERY_ABORTED');
    await waitFor(async () => (await count()) === 0, 'the slow query to stop');
    expect(await session.validate?.()).toBe(false);
  });

  it('reports a connection the server killed, without I/O', async (context) => {
    guard(context);
    const session = await open();
    expect(await session.validate?.()).toBe(true);
    await admin.query(`KILL ${Number(session.threadId)}`);
    await waitFor(async () => (await session.validate?.()) === false, 'validate() to notice the kill');
    const error = await rejection(session.execute(q('SELECT 1'), options()));
    expect(error.code).toBe('CONNECT_FAILED');
  });

  it('fails with CONNECT_FAILED on a bad password and never echoes it', async (context) => {
    guard(context);
    const error = await rejection(open({ user: 'quarry_no_such_user', password: 'hunter2-secret' }));
    expect(error.code).toBe('CONNECT_FAILED');
    expect(error.message).not.toContain('hunter2-secret');
    expect(error.message).not.toContain('quarry_no_such_user');
  });

  it('fails with CONNECT_FAILED when nothing listens', async (context) => {
    guard(context);
    const error = await rejection(open({ host: '127.0.0.1', port: 1, connectTimeoutMs: 2_000 }));
    expect(error.code).toBe('CONNECT_FAILED');
  });

  it('closes idempotently', async (context) => {
    guard(context);
    const session = await open();
    await session.close();
    await session.close();
    expect(await session.validate?.()).toBe(false);
    expect((await rejection(session.execute(q('SELECT 1'), options()))).code).toBe('CLOSED');
  });
});

describe('pinnedSqlMode', () => {
  it('drops the modes that change how strings are read, keeping the rest', () => {
    expect(
      pinnedSqlMode(
        'REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI,NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES',
      ),
    ).toBe("SET SESSION sql_mode = 'REAL_AS_FLOAT,PIPES_AS_CONCAT,IGNORE_SPACE,STRICT_TRANS_TABLES'");
    expect(pinnedSqlMode('ORACLE,MSSQL,DB2,MAXDB,POSTGRESQL')).toBe("SET SESSION sql_mode = ''");
    // Anything that is not a mode name is dropped rather than spliced into the statement.
    expect(pinnedSqlMode("STRICT_ALL_TABLES,x'; DROP")).toBe("SET SESSION sql_mode = 'STRICT_ALL_TABLES'");
  });
});
