// Typed ANSI/Trino SQL literals for engines that cannot bind parameters. Values have been validated
// already; each one is checked again here against its declared type (defence in depth), because a
// literal is the one place where a value becomes SQL text.

import { ConnectorError } from './connector-error.js';
import type { BoundParam } from './connector-plugin.js';
import { parseDate } from './param-schema.js';
import type { ScalarParamType } from './param-types.js';

const SQL_TYPE: Readonly<Record<ScalarParamType, string>> = {
  integer: 'BIGINT',
  number: 'DOUBLE',
  string: 'VARCHAR',
  enum: 'VARCHAR',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP(3) WITH TIME ZONE',
};
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T(\d{2}):([0-5]\d):([0-5]\d)\.(\d{3})Z$/;
// Characters rendered as `\XXXX` escapes so no control or line-breaking character reaches the SQL text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const NEEDS_ESCAPE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function refuse(param: BoundParam, why: string): ConnectorError {
  const message = `cannot render :${param.name} as a ${param.type} literal: ${why}`;
  return new ConnectorError('PARAM_INVALID', message, { details: [{ param: param.name, message: why }] });
}

/**
 * Renders one validated value as a typed ANSI/Trino SQL literal: typed NULLs
 * (`CAST(NULL AS BIGINT)`), integers as digits (negatives parenthesized), numbers as
 * `DOUBLE '…'`, strings as `'…'` with `'` doubled (or `U&'…'` with `\XXXX` escapes when they hold
 * control characters), `TRUE`/`FALSE`, `DATE 'YYYY-MM-DD'`,
 * `TIMESTAMP 'YYYY-MM-DD HH:MM:SS.sss UTC'`, and arrays as `ARRAY[…]` (an empty one cast to its
 * element type). Use it as a `SqlDialect.renderLiteral` for engines without parameter binding.
 *
 * @throws ConnectorError `PARAM_INVALID` when a value does not match its declared type (a
 * non-integer, NaN/Infinity, a NUL character or lone surrogate, a malformed date, a non-UTC
 * timestamp, a nested or NULL array element).
 */
export function renderAnsiLiteral(param: BoundParam): string {
  const sqlType = Object.hasOwn(SQL_TYPE, param.type) ? SQL_TYPE[param.type] : undefined;
  if (sqlType === undefined) throw refuse(param, 'unknown type');
  if (param.value === null) return `CAST(NULL AS ${param.array ? `ARRAY(${sqlType})` : sqlType})`;
  if (!param.array) return renderScalar(param, param.value);
  if (!Array.isArray(param.value)) throw refuse(param, 'expected an array');
  const items = param.value as readonly unknown[];
  if (items.length === 0) return `CAST(ARRAY[] AS ARRAY(${sqlType}))`;
  return `ARRAY[${items.map((item) => renderScalar(param, item)).join(', ')}]`;
}

function renderScalar(param: BoundParam, value: unknown): string {
  switch (param.type) {
    case 'integer':
      return renderInteger(param, value);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw refuse(param, 'expected a finite number');
      // String() never yields a quote; inside DOUBLE '…' an exponent form is still one literal.
      return `DOUBLE '${String(value)}'`;
    case 'boolean':
      if (typeof value !== 'boolean') throw refuse(param, 'expected true or false');
      return value ? 'TRUE' : 'FALSE';
    case 'date':
      if (typeof value !== 'string' || parseDate(value) === undefined)
        throw refuse(param, 'expected YYYY-MM-DD');
      return `DATE '${value}'`;
    case 'timestamp': {
      const m = typeof value === 'string' ? UTC_TIMESTAMP.exec(value) : null;
      if (m === null || parseDate(m[1]!) === undefined || Number(m[2]) > 23) {
        throw refuse(param, 'expected a UTC timestamp YYYY-MM-DDTHH:MM:SS.sssZ');
      }
      return `TIMESTAMP '${m[1]} ${m[2]}:${m[3]}:${m[4]}.${m[5]} UTC'`;
    }
    case 'string':
    case 'enum':
      if (typeof value !== 'string') throw refuse(param, 'expected a string');
      return renderString(param, value);
    default:
      throw refuse(param, 'unknown type');
  }
}

function renderInteger(param: BoundParam, value: unknown): string {
  let big: bigint;
  if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
  else if (typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX) big = value;
  else throw refuse(param, 'expected a 64-bit integer');
  if (big >= 0n) return big.toString();
  // -9223372036854775808 does not parse as a literal (its magnitude overflows BIGINT).
  return big === INT64_MIN ? '(-9223372036854775807 - 1)' : `(${big.toString()})`;
}

function renderString(param: BoundParam, value: string): string {
  if (value.includes('\u0000')) throw refuse(param, 'NUL characters are not allowed');
  if (LONE_SURROGATE.test(value)) throw refuse(param, 'the text is not valid Unicode');
  if (!NEEDS_ESCAPE.test(value)) return `'${value.replaceAll("'", "''")}'`;
  let body = '';
  for (const ch of value) {
    if (ch === "'") body += "''";
    else if (ch === '\\') body += '\\\\';
    else if (NEEDS_ESCAPE.test(ch)) body += `\\${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else body += ch;
  }
  return `U&'${body}'`;
}
