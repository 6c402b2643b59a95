// Turns a compiled query's bound params into mysql2 `execute` values, one per `?`. Values are
// always bound, never spliced into the SQL text. Safe integers go as JS numbers (the cheapest
// encoding; an integer below 2^53 compares exactly with any integer column, and mysql2 adopts
// the server's integer hint where one exists, e.g. MySQL 8's `LIMIT ?`); integers beyond 2^53
// go as typed BIGINT, because a string or DOUBLE would be compared as a double and lose digits.
// Booleans go as TINYINT 1/0, dates as `YYYY-MM-DD`, timestamps as `YYYY-MM-DD HH:MM:SS.fff` in
// UTC (the session's time zone).
import type { BoundParam, ScalarParamType, ScalarValue } from '@quarry/sdk-connector';
import mysql from 'mysql2';

// mysql2 exposes TypedParameter through a lazy getter that calls require() on every access:
// read the factories once, not once per bound value.
const { LONGLONG } = mysql.TypedParameter;

/** One value as mysql2's `execute` accepts it. */
export type MysqlBindValue = string | number | boolean | null | ReturnType<typeof LONGLONG>;

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const ISO_UTC = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)Z$/;

/** An ISO-8601 timestamp → MySQL's DATETIME literal text in UTC, keeping the fraction. */
export function toMysqlDatetime(value: string): string {
  const m = ISO_UTC.exec(value);
  if (m !== null) return `${m[1]} ${m[2]}`;
  // Validated timestamps are ISO UTC already; anything else with an offset goes through Date.
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

function bindInteger(value: ScalarValue): MysqlBindValue {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'bigint' && value >= MIN_SAFE && value <= MAX_SAFE) return Number(value);
  return LONGLONG(typeof value === 'boolean' ? Number(value) : value);
}

function bindScalar(type: ScalarParamType, value: ScalarValue | null): MysqlBindValue {
  if (value === null) return null;
  switch (type) {
    case 'integer':
      return bindInteger(value);
    case 'boolean':
      // mysql2 sends a JS boolean as TINYINT 1/0.
      return value === true || value === 1 || value === 'true';
    case 'number':
      return typeof value === 'number' ? value : Number(value);
    case 'timestamp':
      return toMysqlDatetime(String(value));
    default:
      // string, enum, date (`YYYY-MM-DD`): text the server converts by context.
      return typeof value === 'string' ? value : String(value);
  }
}

/**
 * The values for one execution, in placeholder order. An array param contributes one value per
 * element, matching the `?, ?, …` the positional compiler expanded it to.
 */
export function toMysqlParams(params: readonly BoundParam[]): MysqlBindValue[] {
  const out: MysqlBindValue[] = [];
  for (const param of params) {
    const value = param.value;
    if (param.array && Array.isArray(value)) {
      for (const element of value as readonly ScalarValue[]) out.push(bindScalar(param.type, element));
    } else {
      out.push(bindScalar(param.type, value as ScalarValue | null));
    }
  }
  return out;
}
