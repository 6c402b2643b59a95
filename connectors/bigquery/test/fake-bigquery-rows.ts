// Test code for fake-bigquery-server.ts: turns DuckDB result columns and values into BigQuery's
// REST result encoding — a schema of `TableFieldSchema`s with the legacy type names the service
// returns (INTEGER, FLOAT, BOOLEAN, RECORD, …) and rows `{f: [{v}]}` whose scalars are all text.
// DuckDB → BigQuery types: integers (any width) → INTEGER, FLOAT/DOUBLE → FLOAT, DECIMAL → NUMERIC
// (BIGNUMERIC past NUMERIC's 29.9 digits), VARCHAR → STRING (its JSON alias → JSON), BLOB →
// BYTES (base64), DATE, TIME, TIMESTAMP → DATETIME, TIMESTAMPTZ → TIMESTAMP, LIST → REPEATED,
// STRUCT → RECORD; anything else → STRING of DuckDB's text. As in BigQuery, a NULL array comes
// out as [] and an array holding a NULL element fails the job.
import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBStructValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTimeValue,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
} from '@duckdb/node-api';

/** One `TableFieldSchema`. */
export interface RestField {
  readonly name: string;
  readonly type: string;
  readonly mode: 'NULLABLE' | 'REPEATED';
  readonly fields?: readonly RestField[];
}

/** One REST cell. */
export interface RestCell {
  readonly v: unknown;
}

/** How TIMESTAMP values are written, per the request's `formatOptions`. */
export interface RestFormat {
  /** `formatOptions.useInt64Timestamp=true`: microseconds since the epoch as int64 text. */
  readonly int64Timestamp: boolean;
}

/** A job failure the fake reports the way BigQuery would. */
export class FakeJobError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function scalarType(type: DuckDBType): string {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'BOOLEAN';
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return 'INTEGER';
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return 'FLOAT';
    case DuckDBTypeId.DECIMAL:
      return type.scale <= 9 && type.width - type.scale <= 29 ? 'NUMERIC' : 'BIGNUMERIC';
    case DuckDBTypeId.VARCHAR:
      return type.alias?.toUpperCase() === 'JSON' ? 'JSON' : 'STRING';
    case DuckDBTypeId.BLOB:
      return 'BYTES';
    case DuckDBTypeId.DATE:
      return 'DATE';
    case DuckDBTypeId.TIME:
      return 'TIME';
    case DuckDBTypeId.TIMESTAMP:
      return 'DATETIME';
    case DuckDBTypeId.TIMESTAMP_TZ:
      return 'TIMESTAMP';
    case DuckDBTypeId.STRUCT:
      return 'RECORD';
    default:
      return 'STRING';
  }
}

/** The REST field for a DuckDB result column. */
export function restField(name: string, type: DuckDBType): RestField {
  if (type.typeId === DuckDBTypeId.LIST || type.typeId === DuckDBTypeId.ARRAY) {
    const item = restField(name, type.valueType);
    if (item.mode === 'REPEATED') throw new FakeJobError('invalidQuery', 'Cannot output an array of arrays');
    return { ...item, mode: 'REPEATED' };
  }
  if (type.typeId === DuckDBTypeId.STRUCT) {
    const fields = Array.from({ length: type.entryCount }, (_, i) =>
      restField(type.entryNames[i] as string, type.entryTypes[i] as DuckDBType),
    );
    return { name, type: 'RECORD', mode: 'NULLABLE', fields };
  }
  return { name, type: scalarType(type), mode: 'NULLABLE' };
}

/** `1234.50` → `1234.5`, `0.00` → `0`: BigQuery's canonical NUMERIC text. */
function numericText(value: DuckDBDecimalValue): string {
  const text = value.toString();
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** ISO date and time of microseconds since the epoch, without a zone (`2024-01-31T12:34:56.789000`). */
function civilText(micros: bigint): string {
  const seconds = micros / 1_000_000n - (micros < 0n && micros % 1_000_000n !== 0n ? 1n : 0n);
  const fraction = micros - seconds * 1_000_000n;
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return fraction === 0n ? base : `${base}.${fraction.toString().padStart(6, '0')}`;
}

function scalarText(field: RestField, value: DuckDBValue, format: RestFormat): string {
  switch (field.type) {
    case 'FLOAT': {
      const n = Number(value);
      return Number.isNaN(n) ? 'NaN' : String(n);
    }
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return value instanceof DuckDBDecimalValue ? numericText(value) : String(value);
    case 'BOOLEAN':
      return value === true ? 'true' : 'false';
    case 'BYTES':
      return value instanceof DuckDBBlobValue ? Buffer.from(value.bytes).toString('base64') : String(value);
    case 'DATE':
      return value instanceof DuckDBDateValue ? value.toString() : String(value);
    case 'TIME':
      return value instanceof DuckDBTimeValue ? value.toString() : String(value);
    case 'DATETIME':
      return value instanceof DuckDBTimestampValue ? civilText(value.micros) : String(value);
    case 'TIMESTAMP': {
      if (!(value instanceof DuckDBTimestampTZValue)) return String(value);
      if (format.int64Timestamp) return value.micros.toString();
      // The legacy default: seconds since the epoch as a float in E notation, e.g. 1.7067E9.
      return (Number(value.micros) / 1e6).toExponential().replace('e+', 'E').replace('e-', 'E-');
    }
    default:
      return String(value);
  }
}

function singleValue(field: RestField, value: DuckDBValue, format: RestFormat): unknown {
  if (value === null) return null;
  if (field.type === 'RECORD' && value instanceof DuckDBStructValue) {
    const { entries } = value;
    return {
      f: (field.fields ?? []).map((sub) => ({ v: cellValue(sub, entries[sub.name] ?? null, format) })),
    };
  }
  return scalarText(field, value, format);
}

/** The `v` of one cell. */
export function cellValue(field: RestField, value: DuckDBValue, format: RestFormat): unknown {
  if (field.mode !== 'REPEATED') return singleValue(field, value, format);
  if (value === null) return [];
  const items = value instanceof DuckDBListValue || value instanceof DuckDBArrayValue ? value.items : [];
  return items.map((item) => {
    if (item === null) {
      throw new FakeJobError(
        'invalidQuery',
        `Array cannot have a null element; error in writing field ${field.name}`,
      );
    }
    return { v: singleValue(field, item, format) };
  });
}
