// Typed ANSI/Trino literals: what each type renders to, that wrong values are refused at render
// time, and that no string can break out of its literal.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConnectorError } from './connector-error.js';
import type { BoundParam, SqlDialect } from './connector-plugin.js';
import type { ScalarParamType } from './param-types.js';
import { renderAnsiLiteral } from './sql-literal.js';
import { compileTemplate, parseTemplate } from './sql-template.js';

function render(type: ScalarParamType, value: BoundParam['value'], array = false): string {
  return renderAnsiLiteral({ name: 'p', type, array, value });
}

function refused(type: ScalarParamType, value: unknown, array = false): string {
  try {
    renderAnsiLiteral({ name: 'p', type, array, value: value as BoundParam['value'] });
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    expect((error as ConnectorError).code).toBe('PARAM_INVALID');
    return (error as ConnectorError).message;
  }
  throw new Error(`expected ${String(value)} to be refused as ${type}`);
}

/**
 * A tiny reader for the two string literal forms the renderer emits: `'…'` with `''` for a quote,
 * and `U&'…'` with `\XXXX` / `\+XXXXXX` escapes and `\\`. It must consume the whole text, so any
 * character that escaped the literal makes it throw.
 */
function readStringLiteral(sql: string): string {
  const unicode = sql.startsWith("U&'");
  let i = unicode ? 3 : 1;
  if (!unicode && sql[0] !== "'") throw new Error(`not a string literal: ${sql}`);
  let out = '';
  for (;;) {
    if (i >= sql.length) throw new Error('unterminated literal');
    const c = sql[i]!;
    if (c === "'") {
      if (sql[i + 1] === "'") {
        out += "'";
        i += 2;
        continue;
      }
      if (i + 1 !== sql.length) throw new Error(`text after the literal: ${sql.slice(i + 1)}`);
      return out;
    }
    if (unicode && c === '\\') {
      if (sql[i + 1] === '\\') {
        out += '\\';
        i += 2;
      } else if (sql[i + 1] === '+') {
        out += String.fromCodePoint(Number.parseInt(sql.slice(i + 2, i + 8), 16));
        i += 8;
      } else {
        const hex = sql.slice(i + 1, i + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new Error(`bad escape ${hex}`);
        out += String.fromCharCode(Number.parseInt(hex, 16));
        i += 5;
      }
      continue;
    }
    out += c;
    i++;
  }
}

describe('renderAnsiLiteral', () => {
  it('renders typed NULLs, for scalars and arrays', () => {
    expect(render('integer', null)).toBe('CAST(NULL AS BIGINT)');
    expect(render('string', null)).toBe('CAST(NULL AS VARCHAR)');
    expect(render('timestamp', null)).toBe('CAST(NULL AS TIMESTAMP(3) WITH TIME ZONE)');
    expect(render('date', null, true)).toBe('CAST(NULL AS ARRAY(DATE))');
  });

  it('renders integers as digits, negatives parenthesized so `-` never meets `-`', () => {
    expect(render('integer', 42)).toBe('42');
    expect(render('integer', -5)).toBe('(-5)');
    expect(render('integer', 9223372036854775807n)).toBe('9223372036854775807');
    expect(render('integer', -9223372036854775808n)).toBe('(-9223372036854775807 - 1)');
  });

  it('renders numbers as DOUBLE literals', () => {
    expect(render('number', 1.5)).toBe("DOUBLE '1.5'");
    expect(render('number', -2e-7)).toBe("DOUBLE '-2e-7'");
    expect(render('number', 1e21)).toBe("DOUBLE '1e+21'");
  });

  it('renders booleans, dates, timestamps and arrays', () => {
    expect(render('boolean', true)).toBe('TRUE');
    expect(render('boolean', false)).toBe('FALSE');
    expect(render('date', '2024-01-31')).toBe("DATE '2024-01-31'");
    expect(render('timestamp', '2024-01-31T12:00:00.000Z')).toBe("TIMESTAMP '2024-01-31 12:00:00.000 UTC'");
    expect(render('string', ['a', "b'c"], true)).toBe("ARRAY['a', 'b''c']");
    expect(render('integer', [], true)).toBe('CAST(ARRAY[] AS ARRAY(BIGINT))');
    expect(render('enum', 'EU')).toBe("'EU'");
  });

  it('renders strings with doubled quotes, and control characters as unicode escapes', () => {
    expect(render('string', "O'Brien")).toBe("'O''Brien'");
    expect(render('string', "a\nb\\c'")).toBe("U&'a\\000ab\\\\c'''");
    expect(render('string', '')).toBe("''");
  });

  it('re-checks every value against its declared type', () => {
    expect(refused('integer', 1.5)).toMatch(/expected a 64-bit integer/);
    expect(refused('integer', '1')).toMatch(/expected a 64-bit integer/);
    expect(refused('integer', 2n ** 63n)).toMatch(/expected a 64-bit integer/);
    expect(refused('number', Number.NaN)).toMatch(/finite/);
    expect(refused('number', Number.POSITIVE_INFINITY)).toMatch(/finite/);
    expect(refused('number', '1')).toMatch(/finite/);
    expect(refused('boolean', 'true')).toMatch(/true or false/);
    expect(refused('date', '2024-02-30')).toMatch(/YYYY-MM-DD/);
    expect(refused('date', "2024-01-01' OR 1=1 --")).toMatch(/YYYY-MM-DD/);
    expect(refused('timestamp', '2024-01-31T12:00:00+02:00')).toMatch(/UTC timestamp/);
    expect(refused('timestamp', '2024-01-31T24:00:00.000Z')).toMatch(/UTC timestamp/);
    expect(refused('string', 5)).toMatch(/expected a string/);
    expect(refused('string', 'a\u0000b')).toMatch(/NUL/);
    expect(refused('string', 'a\ud800b')).toMatch(/not valid Unicode/);
    expect(refused('string', 'x', true)).toMatch(/expected an array/);
    expect(refused('string', [null], true)).toMatch(/expected a string/);
    expect(refused('string', [['a']], true)).toMatch(/expected a string/);
    expect(refused('bogus' as ScalarParamType, 1)).toMatch(/unknown type/);
  });

  it('an arbitrary string reads back exactly from its literal: it cannot break out', () => {
    const text = fc.string({
      unit: fc.oneof(
        fc.constantFrom(
          "'",
          "''",
          '\\',
          '\\u0041',
          '--',
          '/*',
          '\n',
          '\r',
          '\u2028',
          '\u0085',
          'U&',
          ':x',
          '$1',
        ),
        fc.string({ unit: 'binary', maxLength: 1 }),
      ),
      maxLength: 60,
    });
    fc.assert(
      fc.property(text, (s) => {
        fc.pre(!s.includes('\u0000'));
        expect(readStringLiteral(render('string', s))).toBe(s);
      }),
      { numRuns: 1000 },
    );
  });

  it('as a Trino dialect, leaves no placeholder or unbalanced quote in the compiled SQL', () => {
    const trino: SqlDialect = { placeholders: 'literal', renderLiteral: renderAnsiLiteral };
    const template = parseTemplate(
      "SELECT * FROM t WHERE a = :s AND b IN (SELECT * FROM UNNEST(:l)) -- ':s'",
      trino,
    );
    const text = fc.string({
      unit: fc.oneof(
        fc.constantFrom("'", '\\', '--', '/*', ':x', '\n'),
        fc.string({ unit: 'binary', maxLength: 1 }),
      ),
    });
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 3 }), (s, l) => {
        fc.pre(!s.includes('\u0000') && !l.some((e) => e.includes('\u0000')));
        const { sql } = compileTemplate(template, trino, {
          s: { type: 'string', array: false, value: s },
          l: { type: 'string', array: true, value: l },
        });
        // Re-scanning the compiled SQL must find every value inside a literal: no `:x` escaped
        // into code, and the comment that ends the template is still a comment.
        expect(parseTemplate(sql, trino).placeholders).toEqual([]);
        expect(sql.endsWith(" -- ':s'")).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
