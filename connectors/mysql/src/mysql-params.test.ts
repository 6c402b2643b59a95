// How validated params become mysql2 bind values: exact integers, booleans as 1/0 and
// timestamps as UTC DATETIME text.
import type { BoundParam } from '@quarry/sdk-connector';
import mysql from 'mysql2';
import { describe, expect, it } from 'vitest';
import { toMysqlDatetime, toMysqlParams } from './mysql-params.js';

const LONGLONG = mysql.Types.LONGLONG;

function param(type: BoundParam['type'], value: BoundParam['value'], array = false): BoundParam {
  return { name: 'p', type, value, array };
}

describe('toMysqlParams', () => {
  it('binds safe integers as numbers and larger ones as exact BIGINT', () => {
    const [small, fromBigint, big, min] = toMysqlParams([
      param('integer', 2024),
      param('integer', 42n),
      param('integer', 9007199254740993n),
      param('integer', -9223372036854775808n),
    ]);
    expect(small).toBe(2024);
    expect(fromBigint).toBe(42);
    expect(big).toMatchObject({ type: LONGLONG, value: 9007199254740993n });
    expect(min).toMatchObject({ type: LONGLONG, value: -9223372036854775808n });
  });

  it('binds booleans as booleans (sent as TINYINT 1/0)', () => {
    expect(toMysqlParams([param('boolean', true), param('boolean', false)])).toEqual([true, false]);
  });

  it('binds numbers, strings, enums and dates as themselves and NULL as null', () => {
    expect(
      toMysqlParams([
        param('number', 1.5),
        param('string', "O'Brien"),
        param('enum', 'EU'),
        param('date', '2024-02-29'),
        param('string', null),
      ]),
    ).toEqual([1.5, "O'Brien", 'EU', '2024-02-29', null]);
  });

  it('binds timestamps as UTC DATETIME text', () => {
    expect(toMysqlParams([param('timestamp', '2024-01-31T12:34:56.789Z')])).toEqual([
      '2024-01-31 12:34:56.789',
    ]);
  });

  it('expands an array param into one value per element, in order', () => {
    const values = toMysqlParams([param('string', 'x'), param('integer', [3, 1, 2], true)]);
    expect(values).toHaveLength(4);
    expect(values[0]).toBe('x');
    expect(values.slice(1)).toEqual([3, 1, 2]);
  });
});

describe('toMysqlDatetime', () => {
  it('converts offsets to UTC', () => {
    expect(toMysqlDatetime('2024-01-31T12:00:00+02:00')).toBe('2024-01-31 10:00:00.000');
  });
  it('keeps microseconds of an ISO UTC value', () => {
    expect(toMysqlDatetime('2024-01-31T12:00:00.123456Z')).toBe('2024-01-31 12:00:00.123456');
  });
});
