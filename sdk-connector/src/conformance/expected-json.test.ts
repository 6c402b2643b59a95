// The kit's value assertions must reject what a user would notice as wrong (a rounded int64, an
// inexact decimal, a local-time timestamp), or the kit could pass a broken connector.
import { describe, expect, it } from 'vitest';
import { expectJsonSafe, expectJsonValue } from './expected-json.js';

describe('expectJsonValue', () => {
  it('accepts safe integers as numbers and larger ones only as exact strings', () => {
    expectJsonValue(9007199254740991, 9007199254740991n, 'integer', 'max safe');
    expectJsonValue('9007199254740993', 9007199254740993n, 'integer', 'past 2^53');
    expect(() => expectJsonValue(9007199254740992, 9007199254740993n, 'integer', 'rounded')).toThrow();
    expect(() => expectJsonValue('42', 42n, 'integer', 'safe as string')).toThrow();
  });

  it('accepts decimals as numbers or strings when exact, and rejects rounding', () => {
    expectJsonValue(1234.5, '1234.50', 'decimal', 'number form');
    expectJsonValue('1234.50', '1234.50', 'decimal', 'string form');
    expectJsonValue('-0.01', '-0.01', 'decimal', 'negative');
    expectJsonValue(0, '0.00', 'decimal', 'zero');
    expectJsonValue('9999999999999999.99', '9999999999999999.99', 'decimal', 'wide');
    expect(() => expectJsonValue(10000000000000000, '9999999999999999.99', 'decimal', 'rounded')).toThrow();
    expect(() => expectJsonValue(true, '1', 'decimal', 'boolean')).toThrow();
  });

  it('requires UTC ISO timestamps with Z for the same instant', () => {
    expectJsonValue('2024-01-31T12:34:56.789Z', '2024-01-31T12:34:56.789Z', 'timestamp', 'ms');
    expectJsonValue('2024-01-31T12:34:56.789000Z', '2024-01-31T12:34:56.789Z', 'timestamp', 'µs');
    expect(() =>
      expectJsonValue('2024-01-31T13:34:56.789+01:00', '2024-01-31T12:34:56.789Z', 'timestamp', 'offset'),
    ).toThrow();
    expect(() =>
      expectJsonValue('2024-01-31 12:34:56.789', '2024-01-31T12:34:56.789Z', 'timestamp', 'sql'),
    ).toThrow();
    expect(() =>
      expectJsonValue('2024-01-31T11:34:56.789Z', '2024-01-31T12:34:56.789Z', 'timestamp', 'shifted'),
    ).toThrow();
  });

  it('maps booleans reported as integers to 1/0, and NULL to null only', () => {
    expectJsonValue(1, true, 'integer', 'tinyint true');
    expectJsonValue(0, false, 'integer', 'tinyint false');
    expectJsonValue(null, null, 'string', 'null');
    expect(() => expectJsonValue('', null, 'string', 'empty for null')).toThrow();
    expect(() =>
      expectJsonValue('2024-02-29T00:00:00.000Z', '2024-02-29', 'date', 'date as timestamp'),
    ).toThrow();
  });
});

describe('expectJsonSafe', () => {
  it('rejects bigint, Date and undefined values', () => {
    expectJsonSafe([{ a: 1, b: 'x', c: null, d: [1, { e: true }] }], 'plain');
    expect(() => expectJsonSafe([{ a: 1n as never }], 'bigint')).toThrow();
    expect(() => expectJsonSafe([{ a: new Date(0) as never }], 'date')).toThrow();
    expect(() => expectJsonSafe([{ a: undefined as never }], 'undefined')).toThrow();
  });
});
