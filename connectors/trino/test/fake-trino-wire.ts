// The wire side of the fake Trino coordinator (test code): DuckDB result types as Trino type
// names and client type signatures, and DuckDB values as the JSON Trino's protocol writes
// (io.trino.server.protocol.JsonEncodingUtils) for a client that does not announce the
// PARAMETRIC_DATETIME capability, which trino-client never does:
// - BIGINT and the other integers as JSON numbers, written with every digit (never rounded);
// - DOUBLE/REAL as Java's Double.toString (`3.0`, `1.0E-10`), NaN/±Infinity as quoted strings;
// - DECIMAL, DATE, TIME, TIMESTAMP as strings; datetimes rounded to milliseconds and typed
//   `timestamp` / `timestamp with time zone` / `time` without a precision;
//   `timestamp with time zone` values carry their zone (`2024-01-31 12:34:56.789 UTC`);
// - VARBINARY as base64, ARRAY as a JSON array, ROW as a JSON array of its fields in order,
//   MAP as a JSON object keyed by the keys' text, JSON values as a string of JSON text.
import { type DuckDBType, DuckDBTypeId, type DuckDBValue } from '@duckdb/node-api';

/** A client type signature argument, as Trino's ClientTypeSignatureParameter serializes. */
type SignatureArgument =
  | { readonly kind: 'LONG'; readonly value: number }
  | { readonly kind: 'TYPE'; readonly value: TypeSignature }
  | {
      readonly kind: 'NAMED_TYPE';
      readonly value: {
        readonly fieldName: { readonly name: string };
        readonly typeSignature: TypeSignature;
      };
    };

/** Trino's ClientTypeSignature. */
export interface TypeSignature {
  readonly rawType: string;
  readonly arguments: readonly SignatureArgument[];
}

/** One `columns` entry of a Trino result page. */
export interface WireColumn {
  readonly name: string;
  readonly type: string;
  readonly typeSignature: TypeSignature;
}

const SIMPLE_NAME = /^[a-z_][a-z0-9_]*$/;
const UNBOUNDED_VARCHAR = 2_147_483_647;

function plain(rawType: string): { type: string; signature: TypeSignature } {
  return { type: rawType, signature: { rawType, arguments: [] } };
}

/** The Trino type name and signature for a DuckDB type. */
export function trinoTypeOf(type: DuckDBType): { type: string; signature: TypeSignature } {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return plain('boolean');
    case DuckDBTypeId.TINYINT:
      return plain('tinyint');
    case DuckDBTypeId.SMALLINT:
      return plain('smallint');
    case DuckDBTypeId.INTEGER:
      return plain('integer');
    case DuckDBTypeId.BIGINT:
      return plain('bigint');
    case DuckDBTypeId.FLOAT:
      return plain('real');
    case DuckDBTypeId.DOUBLE:
      return plain('double');
    case DuckDBTypeId.DECIMAL:
      return {
        type: `decimal(${type.width},${type.scale})`,
        signature: {
          rawType: 'decimal',
          arguments: [
            { kind: 'LONG', value: type.width },
            { kind: 'LONG', value: type.scale },
          ],
        },
      };
    case DuckDBTypeId.VARCHAR:
      if (type.alias?.toUpperCase() === 'JSON') return plain('json');
      return {
        type: 'varchar',
        signature: { rawType: 'varchar', arguments: [{ kind: 'LONG', value: UNBOUNDED_VARCHAR }] },
      };
    case DuckDBTypeId.BLOB:
      return plain('varbinary');
    case DuckDBTypeId.DATE:
      return plain('date');
    case DuckDBTypeId.TIME:
      return plain('time');
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return plain('timestamp');
    case DuckDBTypeId.TIMESTAMP_TZ:
      return plain('timestamp with time zone');
    case DuckDBTypeId.UUID:
      return plain('uuid');
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const element = trinoTypeOf(type.valueType);
      return {
        type: `array(${element.type})`,
        signature: { rawType: 'array', arguments: [{ kind: 'TYPE', value: element.signature }] },
      };
    }
    case DuckDBTypeId.MAP: {
      const key = trinoTypeOf(type.keyType);
      const value = trinoTypeOf(type.valueType);
      return {
        type: `map(${key.type}, ${value.type})`,
        signature: {
          rawType: 'map',
          arguments: [
            { kind: 'TYPE', value: key.signature },
            { kind: 'TYPE', value: value.signature },
          ],
        },
      };
    }
    case DuckDBTypeId.STRUCT: {
      const fields = type.entryNames.map((name, i) => ({ name, ...trinoTypeOf(type.entryTypes[i]!) }));
      return {
        type: `row(${fields
          .map((f) => `${SIMPLE_NAME.test(f.name) ? f.name : `"${f.name.replaceAll('"', '""')}"`} ${f.type}`)
          .join(', ')})`,
        signature: {
          rawType: 'row',
          arguments: fields.map((f) => ({
            kind: 'NAMED_TYPE' as const,
            value: { fieldName: { name: f.name }, typeSignature: f.signature },
          })),
        },
      };
    }
    default:
      // HUGEINT, unsigned integers, INTERVAL, …: text in a varchar, like a cast would give.
      return plain('varchar');
  }
}

/** A column entry for a result page. */
export function wireColumn(name: string, type: DuckDBType): WireColumn {
  const trino = trinoTypeOf(type);
  return { name, type: trino.type, typeSignature: trino.signature };
}

/** Java's Double.toString, which Jackson uses for Trino's DOUBLE values. */
export function javaDouble(n: number): string {
  if (Number.isNaN(n)) return '"NaN"';
  if (!Number.isFinite(n)) return n > 0 ? '"Infinity"' : '"-Infinity"';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) {
    const text = String(n);
    return text.includes('.') ? text : `${text}.0`;
  }
  const [mantissa = '', exponent = '0'] = n.toExponential().split('e');
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

const pad = (n: bigint | number, width: number): string => String(n).padStart(width, '0');

/** `YYYY-MM-DD HH:MM:SS.fff` (UTC) of microseconds since the epoch, rounded to milliseconds. */
function timestampText(micros: bigint): string {
  const iso = new Date(Math.round(Number(micros) / 1000)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

function timeText(micros: bigint): string {
  const ms = (micros + 500n) / 1000n;
  const h = ms / 3_600_000n;
  const m = (ms / 60_000n) % 60n;
  const s = (ms / 1000n) % 60n;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(ms % 1000n, 3)}`;
}

function valueMicros(value: DuckDBValue): bigint {
  const v = value as { micros?: bigint; millis?: bigint; seconds?: bigint; nanos?: bigint };
  if (v.micros !== undefined) return v.micros;
  if (v.millis !== undefined) return v.millis * 1000n;
  if (v.seconds !== undefined) return v.seconds * 1_000_000n;
  return (v.nanos ?? 0n) / 1000n;
}

/** The JSON text Trino writes for one value of a DuckDB type. */
export function wireValue(value: DuckDBValue, type: DuckDBType): string {
  if (value === null) return 'null';
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return value ? 'true' : 'false';
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
      return String(value);
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return javaDouble(value as number);
    case DuckDBTypeId.BLOB:
      return JSON.stringify(Buffer.from((value as { bytes: Uint8Array }).bytes).toString('base64'));
    case DuckDBTypeId.TIME:
      return JSON.stringify(timeText(valueMicros(value)));
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return JSON.stringify(timestampText(valueMicros(value)));
    case DuckDBTypeId.TIMESTAMP_TZ:
      return JSON.stringify(`${timestampText(valueMicros(value))} UTC`);
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const items = (value as { items: readonly DuckDBValue[] }).items;
      return `[${items.map((item) => wireValue(item, type.valueType)).join(',')}]`;
    }
    case DuckDBTypeId.MAP: {
      const entries = (value as { entries: readonly { key: DuckDBValue; value: DuckDBValue }[] }).entries;
      return `{${entries
        .map((e) => `${JSON.stringify(String(e.key))}:${wireValue(e.value, type.valueType)}`)
        .join(',')}}`;
    }
    case DuckDBTypeId.STRUCT: {
      const entries = (value as { entries: Readonly<Record<string, DuckDBValue>> }).entries;
      return `[${type.entryNames.map((name, i) => wireValue(entries[name] ?? null, type.entryTypes[i]!)).join(',')}]`;
    }
    default:
      // VARCHAR, JSON (its text), DECIMAL, DATE, UUID and the rest: their text, as a string.
      return JSON.stringify(String(value));
  }
}

/** `value` as JSON, with `data` (already JSON text) appended when given. */
export function pageJson(page: object, data: string | undefined): string {
  const head = JSON.stringify(page);
  return data === undefined ? head : `${head.slice(0, -1)},"data":${data}}`;
}
