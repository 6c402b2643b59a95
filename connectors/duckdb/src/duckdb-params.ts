// Binds a compiled query's typed values to a DuckDB prepared statement with explicit DuckDB
// types, so arrays get a LIST type and every value arrives as the type the dialect casts to.
import type { DuckDBPreparedStatement, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import {
  type BoundParam,
  ConnectorError,
  type ScalarParamType,
  type ScalarValue,
} from '@quarry/sdk-connector';
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  dateValue,
  LIST,
  listValue,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} from './duckdb-api.js';

const SCALAR_TYPES: Readonly<Record<ScalarParamType, DuckDBType>> = {
  integer: BIGINT,
  number: DOUBLE,
  string: VARCHAR,
  enum: VARCHAR,
  boolean: BOOLEAN,
  date: DATE,
  timestamp: TIMESTAMPTZ,
};
const LIST_TYPES: Readonly<Record<ScalarParamType, DuckDBType>> = {
  integer: LIST(BIGINT),
  number: LIST(DOUBLE),
  string: LIST(VARCHAR),
  enum: LIST(VARCHAR),
  boolean: LIST(BOOLEAN),
  date: LIST(DATE),
  timestamp: LIST(TIMESTAMPTZ),
};

const DATE_TEXT = /^(-?\d{4,})-(\d{2})-(\d{2})$/;
const FRACTION = /\.(\d+)/;

function invalid(name: string, message: string): ConnectorError {
  return new ConnectorError('PARAM_INVALID', `param ${name}: ${message}`, {
    details: [{ param: name, message }],
  });
}

/** Microseconds since the epoch of an ISO-8601 timestamp, keeping sub-millisecond digits. */
export function microsFromIso(text: string): bigint | undefined {
  const fraction = FRACTION.exec(text)?.[1] ?? '';
  const ms = Date.parse(fraction === '' ? text : text.replace(FRACTION, ''));
  if (!Number.isFinite(ms)) return undefined;
  return BigInt(ms / 1000) * 1_000_000n + BigInt(fraction.slice(0, 6).padEnd(6, '0'));
}

function scalarValue(name: string, type: ScalarParamType, value: ScalarValue): DuckDBValue {
  switch (type) {
    case 'integer':
      if (typeof value === 'bigint') return value;
      if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
      throw invalid(name, 'expected an integer');
    case 'number':
      if (typeof value === 'number') return value;
      throw invalid(name, 'expected a number');
    case 'string':
    case 'enum':
      if (typeof value === 'string') return value;
      throw invalid(name, 'expected a string');
    case 'boolean':
      if (typeof value === 'boolean') return value;
      throw invalid(name, 'expected a boolean');
    case 'date': {
      const m = typeof value === 'string' ? DATE_TEXT.exec(value) : null;
      if (!m) throw invalid(name, 'expected a date YYYY-MM-DD');
      return dateValue({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) });
    }
    case 'timestamp': {
      const micros = typeof value === 'string' ? microsFromIso(value) : undefined;
      if (micros === undefined) throw invalid(name, 'expected an ISO-8601 timestamp');
      return timestampTZValue(micros);
    }
  }
}

/** Binds `params[i]` to `$i+1` of `prepared`, typed; throws PARAM_INVALID on a value of the wrong kind. */
export function bindParams(prepared: DuckDBPreparedStatement, params: readonly BoundParam[]): void {
  for (let i = 0; i < params.length; i++) {
    const param = params[i] as BoundParam;
    const { name, type, array, value } = param;
    if (array) {
      const items =
        value === null ? null : (value as readonly ScalarValue[]).map((v) => scalarValue(name, type, v));
      prepared.bindValue(i + 1, items === null ? null : listValue(items), LIST_TYPES[type]);
    } else {
      prepared.bindValue(
        i + 1,
        value === null ? null : scalarValue(name, type, value as ScalarValue),
        SCALAR_TYPES[type],
      );
    }
  }
}
