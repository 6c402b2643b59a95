import { describe, expect, it } from 'vitest';
import { isConnectorError } from './connector-error.js';
import { assertReadOnlySql, readOnlyViolation, type SqlFamily } from './read-only-sql.js';

const FAMILIES: readonly SqlFamily[] = [
  'ansi',
  'bigquery',
  'duckdb',
  'mysql',
  'postgres',
  'snowflake',
  'trino',
];

/** Cases as [sql, the words the refusal must contain, or undefined when the statement may run]. */
type Case = readonly [string, string | undefined];

function check(family: SqlFamily, cases: readonly Case[]): void {
  it.each(cases)(`${family}: %s`, (sql, expected) => {
    const verdict = readOnlyViolation(sql, family);
    if (expected === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toContain(expected);
  });
}

describe('readOnlyViolation on every family', () => {
  for (const family of FAMILIES) {
    check(family, [
      ['SELECT 1', undefined],
      ['  select a, b from t where c = 1;  ', undefined],
      ['/* report */ -- why\n (SELECT 1) UNION ALL (SELECT 2)', undefined],
      ['WITH x AS (SELECT 1 AS a) SELECT a FROM x', undefined],
      ["SELECT 'DELETE FROM t; INTO OUTFILE' AS s", undefined],
      ['SELECT 1; SELECT 2', 'more than one statement'],
      ['SELECT 1;;', undefined],
      ['SELECT 1; -- trailing\n', undefined],
      ['DELETE FROM t', 'not DELETE statements'],
      ['insert into t values (1)', 'not INSERT statements'],
      ['UPDATE t SET a = 1', 'UPDATE'],
      ['CREATE TABLE t (a int)', 'CREATE'],
      ['DROP TABLE t', 'DROP'],
      ['COPY t TO STDOUT', 'COPY'],
      ['CALL p()', 'CALL'],
      ['', 'no statement'],
      ['  -- nothing\n', 'no statement'],
      ['SELECT 1 INTO t2', 'INTO'],
      ['WITH g AS (DELETE FROM t RETURNING id) SELECT * FROM g', 'DELETE inside a query'],
      ['SELECT * FROM t FOR UPDATE', 'locking read'],
      ['SELECT * FROM t FOR SHARE', 'locking read'],
      ["SELECT 'unterminated", 'unterminated'],
      ['SELECT 1 /* unterminated', 'unterminated'],
      ['SELECT 1 /* a /* nested */ */', 'nested'],
      [`SELECT U&"d\\0061ta" FROM t`, 'Unicode-escaped'],
    ]);
  }
});

describe('readOnlyViolation: MySQL and MariaDB', () => {
  check('mysql', [
    ["SELECT 1 INTO OUTFILE '/tmp/x'", 'INTO OUTFILE'],
    ["select 1 into\n  dumpfile '/tmp/x'", 'INTO DUMPFILE'],
    ["SELECT a FROM t INTO OUTFILE '/tmp/x' FIELDS TERMINATED BY ','", 'INTO OUTFILE'],
    ['SELECT 1 INTO @v', 'INTO'],
    ["SELECT LOAD_FILE('/etc/passwd')", 'load_file()'],
    ["SELECT load_file ('/etc/passwd')", 'load_file()'],
    ["SELECT `load_file`('/etc/passwd')", 'load_file()'],
    ["LOAD DATA INFILE '/tmp/x' INTO TABLE t", 'LOAD'],
    ["LOAD XML INFILE '/tmp/x' INTO TABLE t", 'LOAD'],
    // Comments and strings hide nothing and are not mistaken for code.
    ["SELECT 1 # INTO OUTFILE '/tmp/x'\n", undefined],
    ["SELECT 1 -- INTO OUTFILE '/tmp/x'", undefined],
    ["SELECT 'it''s', 'a\\'b INTO OUTFILE', \"INTO \\\" DUMPFILE\" AS s", undefined],
    ['SELECT `into outfile` FROM t', undefined],
    ["SELECT _utf8mb4'x', N'y', X'00'", undefined],
    // `--` without a space is arithmetic in MySQL, so what follows is code.
    ["SELECT 1--1 INTO OUTFILE '/tmp/x'", 'INTO OUTFILE'],
    // Executable comments run on the server.
    ["SELECT 1 /*! INTO OUTFILE '/tmp/x' */", 'executable comments'],
    ["SELECT 1 /*M!100000 INTO OUTFILE '/tmp/x' */", 'executable comments'],
    ['SELECT /*+ MAX_EXECUTION_TIME(1) */ 1', undefined],
    // A backslash-escaped quote keeps the string open: OUTFILE below is inside it.
    ["SELECT 'a\\' INTO OUTFILE '", undefined],
    ["SELECT 'a\\\\' INTO OUTFILE '/tmp/x'", 'INTO OUTFILE'],
    ["SELECT REPLACE(a, 'x', 'y'), (INSERT(a, 1, 2, 'z')) FROM t", undefined],
    ['SELECT * FROM t LOCK IN SHARE MODE', 'locking read'],
    ['HANDLER t OPEN', 'HANDLER'],
    ['SET GLOBAL read_only = 0', 'SET'],
    ['TABLE t', undefined],
    ['SELECT $col, a$b FROM t', undefined],
  ]);
});

describe('readOnlyViolation: PostgreSQL', () => {
  check('postgres', [
    ["COPY (SELECT 1) TO PROGRAM 'touch /tmp/x'", 'COPY'],
    ["copy t from '/etc/passwd'", 'COPY'],
    ["SELECT pg_read_file('/etc/passwd')", 'pg_read_file()'],
    ["SELECT pg_catalog.pg_read_binary_file('/etc/passwd')", 'pg_read_binary_file()'],
    ['SELECT "pg_read_file"(\'/etc/passwd\')', 'pg_read_file()'],
    ["SELECT * FROM pg_ls_dir('.')", 'pg_ls_dir()'],
    ["SELECT lo_import('/etc/passwd')", 'lo_import()'],
    ["SELECT lo_export(1, '/tmp/x')", 'lo_export()'],
    ["SELECT * FROM dblink('host=x', 'select 1') AS t(a int)", 'dblink()'],
    ["SELECT dblink_exec('host=x', 'drop table t')", 'dblink_exec()'],
    ["SELECT query_to_xml('copy t to program ''id''', true, true, '')", 'query_to_xml()'],
    ["SELECT set_config('default_transaction_read_only', 'off', false)", 'set_config()'],
    ['SELECT * INTO new_table FROM t', 'INTO'],
    ['SELECT * FROM t FOR NO KEY UPDATE', 'locking read'],
    ['SELECT * FROM t FOR KEY SHARE', 'locking read'],
    ['WITH x AS (UPDATE t SET a = 1 RETURNING a) SELECT * FROM x', 'UPDATE inside a query'],
    ['WITH x AS (INSERT INTO t VALUES (1) RETURNING a) SELECT * FROM x', 'INSERT inside a query'],
    ['SELECT $1::int8 AS a, $2::text[] AS b', undefined],
    ["SELECT $$ pg_read_file('/x') INTO OUTFILE $$ AS s", undefined],
    ["SELECT $tag$ it's $$ COPY $tag$ AS s", undefined],
    ['SELECT $tag$ unterminated', 'unterminated'],
    ["SELECT E'a\\' INTO t' AS s", undefined],
    ["SELECT 'a\\', pg_read_file('/etc/passwd') --'", 'pg_read_file()'],
    ['SELECT "my ""odd"" column" FROM t', undefined],
    ['SELECT 1 /* a */ /* b */', undefined],
    ['VALUES (1), (2)', undefined],
    ['TABLE t', undefined],
    ['EXPLAIN ANALYZE DELETE FROM t', 'EXPLAIN'],
    ['SET default_transaction_read_only = off', 'SET'],
    ['BEGIN READ WRITE', 'BEGIN'],
  ]);
});

describe('readOnlyViolation: DuckDB', () => {
  check('duckdb', [
    ["COPY t TO '/tmp/x.csv'", 'COPY'],
    ["ATTACH '/tmp/x.db' AS x", 'ATTACH'],
    ['INSTALL httpfs', 'INSTALL'],
    ['LOAD httpfs', 'LOAD'],
    ["EXPORT DATABASE '/tmp/x'", 'EXPORT'],
    ['PRAGMA enable_profiling', 'PRAGMA'],
    ['SET enable_external_access = true', 'SET'],
    ['FROM sales SELECT region', undefined],
    // Files are the engine's guard (enable_external_access, allowed_directories), not this one.
    ["SELECT * FROM read_csv('data/sales.csv')", undefined],
    ['SELECT $$ COPY $$ AS s, $1::BIGINT AS p', undefined],
  ]);
});

describe('readOnlyViolation: Trino, Snowflake, BigQuery', () => {
  check('trino', [
    ['SELECT * FROM hive.s.t', undefined],
    ['INSERT INTO t SELECT 1', 'INSERT'],
    ["CALL system.sync_partition_metadata('s', 't', 'FULL')", 'CALL'],
    ["EXECUTE IMMEDIATE 'DELETE FROM t'", 'EXECUTE'],
    ['SHOW TABLES', 'SHOW'],
  ]);
  check('snowflake', [
    ['SHOW TABLES', undefined],
    ['DESCRIBE TABLE t', undefined],
    ['COPY INTO @stage FROM t', 'COPY'],
    ['PUT file:///etc/passwd @stage', 'PUT'],
    ['GET @stage file:///tmp/', 'GET'],
    ['SELECT 1 // INTO x\n', undefined],
    ["SELECT 'a\\'b' AS s", undefined],
    ['WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x', 'INTO'],
  ]);
  check('bigquery', [
    ['FROM t |> WHERE a = 1', undefined],
    ["SELECT '''it's INTO''' AS s, r'\\d' AS r, `proj.ds.t`.a FROM `proj.ds.t`", undefined],
    ["EXPORT DATA OPTIONS(uri='gs://b/*') AS SELECT 1", 'EXPORT'],
    ['SELECT 1 # INTO x\n', undefined],
    ['DECLARE x INT64', 'DECLARE'],
  ]);
});

describe('assertReadOnlySql', () => {
  it('throws QUERY_FAILED with driverCode READ_ONLY and a reason naming the construct', () => {
    let thrown: unknown;
    try {
      assertReadOnlySql("SELECT 1 INTO OUTFILE '/tmp/x'", 'mysql');
    } catch (error) {
      thrown = error;
    }
    expect(isConnectorError(thrown, 'QUERY_FAILED')).toBe(true);
    expect(thrown).toMatchObject({ driverCode: 'READ_ONLY', retryable: false });
    expect((thrown as Error).message).toContain('not read-only: INTO OUTFILE');
    expect((thrown as Error).message).not.toContain('/tmp/x');
  });

  it('passes a read', () => {
    expect(() => assertReadOnlySql('SELECT 1', 'postgres')).not.toThrow();
    expect(() => assertReadOnlySql('SELECT 1')).not.toThrow();
  });
});
