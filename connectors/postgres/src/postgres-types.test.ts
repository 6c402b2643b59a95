import { describe, expect, it } from 'vitest';
import { parseBytea, parseTimestamp, postgresTypeInfo } from './postgres-types.js';

describe('parseTimestamp', () => {
  it('reads a timestamp without time zone as UTC, with milliseconds', () => {
    expect(parseTimestamp('2024-01-31 12:34:56.789')).toBe('2024-01-31T12:34:56.789Z');
    expect(parseTimestamp('2024-01-31 12:34:56')).toBe('2024-01-31T12:34:56.000Z');
    expect(parseTimestamp('2024-01-31 12:34:56.1')).toBe('2024-01-31T12:34:56.100Z');
  });

  it('cuts microseconds to milliseconds', () => {
    expect(parseTimestamp('2024-01-31 12:34:56.789999')).toBe('2024-01-31T12:34:56.789Z');
  });

  it('converts a timestamptz in any zone to UTC', () => {
    expect(parseTimestamp('2024-01-31 12:00:00+00')).toBe('2024-01-31T12:00:00.000Z');
    expect(parseTimestamp('2024-01-01 00:00:00+05:30')).toBe('2023-12-31T18:30:00.000Z');
    expect(parseTimestamp('2024-01-01 00:00:00.5-08')).toBe('2024-01-01T08:00:00.500Z');
    // Historical zones can carry seconds (LMT offsets).
    expect(parseTimestamp('1850-01-01 00:00:00+00:53:28')).toBe('1849-12-31T23:06:32.000Z');
  });

  it('handles years before 100 AD, BC years and years past 9999', () => {
    expect(parseTimestamp('0044-03-15 12:00:00')).toBe('0044-03-15T12:00:00.000Z');
    expect(parseTimestamp('0044-03-15 12:00:00 BC')).toBe('-000043-03-15T12:00:00.000Z');
    expect(parseTimestamp('10000-01-01 00:00:00')).toBe('+010000-01-01T00:00:00.000Z');
  });

  it('leaves infinity as Postgres wrote it', () => {
    expect(parseTimestamp('infinity')).toBe('infinity');
    expect(parseTimestamp('-infinity')).toBe('-infinity');
  });
});

describe('parseBytea', () => {
  it('decodes hex and escape output', () => {
    expect(parseBytea('\\x00ff10')).toEqual(Buffer.from([0, 255, 16]));
    expect(parseBytea('ab\\\\\\001')).toEqual(Buffer.from([0x61, 0x62, 0x5c, 1]));
  });
});

describe('postgresTypeInfo', () => {
  it('maps scalar OIDs to logical column types', () => {
    expect(postgresTypeInfo(20)).toMatchObject({ type: 'integer', nativeType: 'int8' });
    expect(postgresTypeInfo(1700)).toMatchObject({ type: 'decimal', nativeType: 'numeric' });
    expect(postgresTypeInfo(1184)).toMatchObject({ type: 'timestamp', nativeType: 'timestamptz' });
    expect(postgresTypeInfo(3802)).toMatchObject({ type: 'json', nativeType: 'jsonb' });
    expect(postgresTypeInfo(2950)).toMatchObject({ type: 'string', nativeType: 'uuid' });
  });

  it('keeps int8 and numeric exact by handing over their text', () => {
    expect(postgresTypeInfo(20).parse).toBeUndefined();
    expect(postgresTypeInfo(1700).parse).toBeUndefined();
  });

  it('parses arrays element by element, nulls and nesting included', () => {
    const int8s = postgresTypeInfo(1016);
    expect(int8s).toMatchObject({ type: 'array', nativeType: 'int8[]' });
    // Elements have no column type of their own, so int8 elements are bigints, not ambiguous text.
    expect(int8s.parse!('{1,NULL,9223372036854775807}')).toEqual([1n, null, 9223372036854775807n]);
    expect(postgresTypeInfo(1007).parse!('{{1,2},{3,4}}')).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(postgresTypeInfo(1185).parse!('{"2024-01-01 00:00:00+01"}')).toEqual(['2023-12-31T23:00:00.000Z']);
    expect(postgresTypeInfo(1000).parse!('{t,f}')).toEqual([true, false]);
    expect(postgresTypeInfo(1009).parse!('{"a,b","say \\"hi\\""}')).toEqual(['a,b', 'say "hi"']);
  });

  it('reports types it does not know as unknown text, naming the OID', () => {
    expect(postgresTypeInfo(99999)).toEqual({ type: 'unknown', nativeType: 'oid:99999', parse: undefined });
  });
});
