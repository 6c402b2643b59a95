// Column types and the exact text of dates and timestamps from the driver's date objects.
import { describe, expect, it } from 'vitest';
import { dateText, type SnowflakeColumnLike, snowflakeColumn, timestampText } from './snowflake-types.js';

function column(type: string, scale = 0, precision = 38): SnowflakeColumnLike {
  return { getName: () => 'c', getType: () => type, getScale: () => scale, getPrecision: () => precision };
}

/** A Date carrying exact epoch parts, as snowflake-sdk's SfDate does. */
function sfDate(epochSeconds: number, nanos: number): Date {
  return Object.assign(new Date(epochSeconds * 1000 + Math.trunc(nanos / 1e6)), {
    getEpochSeconds: () => epochSeconds,
    getNanoSeconds: () => nanos,
  });
}

describe('snowflakeColumn', () => {
  it('maps every Snowflake type family to a logical type', () => {
    const cases: [SnowflakeColumnLike, string, string][] = [
      [column('fixed', 0, 38), 'integer', 'NUMBER(38,0)'],
      [column('fixed', 2, 18), 'decimal', 'NUMBER(18,2)'],
      [column('real'), 'number', 'FLOAT'],
      [column('text'), 'string', 'VARCHAR'],
      [column('boolean'), 'boolean', 'BOOLEAN'],
      [column('date'), 'date', 'DATE'],
      [column('time'), 'time', 'TIME'],
      [column('timestamp_ntz'), 'timestamp', 'TIMESTAMP_NTZ'],
      [column('timestamp_ltz'), 'timestamp', 'TIMESTAMP_LTZ'],
      [column('timestamp_tz'), 'timestamp', 'TIMESTAMP_TZ'],
      [column('binary'), 'bytes', 'BINARY'],
      [column('variant'), 'json', 'VARIANT'],
      [column('object'), 'json', 'OBJECT'],
      [column('array'), 'json', 'ARRAY'],
      [column('geography'), 'unknown', 'GEOGRAPHY'],
    ];
    for (const [col, type, nativeType] of cases) {
      expect(snowflakeColumn(col).info, col.getType()).toEqual({ name: 'c', type, nativeType });
    }
  });
});

describe('date and timestamp text', () => {
  it('renders dates as YYYY-MM-DD in UTC, before and after the epoch', () => {
    expect(dateText(sfDate(19_782 * 86_400, 0))).toBe('2024-02-29');
    expect(dateText(sfDate(-165 * 86_400, 0))).toBe('1969-07-20');
    expect(dateText(null)).toBeNull();
  });

  it('keeps every digit the service sent past the millisecond, and at least milliseconds', () => {
    expect(timestampText(sfDate(1_706_704_496, 789_000_000))).toBe('2024-01-31T12:34:56.789Z');
    expect(timestampText(sfDate(1_706_704_496, 123_456_000))).toBe('2024-01-31T12:34:56.123456Z');
    expect(timestampText(sfDate(1_706_704_496, 123_456_789))).toBe('2024-01-31T12:34:56.123456789Z');
    expect(timestampText(sfDate(0, 0))).toBe('1970-01-01T00:00:00.000Z');
    // Before the epoch the driver floors the seconds and keeps the fraction positive.
    expect(timestampText(sfDate(-1, 500_000_000))).toBe('1969-12-31T23:59:59.500Z');
    expect(timestampText(null)).toBeNull();
  });
});
