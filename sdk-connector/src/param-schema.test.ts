// Param schema checks, caller validation and query-string coercion, as an owner and a caller see them.
import { describe, expect, it } from 'vitest';
import { ConnectorError } from './connector-error.js';
import {
  MAX_PATTERN_PROGRAM_SIZE,
  MAX_PATTERN_WORK,
  MAX_SCHEMA_PATTERN_SIZE,
  MAX_STRING_LENGTH,
} from './owner-pattern.js';
import { checkParamSchema, coerceQueryParams, parseTimestamp, validateParams } from './param-schema.js';
import type { ParamIssue, ParamSchema, ParamValidation } from './param-types.js';

const salesSchema = checkParamSchema({
  year: { type: 'integer', required: true, min: 2000, max: 2100 },
  region: { type: 'string', pattern: '^[A-Z]{2}$' },
});

function schemaProblems(schema: unknown): readonly { param?: string; message: string }[] {
  try {
    checkParamSchema(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    expect((error as ConnectorError).code).toBe('PARAM_INVALID');
    return (error as ConnectorError).details;
  }
  throw new Error('expected the schema to be refused');
}

function issuesOf(result: ParamValidation): readonly ParamIssue[] {
  if (result.ok) throw new Error(`expected issues, got ${JSON.stringify(result.values)}`);
  return result.issues;
}

function valuesOf(result: ParamValidation) {
  if (!result.ok) throw new Error(`expected success, got ${JSON.stringify(result.issues)}`);
  return result.values;
}

describe('checkParamSchema', () => {
  it('accepts the documented sales-by-region schema and freezes it', () => {
    expect(salesSchema.year).toEqual({ type: 'integer', required: true, min: 2000, max: 2100 });
    expect(Object.isFrozen(salesSchema)).toBe(true);
    expect(checkParamSchema(undefined)).toEqual({});
    expect(checkParamSchema(null)).toEqual({});
  });

  it('lists every problem at once', () => {
    const problems = schemaProblems({
      'bad-name': { type: 'string' },
      a: { type: 'float' },
      b: { type: 'integer', min: 10, max: 1 },
      c: { type: 'string', pattern: '([a-z' },
      d: { type: 'enum' },
      e: { type: 'integer', default: 'x' },
      f: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
      g: { type: 'string', colour: 'red' },
      h: { type: 'string', min: 1 },
      i: 'string',
      j: {},
    });
    expect(problems).toEqual([
      {
        param: 'bad-name',
        message: 'name must start with a letter or _ and hold only letters, digits and _',
      },
      { param: 'a', message: 'unknown type "float"' },
      { param: 'b', message: 'min must not be greater than max' },
      { param: 'c', message: 'pattern ([a-z is not valid RE2 syntax: missing closing ]: `[a-z`' },
      { param: 'd', message: 'values must list at least one string' },
      { param: 'e', message: 'default must be an integer' },
      { param: 'f', message: 'items: arrays of arrays are not supported' },
      { param: 'g', message: 'unknown key colour' },
      { param: 'h', message: 'min does not apply here' },
      { param: 'i', message: 'spec must be an object with a type' },
      { param: 'j', message: 'type is missing' },
    ]);
  });

  it('refuses defaults that fail their own spec, including array elements and patterns', () => {
    expect(schemaProblems({ y: { type: 'integer', min: 1, max: 5, default: 9 } })).toEqual([
      { param: 'y', message: 'default must be an integer between 1 and 5' },
    ]);
    expect(schemaProblems({ r: { type: 'string', pattern: '^[A-Z]{2}$', default: 'eu' } })).toEqual([
      { param: 'r', message: 'default must match the pattern ^[A-Z]{2}$' },
    ]);
    expect(schemaProblems({ t: { type: 'array', items: { type: 'integer' }, default: [1, 'x'] } })).toEqual([
      { param: 't', message: 'default[1] must be an integer' },
    ]);
  });

  it('refuses bad bounds, lengths, enum values and keys that belong elsewhere', () => {
    expect(
      schemaProblems({
        a: { type: 'string', minLength: 5, maxLength: 2 },
        b: { type: 'string', minLength: 2000 },
        c: { type: 'enum', values: ['x', 'x'] },
        d: { type: 'enum', values: [] },
        e: { type: 'date', min: '2024-02-30' },
        f: { type: 'date', min: '2024-12-01', max: '2024-01-01' },
        g: { type: 'array', items: { type: 'string', required: true } },
        h: { type: 'array', items: { type: 'string' }, minItems: -1 },
        i: { type: 'integer', min: 1.5 },
        k: { type: 'array' },
        l: { type: 'boolean', required: 'yes' },
      }),
    ).toEqual([
      { param: 'a', message: 'minLength must not be greater than maxLength (2)' },
      { param: 'b', message: 'minLength must not be greater than maxLength (1000)' },
      { param: 'c', message: 'values must not repeat' },
      { param: 'd', message: 'values must list at least one string' },
      { param: 'e', message: 'min must be a date (YYYY-MM-DD)' },
      { param: 'f', message: 'min must not be greater than max' },
      { param: 'g', message: 'items: required does not apply here' },
      { param: 'h', message: 'minItems must be a whole number ≥ 0' },
      { param: 'i', message: 'min must be an integer' },
      { param: 'k', message: 'items: spec must be an object with a type' },
      { param: 'k', message: 'items is missing' },
      { param: 'l', message: 'required must be true or false' },
    ]);
  });

  it('refuses a schema that is not a map', () => {
    expect(schemaProblems([{ type: 'string' }])).toEqual([
      { message: 'params must be a map of parameter name to spec' },
    ]);
  });

  it('normalizes YAML Date objects in bounds and defaults to ISO text', () => {
    const schema = checkParamSchema({
      day: { type: 'date', min: new Date('2024-01-01T00:00:00Z'), default: new Date('2024-03-05T00:00:00Z') },
      at: { type: 'timestamp', max: new Date('2030-01-01T00:00:00Z') },
    });
    expect(schema.day).toEqual({ type: 'date', min: '2024-01-01', default: '2024-03-05' });
    expect(schema.at).toEqual({ type: 'timestamp', max: '2030-01-01T00:00:00.000Z' });
  });

  it('treats __proto__ as an ordinary param name, never as a prototype', () => {
    const schema = checkParamSchema(JSON.parse('{"__proto__": {"type": "integer"}}'));
    expect(Object.keys(schema)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
  });
});

describe('validateParams', () => {
  it('types the documented call and turns an omitted optional param into a typed NULL', () => {
    expect(valuesOf(validateParams(salesSchema, { year: 2024 }))).toEqual({
      year: { type: 'integer', array: false, value: 2024 },
      region: { type: 'string', array: false, value: null },
    });
    expect(valuesOf(validateParams(salesSchema, { year: 2024, region: null })).region).toEqual({
      type: 'string',
      array: false,
      value: null,
    });
  });

  it('returns every issue at once with short human messages', () => {
    expect(issuesOf(validateParams(salesSchema, { year: 1999, region: 'eu', extra: 1 }))).toEqual([
      { param: 'extra', message: 'is not a parameter' },
      { param: 'year', message: 'must be an integer between 2000 and 2100' },
      { param: 'region', message: 'must match the pattern ^[A-Z]{2}$' },
    ]);
    expect(issuesOf(validateParams(salesSchema, {}))).toEqual([{ param: 'year', message: 'is required' }]);
    expect(issuesOf(validateParams(salesSchema, { year: null }))).toEqual([
      { param: 'year', message: 'must not be null' },
    ]);
  });

  it('applies defaults', () => {
    const schema = checkParamSchema({ limit: { type: 'integer', min: 1, max: 100, default: 10 } });
    expect(valuesOf(validateParams(schema, {})).limit).toEqual({ type: 'integer', array: false, value: 10 });
    expect(valuesOf(validateParams(schema, { limit: 5 })).limit?.value).toBe(5);
  });

  describe('integers', () => {
    const schema = checkParamSchema({ n: { type: 'integer' } });
    const check = (n: unknown) => validateParams(schema, { n });

    it('accepts safe JSON integers and int64 decimal strings, bigint beyond 2^53', () => {
      expect(valuesOf(check(-42)).n?.value).toBe(-42);
      expect(valuesOf(check('123')).n?.value).toBe(123);
      expect(valuesOf(check('9007199254740993')).n?.value).toBe(9007199254740993n);
      expect(valuesOf(check('-9223372036854775808')).n?.value).toBe(-9223372036854775808n);
      expect(valuesOf(check('9223372036854775807')).n?.value).toBe(9223372036854775807n);
    });

    it.each([
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      1e21,
      '1e3',
      '1.0',
      ' 1',
      '0x10',
      '9223372036854775808',
      '-9223372036854775809',
      '',
      true,
      [1],
    ])('refuses %s', (n) => {
      expect(issuesOf(check(n))).toEqual([{ param: 'n', message: 'must be an integer' }]);
    });

    it('compares bigint values with bounds exactly', () => {
      const bounded = checkParamSchema({ n: { type: 'integer', max: 9007199254740991 } });
      expect(issuesOf(validateParams(bounded, { n: '9007199254740993' }))).toEqual([
        { param: 'n', message: 'must be an integer of at most 9007199254740991' },
      ]);
    });
  });

  it('numbers must be finite JSON numbers within bounds', () => {
    const schema = checkParamSchema({ x: { type: 'number', min: 0 } });
    expect(valuesOf(validateParams(schema, { x: 2.5 })).x?.value).toBe(2.5);
    expect(issuesOf(validateParams(schema, { x: -1 }))).toEqual([
      { param: 'x', message: 'must be a number of at least 0' },
    ]);
    expect(issuesOf(validateParams(schema, { x: '2.5' }))[0]?.message).toBe('must be a number of at least 0');
    expect(issuesOf(validateParams(schema, { x: Number.NaN }))).toHaveLength(1);
  });

  it('booleans are true or false only', () => {
    const schema = checkParamSchema({ b: { type: 'boolean' } });
    expect(valuesOf(validateParams(schema, { b: false })).b?.value).toBe(false);
    for (const b of ['true', 1, 0]) {
      expect(issuesOf(validateParams(schema, { b }))).toEqual([
        { param: 'b', message: 'must be true or false' },
      ]);
    }
  });

  it('dates must be real calendar dates and respect date bounds', () => {
    const schema = checkParamSchema({ d: { type: 'date', min: '2024-01-01', max: '2024-12-31' } });
    expect(valuesOf(validateParams(schema, { d: '2024-02-29' })).d?.value).toBe('2024-02-29');
    expect(issuesOf(validateParams(schema, { d: '2023-02-29' }))).toEqual([
      { param: 'd', message: 'must be a real calendar date' },
    ]);
    expect(issuesOf(validateParams(schema, { d: '2025-01-01' }))).toEqual([
      { param: 'd', message: 'must be a date (YYYY-MM-DD) between 2024-01-01 and 2024-12-31' },
    ]);
    expect(issuesOf(validateParams(schema, { d: '2024-1-5' }))[0]?.message).toMatch(/^must be a date/);
    expect(issuesOf(validateParams(schema, { d: '2024-01-05T00:00:00Z' }))).toHaveLength(1);
  });

  it('timestamps are normalized to UTC with milliseconds', () => {
    const schema = checkParamSchema({ t: { type: 'timestamp', min: '2024-01-01T00:00:00Z' } });
    const at = (t: string) => valuesOf(validateParams(schema, { t })).t?.value;
    expect(at('2024-01-31T12:00:00Z')).toBe('2024-01-31T12:00:00.000Z');
    expect(at('2024-01-31T12:00:00+02:00')).toBe('2024-01-31T10:00:00.000Z');
    expect(at('2024-01-31T23:30:00-0130')).toBe('2024-02-01T01:00:00.000Z');
    expect(at('2024-01-31T12:00')).toBe('2024-01-31T12:00:00.000Z');
    expect(at('2024-01-31 12:00:00.123456')).toBe('2024-01-31T12:00:00.123Z');
    expect(at('2024-06-01')).toBe('2024-06-01T00:00:00.000Z');
    expect(issuesOf(validateParams(schema, { t: '2023-12-31T23:59:59Z' }))).toEqual([
      { param: 't', message: 'must be an ISO-8601 timestamp on or after 2024-01-01T00:00:00.000Z' },
    ]);
    expect(issuesOf(validateParams(schema, { t: '2024-01-31T25:00:00Z' }))).toEqual([
      { param: 't', message: 'must be a real calendar timestamp' },
    ]);
    expect(issuesOf(validateParams(schema, { t: 'yesterday' }))).toHaveLength(1);
  });

  it('parseTimestamp refuses instants outside years 0001–9999', () => {
    expect(parseTimestamp('9999-12-31T23:00:00-02:00')).toBeUndefined();
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
  });

  it('strings: default max length 1,000 characters, code points counted, NUL refused', () => {
    const schema = checkParamSchema({
      s: { type: 'string' },
      short: { type: 'string', minLength: 2, maxLength: 3 },
    });
    expect(valuesOf(validateParams(schema, { s: 'x'.repeat(1000) })).s?.value).toHaveLength(1000);
    expect(issuesOf(validateParams(schema, { s: 'x'.repeat(1001) }))).toEqual([
      { param: 's', message: 'must be a string of at most 1000 characters' },
    ]);
    expect(valuesOf(validateParams(schema, { short: '😀😀😀' })).short?.value).toBe('😀😀😀');
    expect(issuesOf(validateParams(schema, { short: 'a' }))).toEqual([
      { param: 'short', message: 'must be a string of 2 to 3 characters' },
    ]);
    expect(issuesOf(validateParams(schema, { s: 'a\u0000b' }))).toEqual([
      { param: 's', message: 'must not contain NUL characters' },
    ]);
    expect(issuesOf(validateParams(schema, { s: 5 }))).toHaveLength(1);
  });

  it('patterns must match the whole value', () => {
    expect(issuesOf(validateParams(salesSchema, { year: 2024, region: 'XEUX' }))).toHaveLength(1);
    const alt = checkParamSchema({ r: { type: 'string', pattern: 'EU|US' } });
    expect(issuesOf(validateParams(alt, { r: 'EUROPE' }))).toHaveLength(1);
    expect(valuesOf(validateParams(alt, { r: 'US' })).r?.value).toBe('US');
  });

  it('patterns run on RE2: catastrophic ones answer, unsupported syntax is refused naming the param', () => {
    const schema = checkParamSchema({ code: { type: 'string', pattern: '(a+)+$', maxLength: 4096 } });
    expect(issuesOf(validateParams(schema, { code: `${'a'.repeat(31)}!` }))).toEqual([
      { param: 'code', message: 'must match the pattern (a+)+$' },
    ]);
    expect(issuesOf(validateParams(schema, { code: `${'a'.repeat(4095)}!` }))).toHaveLength(1);
    expect(valuesOf(validateParams(schema, { code: 'a'.repeat(4096) })).code?.value).toHaveLength(4096);
    const problems = schemaProblems({
      twice: { type: 'string', pattern: '(ab)\\1' },
      ahead: { type: 'array', items: { type: 'string', pattern: 'a(?=b)' } },
    });
    expect(problems).toEqual([
      {
        param: 'twice',
        message: expect.stringMatching(/^pattern \(ab\)\\1 uses a backreference, which RE2/),
      },
      {
        param: 'ahead',
        message: expect.stringMatching(/^items: pattern a\(\?=b\) uses lookahead or lookbehind/),
      },
    ]);
  });

  it(`caps string values at ${MAX_STRING_LENGTH} characters, whatever maxLength says`, () => {
    expect(schemaProblems({ long: { type: 'string', maxLength: MAX_STRING_LENGTH + 1 } })).toEqual([
      { param: 'long', message: `maxLength must be at most ${MAX_STRING_LENGTH}` },
    ]);
    const capped = checkParamSchema({ s: { type: 'string', maxLength: MAX_STRING_LENGTH } });
    expect(valuesOf(validateParams(capped, { s: 'x'.repeat(MAX_STRING_LENGTH) })).s?.value).toHaveLength(
      MAX_STRING_LENGTH,
    );
    // A schema that never went through checkParamSchema gets the cap too.
    const unchecked: ParamSchema = { s: { type: 'string', maxLength: 100_000 } };
    expect(issuesOf(validateParams(unchecked, { s: 'x'.repeat(MAX_STRING_LENGTH + 1) }))).toEqual([
      { param: 's', message: `must be a string of at most ${MAX_STRING_LENGTH} characters` },
    ]);
  });

  it("bounds the patterns of one schema together, and one call's pattern matching", () => {
    // [a-z]{990}x compiles to about 993 instructions: eleven of them pass the schema's 10,000.
    const params = Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [
        `p${i}`,
        { type: 'string', pattern: `[a-z]{990}x${i}`, maxLength: 200 },
      ]),
    );
    expect(schemaProblems(params)).toEqual([
      {
        param: 'p10',
        message: `the patterns of this analytic's params compile to more than ${MAX_SCHEMA_PATTERN_SIZE} instructions together`,
      },
    ]);
    // One value at the length cap against the largest pattern that allows it (64 instructions)
    // fits one call's budget; a second does not.
    const heavy = checkParamSchema({
      xs: {
        type: 'array',
        items: { type: 'string', pattern: '(?:.*a.{28}){2}', maxLength: MAX_STRING_LENGTH },
      },
    });
    const value = 'a'.repeat(MAX_STRING_LENGTH);
    expect(valuesOf(validateParams(heavy, { xs: [value] })).xs?.value).toEqual([value]);
    expect(issuesOf(validateParams(heavy, { xs: [value, value] }))).toEqual([
      {
        param: 'xs[1]',
        message: 'cannot be checked: this call sends more text to match against patterns than one call may',
      },
    ]);
  });

  it('refuses at deploy a pattern too large for its maxLength, saying what would fit', () => {
    // [a-z]{1,400} compiles to 801 instructions: 801 × 1,000 (the default maxLength) is too much.
    expect(schemaProblems({ word: { type: 'string', pattern: '[a-z]{1,400}' } })).toEqual([
      {
        param: 'word',
        message: `pattern compiles to 801 instructions, and matching a value of maxLength 1000 could take 801000 steps, more than ${MAX_PATTERN_WORK}: lower maxLength to 327 or simplify the pattern`,
      },
    ]);
    const fitted = checkParamSchema({ word: { type: 'string', pattern: '[a-z]{1,400}', maxLength: 327 } });
    expect(valuesOf(validateParams(fitted, { word: 'quarry' })).word?.value).toBe('quarry');
    expect(MAX_PATTERN_WORK).toBeLessThan(MAX_PATTERN_PROGRAM_SIZE * MAX_STRING_LENGTH);
  });

  it('enums accept listed values only', () => {
    const schema = checkParamSchema({ c: { type: 'enum', values: ['EU', 'US'] } });
    expect(valuesOf(validateParams(schema, { c: 'EU' })).c).toEqual({
      type: 'enum',
      array: false,
      value: 'EU',
    });
    expect(issuesOf(validateParams(schema, { c: 'eu' }))).toEqual([
      { param: 'c', message: 'must be one of: EU, US' },
    ]);
    expect(issuesOf(validateParams(schema, { c: 'EU\u0000' }))).toEqual([
      { param: 'c', message: 'must not contain NUL characters' },
    ]);
  });

  it('arrays: element issues name the index, sizes are bounded, default max 1,000 items', () => {
    const schema = checkParamSchema({
      ids: { type: 'array', items: { type: 'integer', min: 1 }, minItems: 1, maxItems: 3 },
      tags: { type: 'array', items: { type: 'string' } },
    });
    expect(valuesOf(validateParams(schema, { ids: [1, '2'] })).ids).toEqual({
      type: 'integer',
      array: true,
      value: [1, 2],
    });
    expect(valuesOf(validateParams(schema, { ids: [1] })).tags).toEqual({
      type: 'string',
      array: true,
      value: null,
    });
    expect(issuesOf(validateParams(schema, { ids: [1, 0, 'x', null] }))).toEqual([
      { param: 'ids', message: 'must have between 1 and 3 items' },
    ]);
    expect(issuesOf(validateParams(schema, { ids: [1, 0, 'x'], tags: ['a\u0000'] }))).toEqual([
      { param: 'ids[1]', message: 'must be an integer of at least 1' },
      { param: 'ids[2]', message: 'must be an integer of at least 1' },
      { param: 'tags[0]', message: 'must not contain NUL characters' },
    ]);
    expect(issuesOf(validateParams(schema, { ids: [] }))).toHaveLength(1);
    expect(issuesOf(validateParams(schema, { ids: 1 }))).toEqual([
      { param: 'ids', message: 'must be an array of integers' },
    ]);
    expect(issuesOf(validateParams(schema, { ids: [1], tags: Array(1001).fill('a') }))).toEqual([
      { param: 'tags', message: 'must have at most 1000 items' },
    ]);
    expect(issuesOf(validateParams(schema, { ids: [null] }))).toEqual([
      { param: 'ids[0]', message: 'must not be null' },
    ]);
  });

  it('treats inherited names like toString and __proto__ as unknown input, not params', () => {
    const input = JSON.parse('{"__proto__": 1, "toString": 2, "year": 2024}');
    expect(issuesOf(validateParams(salesSchema, input))).toEqual([
      { param: '__proto__', message: 'is not a parameter' },
      { param: 'toString', message: 'is not a parameter' },
    ]);
  });
});

describe('coerceQueryParams', () => {
  const schema: ParamSchema = checkParamSchema({
    year: { type: 'integer', required: true },
    ratio: { type: 'number' },
    flag: { type: 'boolean' },
    region: { type: 'string' },
    day: { type: 'date' },
    ids: { type: 'array', items: { type: 'integer' } },
    tags: { type: 'array', items: { type: 'string' } },
  });

  it('turns query-string text into JSON-typed input per the schema', () => {
    expect(
      coerceQueryParams(schema, {
        year: '2024',
        ratio: '-0.5',
        flag: 'true',
        region: 'EU',
        day: '2024-01-31',
      }),
    ).toEqual({ year: 2024, ratio: -0.5, flag: true, region: 'EU', day: '2024-01-31' });
    expect(coerceQueryParams(schema, { flag: '0' })).toEqual({ flag: false });
    expect(coerceQueryParams(schema, { flag: '1' })).toEqual({ flag: true });
  });

  it('keeps non-numeric text so validation reports the type error', () => {
    const input = coerceQueryParams(schema, { year: 'abc', ratio: '1e999', flag: 'yes' });
    expect(input).toEqual({ year: 'abc', ratio: '1e999', flag: 'yes' });
    expect(issuesOf(validateParams(schema, input))).toEqual([
      { param: 'year', message: 'must be an integer' },
      { param: 'ratio', message: 'must be a number' },
      { param: 'flag', message: 'must be true or false' },
    ]);
  });

  it('keeps big integers as text so they become bigint, not a rounded number', () => {
    const input = coerceQueryParams(schema, { year: '9007199254740993' });
    expect(valuesOf(validateParams(schema, input)).year?.value).toBe(9007199254740993n);
  });

  it('makes arrays from comma lists and repeated keys', () => {
    expect(coerceQueryParams(schema, { year: '1', ids: '1,2,3', tags: ['a,b', 'c'] })).toEqual({
      year: 1,
      ids: [1, 2, 3],
      tags: ['a,b', 'c'],
    });
    expect(coerceQueryParams(schema, { tags: 'solo' })).toEqual({ tags: ['solo'] });
    expect(coerceQueryParams(schema, { ids: ['4,5'] })).toEqual({ ids: [4, 5] });
    expect(coerceQueryParams(schema, { ids: ['4', 'x'] })).toEqual({ ids: [4, 'x'] });
  });

  it('drops empty values for optional non-string params but keeps empty strings', () => {
    expect(
      coerceQueryParams(schema, { year: '', ratio: '', flag: '', day: '', ids: '', region: '' }),
    ).toEqual({
      year: '',
      region: '',
    });
  });

  it('passes unknown keys through, and a repeated scalar key stays a list so validation refuses it', () => {
    const input = coerceQueryParams(schema, { year: ['2024', '2025'], other: 'x' });
    expect(input).toEqual({ year: ['2024', '2025'], other: 'x' });
    expect(issuesOf(validateParams(schema, input))).toEqual([
      { param: 'other', message: 'is not a parameter' },
      { param: 'year', message: 'must be an integer' },
    ]);
    expect(coerceQueryParams(schema, { year: ['2024'] })).toEqual({ year: 2024 });
  });
});
