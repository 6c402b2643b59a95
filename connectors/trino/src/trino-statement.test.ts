import { type BoundParam, compileTemplate, parseTemplate } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { trinoDialect } from './trino-dialect.js';
import { assertReadOnlyQuery, firstKeyword, trinoStatement } from './trino-statement.js';

const p = (
  name: string,
  type: BoundParam['type'],
  value: BoundParam['value'],
  array = false,
): BoundParam => ({
  name,
  type,
  array,
  value,
});

describe('trino statements', () => {
  it('sends a query without params as it is', () => {
    expect(trinoStatement({ sql: 'SELECT 1', params: [] })).toBe('SELECT 1');
  });

  it('wraps params in EXECUTE IMMEDIATE with typed literals, the SQL quoted as one string', () => {
    const template = parseTemplate(
      "SELECT * FROM t WHERE a = :a AND b = :b AND c = 'x''y' AND contains(:ids, id) AND d > :d",
      trinoDialect,
    );
    const compiled = compileTemplate(template, trinoDialect, {
      a: { type: 'integer', array: false, value: -5 },
      b: { type: 'string', array: false, value: "it's\n" },
      ids: { type: 'integer', array: true, value: [1, 9007199254740993n] },
      d: { type: 'timestamp', array: false, value: null },
    });
    expect(compiled.sql).toBe(
      "SELECT * FROM t WHERE a = ? AND b = ? AND c = 'x''y' AND contains(?, id) AND d > ?",
    );
    expect(trinoStatement(compiled)).toBe(
      "EXECUTE IMMEDIATE 'SELECT * FROM t WHERE a = ? AND b = ? AND c = ''x''''y'' AND contains(?, id) AND d > ?' " +
        "USING (-5), U&'it''s\\000a', ARRAY[1, 9007199254740993], CAST(NULL AS TIMESTAMP(3) WITH TIME ZONE)",
    );
  });

  it('renders empty and NULL arrays as typed values', () => {
    const statement = trinoStatement({
      sql: 'SELECT ?, ?',
      params: [p('a', 'string', [], true), p('b', 'date', null, true)],
    });
    expect(statement).toBe(
      "EXECUTE IMMEDIATE 'SELECT ?, ?' USING CAST(ARRAY[] AS ARRAY(VARCHAR)), CAST(NULL AS ARRAY(DATE))",
    );
  });

  it('refuses a value that does not match its type with PARAM_INVALID', () => {
    expect(() => trinoStatement({ sql: 'SELECT ?', params: [p('n', 'integer', 1.5)] })).toThrow(
      expect.objectContaining({ code: 'PARAM_INVALID' }),
    );
  });

  it('runs queries only: SELECT, WITH, VALUES, TABLE, after comments and parentheses', () => {
    expect(firstKeyword('  -- note\n /* c */ ((select 1))')).toBe('SELECT');
    for (const sql of ['WITH x AS (SELECT 1) SELECT * FROM x', 'VALUES 1', 'TABLE t', 'select 1']) {
      expect(() => assertReadOnlyQuery(sql)).not.toThrow();
    }
    for (const sql of [
      'INSERT INTO t VALUES (1)',
      'DELETE FROM t',
      'CREATE TABLE t (a int)',
      'EXPLAIN ANALYZE INSERT INTO t VALUES (1)',
      'CALL system.flush()',
      'SET SESSION query_max_run_time = 1s',
      'PREPARE q FROM SELECT 1',
      "EXECUTE IMMEDIATE 'DELETE FROM t'",
      '/* only a comment */',
    ]) {
      expect(() => assertReadOnlyQuery(sql), sql).toThrow(
        expect.objectContaining({ code: 'QUERY_FAILED', driverCode: 'READ_ONLY' }),
      );
    }
  });
});
