// The read-only rule: which GoogleSQL texts pass as one query, and why each refused one is refused.
import { isConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { assertReadOnly, readOnlyViolation } from './bigquery-read-only.js';

describe('readOnlyViolation', () => {
  it.each([
    'SELECT 1',
    'select id from t where id in unnest(@ids)',
    'WITH a AS (SELECT 1 AS x) SELECT x FROM a',
    'FROM orders |> WHERE qty > 3 |> SELECT id',
    '(SELECT 1) UNION ALL (SELECT 2)',
    '  -- leading comment; DELETE FROM t\n# another one; DROP TABLE t\n/* block; */ SELECT 1',
    'SELECT 1;',
    'SELECT 1; -- trailing comment\n  ',
    'SELECT \';\' AS a, "; DELETE FROM t" AS b, `odd;name` FROM t',
    "SELECT 'it\\'s; fine' AS a",
    "SELECT '''multi\nline ' quote; DELETE''' AS a",
    'SELECT """a " b; c""" AS a',
    "SELECT r'raw\\'; still raw' AS a, b'\\x00;' AS c, rb\"x;\" AS d",
    "SELECT 1 -- a comment with a quote ' and ;\nFROM t",
  ])('accepts a single query: %s', (sql) => {
    expect(readOnlyViolation(sql)).toBeUndefined();
  });

  it.each([
    ['INSERT INTO t (id) VALUES (1)', 'INSERT'],
    ['UPDATE t SET a = 1 WHERE true', 'UPDATE'],
    ['delete from t where true', 'DELETE'],
    ['MERGE t USING s ON t.id = s.id WHEN MATCHED THEN DELETE', 'MERGE'],
    ['TRUNCATE TABLE t', 'TRUNCATE'],
    ['CREATE TABLE t2 AS SELECT 1 AS x', 'CREATE'],
    ['CREATE TEMP FUNCTION f() AS (1)', 'CREATE'],
    ['ALTER TABLE t ADD COLUMN c INT64', 'ALTER'],
    ['DROP TABLE t', 'DROP'],
    ["EXPORT DATA OPTIONS (uri = 'gs://b/*') AS SELECT 1", 'EXPORT'],
    ['LOAD DATA INTO t FROM FILES (uris = [])', 'LOAD'],
    ['CALL ds.proc()', 'CALL'],
    ["EXECUTE IMMEDIATE 'DELETE FROM t WHERE true'", 'EXECUTE'],
    ['BEGIN SELECT 1; END', 'BEGIN'],
    ['DECLARE x INT64 DEFAULT 1', 'DECLARE'],
    ['SET x = 1', 'SET'],
    ['GRANT `roles/bigquery.dataViewer` ON TABLE t TO "user:a@b.c"', 'GRANT'],
    ['/* SELECT */ DELETE FROM t WHERE true', 'DELETE'],
    ['(DELETE FROM t WHERE true)', 'DELETE'],
  ])('refuses %s', (sql, keyword) => {
    expect(readOnlyViolation(sql)).toBe(
      `only queries (SELECT, WITH, FROM) can run, not ${keyword} statements`,
    );
  });

  it.each([
    'SELECT 1; DELETE FROM t WHERE true',
    'SELECT 1;;',
    'SELECT 1; SELECT 2',
    "SELECT 'a'; DROP TABLE t",
    'SELECT 1 /* c */ ; /* c */ (SELECT 2)',
  ])('refuses several statements: %s', (sql) => {
    expect(readOnlyViolation(sql)).toBe('the SQL holds more than one statement (a script)');
  });

  it.each([
    ['', 'the SQL holds no statement'],
    ['  -- only a comment', 'the SQL holds no statement'],
    [';', 'the SQL holds an empty statement'],
    ["'a string' AS x", 'only queries (SELECT, WITH, FROM) can run, not this statement'],
    ["SELECT 'unterminated", 'the SQL has an unterminated string or identifier'],
    ['SELECT 1 /* unterminated', 'the SQL has an unterminated comment'],
  ])('refuses %j', (sql, reason) => {
    expect(readOnlyViolation(sql)).toBe(reason);
  });
});

describe('assertReadOnly', () => {
  it('throws QUERY_FAILED with driverCode READ_ONLY, and passes queries through', () => {
    expect(() => assertReadOnly('SELECT 1')).not.toThrow();
    let thrown: unknown;
    try {
      assertReadOnly('DELETE FROM t WHERE true');
    } catch (error) {
      thrown = error;
    }
    expect(isConnectorError(thrown, 'QUERY_FAILED')).toBe(true);
    expect((thrown as { driverCode?: string }).driverCode).toBe('READ_ONLY');
  });
});
