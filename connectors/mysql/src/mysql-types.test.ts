// Column mapping from real MariaDB field metadata shapes (captured from mysql2 3.24 against
// MariaDB 10.11) to the logical types callers see in `columns`.
import { describe, expect, it } from 'vitest';
import { type MysqlField, mysqlColumn, mysqlTimestampToIso } from './mysql-types.js';

const binary = 63;
const utf8mb4 = 224;

function field(columnType: number, extra: Partial<MysqlField> = {}): MysqlField {
  return { name: 'c', columnType, characterSet: binary, flags: 0, columnLength: 11, ...extra };
}

describe('mysqlColumn', () => {
  it('maps integer widths to integer and keeps UNSIGNED in the native type', () => {
    expect(mysqlColumn(field(3)).info).toEqual({ name: 'c', type: 'integer', nativeType: 'INT' });
    expect(mysqlColumn(field(8, { flags: 32, columnLength: 20 })).info).toEqual({
      name: 'c',
      type: 'integer',
      nativeType: 'BIGINT UNSIGNED',
    });
    expect(mysqlColumn(field(1, { columnLength: 4 })).info.type).toBe('integer');
    expect(mysqlColumn(field(13, { columnLength: 4 })).info.type).toBe('integer');
  });

  it('reports TINYINT(1), MySQL BOOLEAN, as boolean', () => {
    expect(mysqlColumn(field(1, { columnLength: 1 })).info).toEqual({
      name: 'c',
      type: 'boolean',
      nativeType: 'TINYINT(1)',
    });
  });

  it('maps decimals, floats, temporal types and JSON', () => {
    expect(mysqlColumn(field(246)).info.type).toBe('decimal');
    expect(mysqlColumn(field(4)).info.type).toBe('number');
    expect(mysqlColumn(field(5)).info.type).toBe('number');
    expect(mysqlColumn(field(10)).info.type).toBe('date');
    expect(mysqlColumn(field(12)).info.type).toBe('timestamp');
    expect(mysqlColumn(field(7)).info.type).toBe('timestamp');
    expect(mysqlColumn(field(11)).info.type).toBe('time');
    expect(mysqlColumn(field(245)).info.type).toBe('json');
    // MariaDB: JSON is LONGTEXT, recognisable only by its extended format.
    expect(mysqlColumn(field(252, { characterSet: utf8mb4, extendedFormat: 'json' })).info.type).toBe('json');
  });

  it('tells binary strings (charset 63) from text', () => {
    expect(mysqlColumn(field(252)).info).toMatchObject({ type: 'bytes', nativeType: 'BLOB' });
    expect(mysqlColumn(field(252, { characterSet: utf8mb4 })).info).toMatchObject({
      type: 'string',
      nativeType: 'TEXT',
    });
    expect(mysqlColumn(field(253)).info).toMatchObject({ type: 'bytes', nativeType: 'VARBINARY' });
    expect(mysqlColumn(field(253, { characterSet: utf8mb4 })).info).toMatchObject({
      type: 'string',
      nativeType: 'VARCHAR',
    });
    expect(mysqlColumn(field(254, { characterSet: utf8mb4, flags: 256 })).info).toMatchObject({
      type: 'string',
      nativeType: 'ENUM',
    });
  });

  it('turns BIT(1) into a flag and wider BITs into integers', () => {
    const flag = mysqlColumn(field(16, { columnLength: 1 }));
    expect(flag.info.type).toBe('boolean');
    expect(flag.convert?.(Buffer.from([1]))).toBe(true);
    expect(flag.convert?.(Buffer.from([0]))).toBe(false);
    const bits = mysqlColumn(field(16, { columnLength: 64 }));
    expect(bits.info.type).toBe('integer');
    expect(bits.convert?.(Buffer.from([0, 0, 0, 0, 0, 0, 1, 2]))).toBe(258);
    expect(bits.convert?.(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toBe(
      '18446744073709551615',
    );
  });

  it('turns zero dates into null', () => {
    expect(mysqlColumn(field(10)).convert?.('0000-00-00')).toBeNull();
    expect(mysqlColumn(field(10)).convert?.('2024-02-29')).toBe('2024-02-29');
  });
});

describe('mysqlTimestampToIso', () => {
  it('reads DATETIME text as UTC and writes ISO-8601', () => {
    expect(mysqlTimestampToIso('2024-01-31 12:34:56')).toBe('2024-01-31T12:34:56.000Z');
    expect(mysqlTimestampToIso('2024-01-31 12:34:56.7')).toBe('2024-01-31T12:34:56.700Z');
    expect(mysqlTimestampToIso('2024-01-31 12:34:56.789')).toBe('2024-01-31T12:34:56.789Z');
  });

  it('keeps microseconds when the column has them', () => {
    expect(mysqlTimestampToIso('2024-01-31 12:34:56.123456')).toBe('2024-01-31T12:34:56.123456Z');
  });

  it('maps the zero datetime to null', () => {
    expect(mysqlTimestampToIso('0000-00-00 00:00:00')).toBeNull();
  });
});
