// Turns DuckDB's value objects into the plain forms the SDK's toJsonValue handles: exact
// integers stay bigint, decimals become exact strings, dates `YYYY-MM-DD`, timestamps ISO-8601
// in UTC. Values nested in lists, structs and maps are made fully JSON-safe here, because the
// runtime only knows the outer column's type.
import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { JsonValue } from '@quarry/sdk-connector';
import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  DuckDBUnionValue,
} from './duckdb-api.js';

/** Milliseconds a JS Date can represent either side of the epoch. */
const MAX_DATE_MS = 8.64e15;

/** ISO-8601 UTC text for microseconds since the epoch (milliseconds kept), or undefined when out of a Date's range. */
export function isoFromMicros(micros: bigint): string | undefined {
  let ms = micros / 1000n;
  // BigInt division truncates towards zero; timestamps before 1970 must floor.
  if (micros < 0n && micros % 1000n !== 0n) ms -= 1n;
  const n = Number(ms);
  return Math.abs(n) > MAX_DATE_MS ? undefined : new Date(n).toISOString();
}

/** Microseconds since the epoch of a DuckDB timestamp of any precision, or undefined for other values. */
function microsOf(value: DuckDBValue): bigint | undefined {
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) return value.micros;
  if (value instanceof DuckDBTimestampSecondsValue) return value.seconds * 1_000_000n;
  if (value instanceof DuckDBTimestampMillisecondsValue) return value.millis * 1000n;
  if (value instanceof DuckDBTimestampNanosecondsValue) {
    const micros = value.nanos / 1000n;
    return value.nanos < 0n && value.nanos % 1000n !== 0n ? micros - 1n : micros;
  }
  return undefined;
}

function timestampText(value: DuckDBValue): string | undefined {
  const micros = microsOf(value);
  if (micros === undefined) return undefined;
  // ±infinity and dates past year 275760 have no Date: DuckDB's own text ('infinity', …).
  return isoFromMicros(micros) ?? String(value);
}

function parseJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/**
 * One top-level result value in the form the runtime expects for its column's type.
 * `type` is the column's DuckDB type.
 */
export function toRawValue(value: DuckDBValue, type: DuckDBType): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
      return type.typeId === DuckDBTypeId.VARCHAR && type.alias?.toUpperCase() === 'JSON'
        ? parseJson(value)
        : value;
    case 'boolean':
    case 'number':
    case 'bigint':
      return value;
  }
  if (value instanceof DuckDBDecimalValue) return value.toString();
  if (value instanceof DuckDBDateValue) return value.toString();
  if (value instanceof DuckDBBlobValue) return value.bytes;
  const timestamp = timestampText(value);
  if (timestamp !== undefined) return timestamp;
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return toJsonSafe(value, type);
  if (
    value instanceof DuckDBStructValue ||
    value instanceof DuckDBMapValue ||
    value instanceof DuckDBUnionValue
  ) {
    return toJsonSafe(value, type);
  }
  // TIME, TIMETZ, INTERVAL, UUID, BIT, …: DuckDB's canonical text.
  return String(value);
}

/** `value` as a JSON number when its decimal text survives the round trip, else the exact text. */
function decimalJson(value: DuckDBDecimalValue): JsonValue {
  const text = value.toString();
  const n = Number(text);
  return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER && n.toFixed(value.scale) === text
    ? n
    : text;
}

function childType(type: DuckDBType, index: number, key?: string): DuckDBType | undefined {
  switch (type.typeId) {
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return type.valueType;
    case DuckDBTypeId.STRUCT:
      return key === undefined ? undefined : type.typeForEntry(key);
    case DuckDBTypeId.MAP:
      return index === 0 ? type.keyType : type.valueType;
    default:
      return undefined;
  }
}

/**
 * A value nested inside a list, struct or map, made JSON-safe by the same rules the runtime
 * applies to columns: safe integers as numbers (else strings), decimals as numbers when exact,
 * non-finite floats as null, dates and timestamps as ISO text, blobs as base64.
 */
export function toJsonSafe(value: DuckDBValue, type: DuckDBType | undefined): JsonValue {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
      return type?.typeId === DuckDBTypeId.VARCHAR && type.alias?.toUpperCase() === 'JSON'
        ? parseJson(value)
        : value;
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(value)
        : value.toString();
  }
  if (value instanceof DuckDBDecimalValue) return decimalJson(value);
  if (value instanceof DuckDBDateValue) return value.toString();
  if (value instanceof DuckDBBlobValue) return Buffer.from(value.bytes).toString('base64');
  const timestamp = timestampText(value);
  if (timestamp !== undefined) return timestamp;
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) {
    const itemType = type === undefined ? undefined : childType(type, 1);
    return value.items.map((item) => toJsonSafe(item, itemType));
  }
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, JsonValue> = {};
    for (const [key, entry] of Object.entries(value.entries)) {
      out[key] = toJsonSafe(entry, type === undefined ? undefined : childType(type, 0, key));
    }
    return out;
  }
  if (value instanceof DuckDBMapValue) {
    const keyType = type === undefined ? undefined : childType(type, 0);
    const valueType = type === undefined ? undefined : childType(type, 1);
    // A JSON object when every key is text; otherwise key/value pairs keep non-text keys intact.
    if (value.entries.every((e) => typeof e.key === 'string')) {
      const out: Record<string, JsonValue> = {};
      for (const e of value.entries) out[e.key as string] = toJsonSafe(e.value, valueType);
      return out;
    }
    return value.entries.map((e) => ({
      key: toJsonSafe(e.key, keyType),
      value: toJsonSafe(e.value, valueType),
    }));
  }
  if (value instanceof DuckDBUnionValue) return toJsonSafe(value.value, undefined);
  return String(value);
}
