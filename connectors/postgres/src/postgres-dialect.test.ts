import { compileTemplate, parseTemplate, type TypedValue } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { postgresCastFor, postgresDialect } from './postgres-dialect.js';
import { toPostgresValues } from './postgres-values.js';

describe('postgresDialect', () => {
  it('casts every param type so a NULL is still typed', () => {
    expect(postgresCastFor('integer', false)).toBe('::int8');
    expect(postgresCastFor('number', false)).toBe('::float8');
    expect(postgresCastFor('string', false)).toBe('::text');
    expect(postgresCastFor('enum', false)).toBe('::text');
    expect(postgresCastFor('boolean', false)).toBe('::bool');
    expect(postgresCastFor('date', false)).toBe('::date');
    expect(postgresCastFor('timestamp', false)).toBe('::timestamptz');
    expect(postgresCastFor('integer', true)).toBe('::int8[]');
    expect(postgresCastFor('string', true)).toBe('::text[]');
  });

  it('compiles :name to numbered, cast placeholders and skips dollar-quoted text', () => {
    const template = parseTemplate(
      'SELECT $q$ :not_a_param $q$, :year, :year::int4 WHERE :year IS NULL',
      postgresDialect,
    );
    const year: TypedValue = { type: 'integer', array: false, value: 2024 };
    const compiled = compileTemplate(template, postgresDialect, { year });
    expect(template.names).toEqual(['year']);
    expect(compiled.sql).toContain('$q$ :not_a_param $q$');
    expect(compiled.sql).toContain('$1::int8');
    expect(compiled.sql).not.toContain(':year');
  });
});

describe('toPostgresValues', () => {
  it('binds scalars as Postgres input text, bigint without losing digits', () => {
    expect(
      toPostgresValues([
        { name: 'a', type: 'integer', array: false, value: 9223372036854775807n },
        { name: 'b', type: 'number', array: false, value: 0.1 },
        { name: 'c', type: 'boolean', array: false, value: false },
        { name: 'd', type: 'string', array: false, value: "'; DROP TABLE x; --" },
        { name: 'e', type: 'date', array: false, value: null },
      ]),
    ).toEqual(['9223372036854775807', '0.1', 'false', "'; DROP TABLE x; --", null]);
  });

  it('renders arrays as literals in which quotes, commas, braces and backslashes stay data', () => {
    expect(
      toPostgresValues([{ name: 'a', type: 'string', array: true, value: ['a,b', '"}{', 'c\\d', 'NULL'] }]),
    ).toEqual(['{"a,b","\\"}{","c\\\\d","NULL"}']);
    expect(toPostgresValues([{ name: 'a', type: 'integer', array: true, value: [] }])).toEqual(['{}']);
    expect(toPostgresValues([{ name: 'a', type: 'integer', array: true, value: [1, 2n] }])).toEqual([
      '{"1","2"}',
    ]);
  });
});
