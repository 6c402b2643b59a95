// Maps Snowflake result columns (as snowflake-sdk 3.3.0 describes them) onto the SDK's logical
// column types, and turns the driver's date and timestamp objects into exact text. Numbers and
// VARIANTs are fetched as the service's own text (`fetchAsString`), so the runtime's converters
// keep NUMBER exact (integers beyond 2^53 and wide decimals become strings).
import type { ColumnInfo, ColumnType } from '@quarry/sdk-connector';

/** The part of snowflake-sdk's Column this module reads. */
export interface SnowflakeColumnLike {
  getName(): string;
  getType(): string;
  getScale(): number;
  getPrecision(): number;
}

/** The part of snowflake-sdk's SfDate (a Date with the exact epoch parts) this module reads. */
interface SfDateLike {
  getEpochSeconds(): number;
  getNanoSeconds(): number;
}

/** Converts one value the driver returned for a column; identity for most types. */
export type RawConverter = ((raw: unknown) => unknown) | undefined;

const MAX_DATE_SECONDS = 8.64e12;

function isSfDate(value: unknown): value is SfDateLike {
  return (
    value instanceof Date &&
    typeof (value as Partial<SfDateLike>).getEpochSeconds === 'function' &&
    typeof (value as Partial<SfDateLike>).getNanoSeconds === 'function'
  );
}

/** `YYYY-MM-DD` of a DATE value (the driver builds it at UTC midnight). */
export function dateText(raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  if (!isSfDate(raw)) return raw;
  const seconds = raw.getEpochSeconds();
  if (Math.abs(seconds) > MAX_DATE_SECONDS) return String(raw);
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * ISO-8601 UTC text of a TIMESTAMP_NTZ/LTZ/TZ value from its exact epoch seconds and nanoseconds:
 * at least milliseconds, and every further non-zero digit the service sent (the driver's own Date
 * keeps milliseconds only).
 */
export function timestampText(raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  if (!isSfDate(raw)) return raw;
  const seconds = raw.getEpochSeconds();
  if (Math.abs(seconds) > MAX_DATE_SECONDS) return String(raw);
  const base = new Date(seconds * 1000).toISOString(); // …T12:34:56.000Z
  const nanos = String(Math.trunc(raw.getNanoSeconds())).padStart(9, '0');
  const fraction = nanos.replace(/0+$/, '').padEnd(3, '0');
  return `${base.slice(0, 19)}.${fraction}Z`;
}

interface TypeFacts {
  readonly type: ColumnType;
  readonly nativeType: string;
  readonly convert: RawConverter;
}

function factsFor(column: SnowflakeColumnLike): TypeFacts {
  const type = column.getType().toLowerCase();
  switch (type) {
    case 'fixed': {
      const scale = column.getScale() ?? 0;
      const precision = column.getPrecision() ?? 38;
      return {
        type: scale > 0 ? 'decimal' : 'integer',
        nativeType: `NUMBER(${precision},${scale})`,
        convert: undefined,
      };
    }
    case 'real':
      return { type: 'number', nativeType: 'FLOAT', convert: undefined };
    case 'text':
      return { type: 'string', nativeType: 'VARCHAR', convert: undefined };
    case 'boolean':
      return { type: 'boolean', nativeType: 'BOOLEAN', convert: undefined };
    case 'date':
      return { type: 'date', nativeType: 'DATE', convert: dateText };
    case 'time':
      return { type: 'time', nativeType: 'TIME', convert: undefined };
    case 'timestamp_ntz':
    case 'timestamp_ltz':
    case 'timestamp_tz':
      return { type: 'timestamp', nativeType: type.toUpperCase(), convert: timestampText };
    case 'binary':
      return { type: 'bytes', nativeType: 'BINARY', convert: undefined };
    case 'variant':
    case 'object':
    case 'array':
    case 'map':
      return { type: 'json', nativeType: type.toUpperCase(), convert: undefined };
    default:
      // GEOGRAPHY, GEOMETRY, VECTOR, …: the driver's text.
      return { type: 'unknown', nativeType: type.toUpperCase(), convert: undefined };
  }
}

/** A result column's reported info and the converter its values need. */
export interface SnowflakeColumn {
  readonly info: ColumnInfo;
  readonly convert: RawConverter;
}

/** Describes one result column for the runtime. */
export function snowflakeColumn(column: SnowflakeColumnLike): SnowflakeColumn {
  const facts = factsFor(column);
  return {
    info: { name: column.getName(), type: facts.type, nativeType: facts.nativeType },
    convert: facts.convert,
  };
}
