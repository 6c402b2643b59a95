// The template scanner and compiler: which `:name`s are placeholders in each dialect, what every
// placeholder style produces, and that compiled SQL text never depends on caller values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConnectorError } from './connector-error.js';
import type { SqlDialect } from './connector-plugin.js';
import type { ParamValues, ScalarParamType, TypedValue } from './param-types.js';
import { renderAnsiLiteral } from './sql-literal.js';
import { compileTemplate, parseTemplate } from './sql-template.js';

const PG_CASTS: Readonly<Record<ScalarParamType, string>> = {
  integer: 'int8',
  number: 'float8',
  string: 'text',
  enum: 'text',
  boolean: 'bool',
  date: 'date',
  timestamp: 'timestamptz',
};
const ansi: SqlDialect = { placeholders: 'positional' };
const postgres: SqlDialect = {
  placeholders: 'numbered',
  dollarQuotes: true,
  castFor: (type, array) => `::${PG_CASTS[type]}${array ? '[]' : ''}`,
};
const mysql: SqlDialect = {
  placeholders: 'positional',
  backslashEscapes: true,
  backtickIdentifiers: true,
  hashComments: true,
};
const bigquery: SqlDialect = { placeholders: 'named', backtickIdentifiers: true };
const trino: SqlDialect = { placeholders: 'literal', renderLiteral: renderAnsiLiteral };

const names = (sql: string, dialect: SqlDialect = ansi) => parseTemplate(sql, dialect).placeholders;

function v(type: ScalarParamType, value: TypedValue['value'], array = false): TypedValue {
  return { type, array, value };
}

function errorOf(fn: () => unknown): ConnectorError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    return error as ConnectorError;
  }
  throw new Error('expected a ConnectorError');
}

describe('parseTemplate', () => {
  it('finds placeholders in order, with distinct names in order of first use', () => {
    const t = parseTemplate(
      'SELECT * FROM s WHERE year = :year AND (:region IS NULL OR region = :region)',
      ansi,
    );
    expect(t.placeholders).toEqual(['year', 'region', 'region']);
    expect(t.names).toEqual(['year', 'region']);
    expect(t.chunks).toEqual(['SELECT * FROM s WHERE year = ', ' AND (', ' IS NULL OR region = ', ')']);
  });

  it('ignores :name inside single-quoted strings, with doubled quotes', () => {
    expect(names("SELECT ':a', 'it''s :b', :c")).toEqual(['c']);
    expect(names("SELECT '''' || :a")).toEqual(['a']);
  });

  it('handles backslash escapes only where the dialect has them', () => {
    // MySQL: \' does not close the string, so :b is still inside it.
    expect(names("SELECT 'x\\' :b', :c", mysql)).toEqual(['c']);
    // ANSI: the backslash is an ordinary character and \' closes the string.
    expect(names("SELECT 'x\\', :b, ':c'", ansi)).toEqual(['b']);
    // Postgres E'' strings have backslash escapes.
    expect(names("SELECT E'x\\' :b', :c", postgres)).toEqual(['c']);
  });

  it('ignores double-quoted and backtick identifiers', () => {
    expect(names('SELECT ":a", """:b""" , :c')).toEqual(['c']);
    expect(names('SELECT `:a`, `x``:b`, :c', mysql)).toEqual(['c']);
    // Without backtick identifiers a backtick is just a character.
    expect(names('SELECT `:a`', ansi)).toEqual(['a']);
    // MySQL double-quoted strings honour backslashes.
    expect(names('SELECT "a\\" :b", :c', mysql)).toEqual(['c']);
  });

  it('ignores comments: --, # (MySQL), and /* */ (nested in Postgres)', () => {
    expect(names('SELECT 1 -- :a\n, :b')).toEqual(['b']);
    expect(names('SELECT 1 -- :a')).toEqual([]);
    expect(names('SELECT 1 # :a\n, :b', mysql)).toEqual(['b']);
    expect(names('SELECT 1 # :a\n, :b', postgres)).toEqual(['a', 'b']);
    expect(names('SELECT /* :a */ :b')).toEqual(['b']);
    expect(names('SELECT /* /* :a */ :b */ :c', postgres)).toEqual(['c']);
    expect(names('SELECT /* /* */ :b', mysql)).toEqual(['b']);
  });

  it('follows MySQL comment rules: "--" needs a space, /*! … */ runs', () => {
    expect(names('SELECT 1--:a', mysql)).toEqual(['a']);
    expect(names('SELECT 1-- :a', mysql)).toEqual([]);
    expect(names('SELECT /*! :a */ 1', mysql)).toEqual(['a']);
  });

  it('ignores dollar-quoted strings in Postgres only', () => {
    expect(names('SELECT $$ :a $$, $fn$ :b $x$ $fn$, :c', postgres)).toEqual(['c']);
    expect(names('SELECT a$b, :c', postgres)).toEqual(['c']);
  });

  it('treats :: as a cast and :name::type as a placeholder followed by a cast', () => {
    const t = parseTemplate('SELECT a::int, :n::int8, x:::y', postgres);
    expect(t.placeholders).toEqual(['n', 'y']);
    expect(t.chunks[1]).toBe('::int8, x::');
  });

  it('does not take :name right after a word character (Snowflake paths, slices)', () => {
    expect(names('SELECT src:field, arr[1:2], :ok')).toEqual(['ok']);
  });

  it('throws PARAM_INVALID for unterminated strings, identifiers and comments', () => {
    for (const [sql, dialect] of [
      ["SELECT 'abc", ansi],
      ["SELECT 'it''", ansi],
      ["SELECT 'a\\'", mysql],
      ['SELECT "abc', ansi],
      ['SELECT `abc', mysql],
      ['SELECT /* abc', ansi],
      ['SELECT /* /* */', postgres],
      ['SELECT $q$ abc', postgres],
    ] as const) {
      expect(errorOf(() => parseTemplate(sql, dialect)).code, sql).toBe('PARAM_INVALID');
    }
  });

  it('refuses native placeholders written by hand, which would shift the bindings', () => {
    expect(errorOf(() => parseTemplate('SELECT $1, :a', postgres)).code).toBe('PARAM_INVALID');
    expect(errorOf(() => parseTemplate('SELECT ?, :a', mysql)).code).toBe('PARAM_INVALID');
    expect(errorOf(() => parseTemplate('SELECT @a, :a', bigquery)).code).toBe('PARAM_INVALID');
    // Where they are not placeholders they stay allowed.
    expect(names("SELECT '?', data ? 'k', @@dataset_id, :a", postgres)).toEqual(['a']);
    expect(names('SELECT @@version, `@x`, :a', bigquery)).toEqual(['a']);
  });
});

describe('compileTemplate', () => {
  const sql = 'SELECT * FROM t WHERE y = :year AND (:region IS NULL OR r = :region) AND id IN (:ids)';
  const params: ParamValues = {
    year: v('integer', 2024),
    region: v('string', null),
    ids: v('integer', [1, 2, 3], true),
    unused: v('string', 'ignored'),
  };

  it('numbered: $n per occurrence with the dialect cast; arrays bound whole', () => {
    const q = compileTemplate(parseTemplate(sql, postgres), postgres, params);
    expect(q.sql).toBe(
      'SELECT * FROM t WHERE y = $1::int8 AND ($2::text IS NULL OR r = $3::text) AND id IN ($4::int8[])',
    );
    expect(q.params).toEqual([
      { name: 'year', type: 'integer', array: false, value: 2024 },
      { name: 'region', type: 'string', array: false, value: null },
      { name: 'region', type: 'string', array: false, value: null },
      { name: 'ids', type: 'integer', array: true, value: [1, 2, 3] },
    ]);
  });

  it('numbered without castFor leaves bare $n', () => {
    const duck: SqlDialect = { placeholders: 'numbered' };
    expect(compileTemplate(parseTemplate('SELECT :a, :a', duck), duck, { a: v('integer', 1) }).sql).toBe(
      'SELECT $1, $2',
    );
  });

  it('positional: ? per occurrence, arrays expanded element by element', () => {
    const q = compileTemplate(parseTemplate(sql, mysql), mysql, params);
    expect(q.sql).toBe('SELECT * FROM t WHERE y = ? AND (? IS NULL OR r = ?) AND id IN (?, ?, ?)');
    expect(q.params.map((p) => [p.name, p.array, p.value])).toEqual([
      ['year', false, 2024],
      ['region', false, null],
      ['region', false, null],
      ['ids', false, 1],
      ['ids', false, 2],
      ['ids', false, 3],
    ]);
  });

  it('positional: an empty or NULL array becomes NULL', () => {
    const t = parseTemplate('SELECT 1 WHERE id IN (:ids)', mysql);
    for (const value of [[], null]) {
      const q = compileTemplate(t, mysql, { ids: v('integer', value, true) });
      expect(q).toEqual({ sql: 'SELECT 1 WHERE id IN (NULL)', params: [] });
    }
  });

  it('positional with castFor: each ? (and each expanded element) gets its type cast', () => {
    const casting: SqlDialect = {
      placeholders: 'positional',
      castFor: (type) => (type === 'date' ? '::DATE' : undefined),
    };
    const t = parseTemplate('SELECT 1 WHERE d = :d AND id IN (:ids) AND day IN (:days) LIMIT :n', casting);
    const q = compileTemplate(t, casting, {
      d: v('date', null),
      ids: v('integer', [1, 2], true),
      days: v('date', ['2024-01-01', '2024-01-02'], true),
      n: v('integer', 5),
    });
    expect(q.sql).toBe('SELECT 1 WHERE d = ?::DATE AND id IN (?, ?) AND day IN (?::DATE, ?::DATE) LIMIT ?');
    expect(q.params.map((p) => p.value)).toEqual([null, 1, 2, '2024-01-01', '2024-01-02', 5]);
  });

  it('positional with wholeArrays: one ? per array occurrence, holding the whole array or NULL', () => {
    const whole: SqlDialect = { placeholders: 'positional', wholeArrays: true };
    const t = parseTemplate('SELECT :ids AS v WHERE contains(:ids, id) AND k = :k', whole);
    for (const value of [[1, 2, 3], [7], [], null]) {
      const q = compileTemplate(t, whole, { ids: v('integer', value, true), k: v('string', 'a') });
      expect(q.sql).toBe('SELECT ? AS v WHERE contains(?, id) AND k = ?');
      expect(q.params).toEqual([
        { name: 'ids', type: 'integer', array: true, value },
        { name: 'ids', type: 'integer', array: true, value },
        { name: 'k', type: 'string', array: false, value: 'a' },
      ]);
    }
  });

  it('named: @name per occurrence, one bound param per distinct name', () => {
    const q = compileTemplate(parseTemplate(sql, bigquery), bigquery, params);
    expect(q.sql).toBe(
      'SELECT * FROM t WHERE y = @year AND (@region IS NULL OR r = @region) AND id IN (@ids)',
    );
    expect(q.params.map((p) => p.name)).toEqual(['year', 'region', 'ids']);
    expect(q.params[2]).toEqual({ name: 'ids', type: 'integer', array: true, value: [1, 2, 3] });
  });

  it('literal: renders values with the dialect and binds nothing', () => {
    const q = compileTemplate(parseTemplate(sql, trino), trino, {
      ...params,
      region: v('string', "O'Brien"),
    });
    expect(q.sql).toBe(
      "SELECT * FROM t WHERE y = 2024 AND ('O''Brien' IS NULL OR r = 'O''Brien') AND id IN (ARRAY[1, 2, 3])",
    );
    expect(q.params).toEqual([]);
  });

  it('literal: keeps a rendered literal from fusing with its neighbours', () => {
    const t = parseTemplate("SELECT 1-:n, 'a':s", trino);
    const q = compileTemplate(t, trino, { n: v('integer', -5), s: v('string', 'b') });
    expect(q.sql).toBe("SELECT 1- (-5), 'a' 'b'");
  });

  it('literal without renderLiteral is a CONFIG_INVALID error', () => {
    const broken: SqlDialect = { placeholders: 'literal' };
    const error = errorOf(() =>
      compileTemplate(parseTemplate('SELECT :a', broken), broken, { a: v('integer', 1) }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
  });

  it('names every missing param', () => {
    const error = errorOf(() =>
      compileTemplate(parseTemplate(sql, postgres), postgres, { year: v('integer', 1) }),
    );
    expect(error.code).toBe('PARAM_INVALID');
    expect(error.message).toBe('missing value for :region, :ids');
    expect(error.details).toEqual([
      { param: 'region', message: 'has no value' },
      { param: 'ids', message: 'has no value' },
    ]);
  });

  it('refuses a value whose shape contradicts its array flag', () => {
    const t = parseTemplate('SELECT :a', mysql);
    expect(errorOf(() => compileTemplate(t, mysql, { a: v('integer', 1, true) })).code).toBe('PARAM_INVALID');
    expect(errorOf(() => compileTemplate(t, mysql, { a: v('integer', [1]) })).code).toBe('PARAM_INVALID');
  });

  it('re-scans a template parsed with different lexical rules than the dialect it compiles for', () => {
    // Parsed as ANSI, `#` was an ordinary character and :a looked like a placeholder; in MySQL it is a comment.
    const t = parseTemplate('SELECT 1 # :a\n, :b', ansi);
    expect(t.names).toEqual(['a', 'b']);
    const q = compileTemplate(t, mysql, { b: v('integer', 1) });
    expect(q).toEqual({
      sql: 'SELECT 1 # :a\n, ?',
      params: [{ name: 'b', type: 'integer', array: false, value: 1 }],
    });
  });

  it('parses without a dialect using ANSI rules, and still refuses hand-written placeholders at compile', () => {
    const t = parseTemplate('SELECT :a, ?');
    expect(t.names).toEqual(['a']);
    expect(compileTemplate(t, trino, { a: v('integer', 1) }).sql).toBe('SELECT 1, ?');
    expect(errorOf(() => compileTemplate(t, mysql, { a: v('integer', 1) })).code).toBe('PARAM_INVALID');
  });

  it('refuses NUL characters even from callers that skipped validation', () => {
    const t = parseTemplate('SELECT :s', postgres);
    const error = errorOf(() => compileTemplate(t, postgres, { s: v('string', 'a\u0000b') }));
    expect(error.details).toEqual([{ param: 's', message: 'must not contain NUL characters' }]);
    const list = { s: v('string', ['ok', '\u0000'], true) };
    expect(errorOf(() => compileTemplate(t, postgres, list)).code).toBe('PARAM_INVALID');
  });

  it('keeps :: casts and text outside placeholders byte for byte', () => {
    const t = parseTemplate('SELECT :n::int8, \'lit :x\', "col" -- :c\nFROM t', postgres);
    expect(compileTemplate(t, postgres, { n: v('integer', 1) }).sql).toBe(
      'SELECT $1::int8::int8, \'lit :x\', "col" -- :c\nFROM t',
    );
  });
});

describe('compiled SQL text never depends on values', () => {
  const template =
    "SELECT * FROM t WHERE a = :s AND b IN (:list) AND c = ':s' -- :s\n AND (:s IS NULL OR d = :n)";
  const hostile = fc.string({
    unit: fc.oneof(
      fc.constantFrom("'", '"', '`', '\\', '--', '/*', '*/', ':x', '$1', '$$', '?', '@s', '#', '\n', ';'),
      fc.string({ unit: 'binary', maxLength: 1 }),
    ),
    maxLength: 40,
  });

  for (const dialect of [postgres, mysql, bigquery]) {
    it(`${dialect.placeholders}: same text for arbitrary strings; values travel as params`, () => {
      const parsed = parseTemplate(template, dialect);
      const compile = (s: string | null, list: readonly string[], n: number) =>
        compileTemplate(parsed, dialect, {
          s: v('string', s),
          list: v('string', list, true),
          n: v('integer', n),
        });
      const reference = compile('plain', ['a', 'b'], 1).sql;
      fc.assert(
        fc.property(hostile, fc.tuple(hostile, hostile), fc.integer(), (s, list, n) => {
          // NUL is refused outright (tested above); everything else must bind.
          fc.pre(![s, ...list].some((e) => e.includes('\u0000')));
          const q = compile(s, list, n);
          expect(q.sql).toBe(reference);
          expect(q.params.some((p) => p.value === s)).toBe(true);
        }),
        { numRuns: 300 },
      );
    });
  }
});

describe('compileTemplate reuses SQL per template and param shape', () => {
  it('recompiles when a param changes type, and binds the new values', () => {
    const template = parseTemplate('SELECT * FROM t WHERE a = :a AND b = :b', postgres);
    const first = compileTemplate(template, postgres, { a: v('integer', 1), b: v('string', 'x') });
    const again = compileTemplate(template, postgres, { a: v('integer', 2), b: v('string', 'y') });
    expect(again.sql).toBe(first.sql);
    expect(again.params.map((p) => p.value)).toEqual([2, 'y']);
    const retyped = compileTemplate(template, postgres, { a: v('date', '2024-01-01'), b: v('string', 'y') });
    expect(retyped.sql).toBe('SELECT * FROM t WHERE a = $1::date AND b = $2::text');
    const arrayed = compileTemplate(template, postgres, {
      a: v('integer', [1, 2], true),
      b: v('string', null),
    });
    expect(arrayed.sql).toBe('SELECT * FROM t WHERE a = $1::int8[] AND b = $2::text');
    expect(arrayed.params.map((p) => p.value)).toEqual([[1, 2], null]);
  });

  it('recompiles positional SQL when an array changes length', () => {
    const template = parseTemplate('SELECT * FROM t WHERE id IN (:ids) AND k = :k', mysql);
    const two = compileTemplate(template, mysql, { ids: v('integer', [1, 2], true), k: v('string', 'a') });
    expect(two.sql).toBe('SELECT * FROM t WHERE id IN (?, ?) AND k = ?');
    const three = compileTemplate(template, mysql, {
      ids: v('integer', [3, 4, 5], true),
      k: v('string', 'b'),
    });
    expect(three.sql).toBe('SELECT * FROM t WHERE id IN (?, ?, ?) AND k = ?');
    expect(three.params.map((p) => p.value)).toEqual([3, 4, 5, 'b']);
    const none = compileTemplate(template, mysql, { ids: v('integer', [], true), k: v('string', 'c') });
    expect(none.sql).toBe('SELECT * FROM t WHERE id IN (NULL) AND k = ?');
    expect(none.params.map((p) => p.value)).toEqual(['c']);
    const again = compileTemplate(template, mysql, {
      ids: v('integer', [6, 7, 8], true),
      k: v('string', 'd'),
    });
    expect(again.sql).toBe(three.sql);
    expect(again.params.map((p) => p.value)).toEqual([6, 7, 8, 'd']);
  });

  it('keeps one bound param per name for named dialects on the reuse path', () => {
    const template = parseTemplate('SELECT 1 FROM t WHERE a = :a OR b = :a', bigquery);
    compileTemplate(template, bigquery, { a: v('integer', 1) });
    const reused = compileTemplate(template, bigquery, { a: v('integer', 9) });
    expect(reused.sql).toBe('SELECT 1 FROM t WHERE a = @a OR b = @a');
    expect(reused.params).toEqual([{ name: 'a', type: 'integer', array: false, value: 9 }]);
  });

  it('still refuses NUL characters and wrong shapes on the reuse path', () => {
    const template = parseTemplate('SELECT :s AS s', postgres);
    compileTemplate(template, postgres, { s: v('string', 'ok') });
    expect(() => compileTemplate(template, postgres, { s: v('string', 'a\u0000b') })).toThrow(ConnectorError);
    expect(() => compileTemplate(template, postgres, { s: v('string', ['a'], false) })).toThrow(
      ConnectorError,
    );
  });
});
