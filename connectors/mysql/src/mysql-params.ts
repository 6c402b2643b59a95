// Turns a compiled query's bound params into mysql2 `execute` values, one per `?`, typed so the
// server sees what the analytic declared: integers go as BIGINT (mysql2 would send a JS number as
// DOUBLE, which MySQL 8 refuses in `LIMIT ?`), booleans as TINYINT 1/0, dates as `YYYY-MM-DD`
// and timestamps as `YYYY-MM-DD HH:MM:SS.fff` in UTC (the session's time zone). Values are
// always bound, never spliced into the SQL text.
import type { BoundParam, ScalarParamType, ScalarValue } from '@quarry/sdk-connector';
import mysql from 'mysql2';

/** One value as mysql2's `execute` accepts it. */
export type MysqlBindValue = string | number | null | ReturnType<typeof mysql.TypedParameter.LONGLONG>;

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

function bindScalar(type: ScalarParamType, value: ScalarValue | null): MysqlBindValue {
  if (value === null) return null;
  switch (type) {
    case 'integer':
      return mysql.TypedParameter.LONGLONG(typeof value === 'boolean' ? Number(value) : value);
    case 'boolean':
      return mysql.TypedParameter.TINY(value === true || value === 1 || value === 'true' ? 1 : 0);
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
