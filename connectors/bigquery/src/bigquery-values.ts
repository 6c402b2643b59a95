// Reads BigQuery's REST result encoding: a schema of fields, and rows as `{f: [{v}]}` where every
// scalar is text (INT64 and NUMERIC exact, TIMESTAMP as int64 microseconds because the connector
// asks for `formatOptions.useInt64Timestamp`), a REPEATED field's value is `[{v}]` and a RECORD's
// is `{f: [{v}]}`. Top-level values are handed to the runtime in the form its converters take;
// values inside arrays and records are made JSON-safe here, because the runtime only knows the
// outer column's type.
import { type ColumnInfo, type ColumnType, type JsonValue, toJsonValue } from '@quarry/sdk-connector';

/** One field of a result schema (`TableFieldSchema`). */
export interface BigqueryField {
  readonly name: string;
  readonly type: string;
  readonly mode?: string;
  readonly fields?: readonly BigqueryField[];
}

/** One cell of a REST row. */
export interface BigqueryCell {
  readonly v?: unknown;
}

/** One REST row. */
export interface BigqueryRow {
  readonly f: readonly BigqueryCell[];
}

const INT64_TEXT = /^-?\d+$/;

/** The logical type of one (non-repeated) value of a field; REST uses the legacy type names. */
function scalarTypeOf(type: string): ColumnType {
  switch (type.toUpperCase()) {
    case 'INTEGER':
    case 'INT64':
      return 'integer';
    case 'FLOAT':
    case 'FLOAT64':
      return 'number';
    case 'NUMERIC':
    case 'BIGNUMERIC':
    case 'DECIMAL':
    case 'BIGDECIMAL':
      return 'decimal';
    case 'BOOLEAN':
    case 'BOOL':
      return 'boolean';
    case 'STRING':
    case 'GEOGRAPHY':
      return 'string';
    case 'BYTES':
      return 'bytes';
    case 'DATE':
      return 'date';
    // DATETIME is a civil date and time; like a Postgres `timestamp`, it is read as UTC.
    case 'DATETIME':
    case 'TIMESTAMP':
      return 'timestamp';
    case 'TIME':
      return 'time';
    case 'JSON':
    case 'RECORD':
    case 'STRUCT':
      return 'json';
    default:
      // INTERVAL, RANGE and anything newer: BigQuery's own text.
      return 'unknown';
  }
}

function isRepeated(field: BigqueryField): boolean {
  return field.mode?.toUpperCase() === 'REPEATED';
}

function isRecord(field: BigqueryField): boolean {
  const type = field.type.toUpperCase();
  return type === 'RECORD' || type === 'STRUCT';
}

/** The display name of a field's type, e.g. `INTEGER`, `ARRAY<DATE>`. */
function nativeTypeOf(field: BigqueryField): string {
  const type = field.type.toUpperCase();
  return isRepeated(field) ? `ARRAY<${type}>` : type;
}

/** The columns of a result, with their logical types. */
export function columnsOf(fields: readonly BigqueryField[]): ColumnInfo[] {
  return fields.map((field) => ({
    name: field.name,
    type: isRepeated(field) ? 'array' : scalarTypeOf(field.type),
    nativeType: nativeTypeOf(field),
  }));
}

/** A scalar's text in the form the runtime's converter for its type takes. */
function rawScalar(type: ColumnType, text: string): unknown {
  if (type === 'timestamp' && INT64_TEXT.test(text)) return BigInt(text); // microseconds
  if (type === 'boolean') return text === 'true';
  return text;
}

/** A RECORD value (`{f: [...]}`) as a JSON object keyed by its fields' names. */
function recordJson(fields: readonly BigqueryField[], value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  const cells = (value as BigqueryRow).f;
  const out: Record<string, JsonValue> = {};
  fields.forEach((field, i) => {
    const json = fieldJson(field, cells[i]?.v);
    // A field named `__proto__` must stay a field.
    Object.defineProperty(out, field.name, {
      value: json,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
  return out;
}

/** One non-repeated value of a field, fully JSON-safe. */
function singleJson(field: BigqueryField, value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (isRecord(field)) return recordJson(field.fields ?? [], value);
  const type = scalarTypeOf(field.type);
  return toJsonValue(type, rawScalar(type, String(value)));
}

/** A field's value, fully JSON-safe: arrays element by element, records field by field. */
function fieldJson(field: BigqueryField, value: unknown): JsonValue {
  if (!isRepeated(field)) return singleJson(field, value);
  // BigQuery has no NULL arrays in results: a NULL array arrives as [].
  const items = (value ?? []) as readonly BigqueryCell[];
  return items.map((item) => singleJson(field, item.v));
}

/**
 * One REST row as values in column order: scalars in the runtime's input forms (INT64 and
 * NUMERIC as exact text, TIMESTAMP as bigint microseconds, BOOL as boolean, the rest as text),
 * arrays and records already JSON-safe.
 */
export function rowValues(fields: readonly BigqueryField[], row: BigqueryRow): unknown[] {
  const out: unknown[] = new Array(fields.length);
  for (let c = 0; c < fields.length; c++) {
    const field = fields[c] as BigqueryField;
    const value = row.f[c]?.v;
    if (isRepeated(field) || isRecord(field)) {
      out[c] = fieldJson(field, value);
    } else if (value === null || value === undefined) {
      out[c] = null;
    } else {
      out[c] = rawScalar(scalarTypeOf(field.type), String(value));
    }
  }
  return out;
}
