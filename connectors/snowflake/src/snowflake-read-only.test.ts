// The lexical read-only gate: what may run, and that strings, quoted identifiers and comments
// can neither hide a second statement nor trip the gate.
import { describe, expect, it } from 'vitest';
import { readOnlyViolation } from './snowflake-read-only.js';

describe('readOnlyViolation', () => {
  it('lets queries through: SELECT, WITH … SELECT, SHOW, DESCRIBE, a trailing semicolon, leading comments', () => {
    for (const sql of [
      'SELECT 1',
      'select * from t where a = ?',
      '  -- note\n/* block */ // line\nSELECT 1;',
      '(SELECT 1) UNION ALL (SELECT 2)',
      'WITH x AS (SELECT 1 AS a) SELECT a FROM x',
      'SHOW TABLES',
      'DESCRIBE TABLE t',
      'desc table t',
      'SELECT \'a;b\', "c;d", $$e;f$$ FROM t -- trailing ; comment',
      "SELECT 'it\\'s; DELETE FROM t' AS s",
      'SELECT \'DELETE\' AS word, "insert" FROM t',
      'SELECT src:field.nested AS v FROM t',
    ]) {
      expect(readOnlyViolation(sql), sql).toBeUndefined();
    }
  });

  it('refuses writes, DDL, session changes, procedures and scripting', () => {
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'UPDATE t SET a = 1',
      'DELETE FROM t',
      'MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE',
      'TRUNCATE TABLE t',
      'CREATE TABLE t2 AS SELECT 1',
      'DROP TABLE t',
      "ALTER SESSION SET TIMEZONE = 'UTC'",
      'USE ROLE ACCOUNTADMIN',
      'CALL SYSTEM$WAIT(1)',
      'EXECUTE IMMEDIATE $$SELECT 1$$',
      'BEGIN SELECT 1; END',
      'COPY INTO @stage FROM t',
      'GRANT SELECT ON t TO ROLE r',
      'PUT file:///etc/passwd @stage',
    ]) {
      expect(readOnlyViolation(sql), sql).toBeDefined();
    }
  });

  it('refuses stacked statements, however the second one hides', () => {
    for (const sql of [
      'SELECT 1; DELETE FROM t',
      'SELECT 1;DELETE FROM t',
      'SELECT 1; /* c */ SELECT 2',
      "SELECT 'x'; DROP TABLE t",
      'SELECT "a;"; DROP TABLE t',
      'SELECT $$;$$; DELETE FROM t',
      "SELECT 'it\\'s'; DELETE FROM t",
      'SELECT 1 -- c\n; DELETE FROM t',
    ]) {
      expect(readOnlyViolation(sql), sql).toBe('only one statement may run at a time');
    }
  });

  it('refuses a WITH statement that writes', () => {
    expect(readOnlyViolation('WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x')).toBe(
      'a WITH statement may only select',
    );
    expect(readOnlyViolation('WITH x AS (SELECT 1) DELETE FROM t')).toBeDefined();
  });

  it('fails closed on an empty statement and on unterminated strings, identifiers and comments', () => {
    for (const sql of [
      '',
      '  ;  ',
      '-- only a comment',
      "SELECT 'open",
      'SELECT "open',
      'SELECT /* open',
      'SELECT $$open',
    ]) {
      expect(readOnlyViolation(sql), sql).toBeDefined();
    }
  });
});
