// Binds and placeholders: what each param type becomes on the wire and in the SQL text.
import { compileTemplate, type ParamValues, parseTemplate } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { snowflakeDialect } from './snowflake-dialect.js';
import { toSnowflakeBinds } from './snowflake-params.js';

function compile(sql: string, params: ParamValues) {
  return compileTemplate(parseTemplate(sql, snowflakeDialect), snowflakeDialect, params);
}

describe('snowflake binds', () => {
  it('casts the types the driver cannot send typed, and leaves integers and strings bare (LIMIT ?)', () => {
    const q = compile(
      'SELECT * FROM t WHERE a = :n AND d = :d AND t = :t AND f = :f AND s = :s AND id IN (:ids) LIMIT :limit',
      {
        n: { type: 'number', array: false, value: 1.5 },
        d: { type: 'date', array: false, value: '2024-02-29' },
        t: { type: 'timestamp', array: false, value: '2024-01-31T12:34:56.789Z' },
        f: { type: 'boolean', array: false, value: null },
        s: { type: 'enum', array: false, value: 'north' },
        ids: { type: 'integer', array: true, value: [1, 2] },
        limit: { type: 'integer', array: false, value: 10 },
      },
    );
    expect(q.sql).toBe(
      'SELECT * FROM t WHERE a = ?::FLOAT AND d = ?::DATE AND t = ?::TIMESTAMP_TZ AND f = ?::BOOLEAN AND s = ? AND id IN (?, ?) LIMIT ?',
    );
    expect(toSnowflakeBinds(q.params)).toEqual([
      1.5,
      '2024-02-29',
      '2024-01-31T12:34:56.789Z',
      null,
      'north',
      1,
      2,
      10,
    ]);
  });

  it('keeps integers exact: safe ones as numbers (FIXED), wider ones as decimal text', () => {
    const binds = toSnowflakeBinds([
      { name: 'a', type: 'integer', array: false, value: 9007199254740991 },
      { name: 'b', type: 'integer', array: false, value: 9007199254740993n },
      { name: 'c', type: 'integer', array: false, value: -9223372036854775808n },
      { name: 'd', type: 'integer', array: false, value: 42n },
    ]);
    expect(binds).toEqual([9007199254740991, '9007199254740993', '-9223372036854775808', 42]);
    // The driver JSON-stringifies binds: no bigint may reach it.
    expect(() => JSON.stringify(binds)).not.toThrow();
  });

  it('refuses a value of the wrong kind with PARAM_INVALID naming the param', () => {
    expect(() => toSnowflakeBinds([{ name: 'n', type: 'integer', array: false, value: 1.5 }])).toThrow(
      /param n/,
    );
    expect(() => toSnowflakeBinds([{ name: 'x', type: 'number', array: false, value: Number.NaN }])).toThrow(
      /param x/,
    );
    expect(() => toSnowflakeBinds([{ name: 'b', type: 'boolean', array: false, value: 'true' }])).toThrow(
      /param b/,
    );
  });

  it('scans Snowflake strings: backslash escapes and $$ constants hide :names', () => {
    const t = parseTemplate("SELECT 'it\\'s :a', $$ :b $$, src:c FROM t WHERE x = :d", snowflakeDialect);
    expect(t.names).toEqual(['d']);
  });
});
