// Turns a compiled query's typed params into snowflake-sdk binds, one per `?`. The driver sends
// each bind as `{"n": {type, value}}` with the type inferred from the JS value, so the JS value
// is chosen per param type to get the right wire type:
//
//   integer   safe → number (FIXED); beyond 2^53 → exact decimal text (TEXT, coerced by context)
//   number    number (REAL, or FIXED when integral), cast `::FLOAT` in the SQL
//   boolean   boolean (BOOLEAN)
//   string    string (TEXT); enum likewise
//   date      `YYYY-MM-DD` (TEXT), cast `::DATE`
//   timestamp ISO-8601 UTC (TEXT), cast `::TIMESTAMP_TZ`
//   NULL      null (TEXT null), typed by the cast where the dialect has one
//
// A bigint must never reach the driver: it JSON-stringifies binds and would throw.
import {
  type BoundParam,
  ConnectorError,
  type ScalarParamType,
  type ScalarValue,
} from '@quarry/sdk-connector';

/** One bind value as snowflake-sdk accepts it. */
export type SnowflakeBind = string | number | boolean | null;

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INTEGER_TEXT = /^-?\d+$/;

function invalid(name: string, message: string): ConnectorError {
  return new ConnectorError('PARAM_INVALID', `param ${name}: ${message}`, {
    details: [{ param: name, message }],
  });
}

function bindInteger(name: string, value: ScalarValue): SnowflakeBind {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return value;
    throw invalid(name, 'expected an integer (integers beyond 2^53 must be given as bigint or text)');
  }
  if (typeof value === 'bigint')
    return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : String(value);
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return value;
  throw invalid(name, 'expected an integer');
}

function bindScalar(param: BoundParam, type: ScalarParamType, value: ScalarValue): SnowflakeBind {
  switch (type) {
    case 'integer':
      return bindInteger(param.name, value);
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw invalid(param.name, 'expected a finite number');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      throw invalid(param.name, 'expected a boolean');
    case 'string':
    case 'enum':
    case 'date':
    case 'timestamp':
      // Validated already: dates are YYYY-MM-DD, timestamps ISO-8601 in UTC.
      if (typeof value === 'string') return value;
      throw invalid(param.name, `expected a ${type} as text`);
  }
}

/**
 * The binds for one execution, in placeholder order. The positional compiler has already expanded
 * arrays to one scalar param per element.
 *
 * @throws ConnectorError `PARAM_INVALID` for a value of the wrong kind, or an array that was not expanded.
 */
export function toSnowflakeBinds(params: readonly BoundParam[]): SnowflakeBind[] {
  const binds: SnowflakeBind[] = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const param = params[i] as BoundParam;
    const { value } = param;
    if (value === null) {
      binds[i] = null;
      continue;
    }
    if (Array.isArray(value)) throw invalid(param.name, 'arrays are expanded to one ? per element');
    binds[i] = bindScalar(param, param.type, value as ScalarValue);
  }
  return binds;
}
