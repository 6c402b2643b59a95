// Test code: how the fake Snowflake server (fake-snowflake-server.ts) turns binds into DuckDB
// values and DuckDB results into Snowflake's JSON result format (`queryResultFormat: "json"`),
// i.e. what snowflake-sdk 3.3.0 parses: a `rowtype` entry per column and every value as text:
//
//   fixed         integers and DECIMAL(p,s), exact decimal text ("1234.50")
//   real          DOUBLE/FLOAT, JS number text ("-2.5e+100")
//   text          VARCHAR
//   boolean       "1" / "0"
//   date          days since the epoch ("19782")
//   time          seconds since midnight, 9 fraction digits
//   timestamp_ntz seconds since the epoch, 9 fraction digits ("1706704496.789000000")
//   timestamp_tz  the same plus the offset index (minutes + 1440): "1706704496.789000000 1440"
//   binary        upper-case hex
//   variant/array/object  JSON text
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBPreparedStatement,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
  HUGEINT,
  type Json,
  VARCHAR,
} from '@duckdb/node-api';

/** One `bindings` entry as snowflake-sdk sends it. */
export interface WireBind {
  readonly type: string;
  readonly value: string | readonly (string | null)[] | null;
}

/** One column of Snowflake's `rowtype`. */
export interface RowType {
  readonly name: string;
  readonly database: string;
  readonly schema: string;
  readonly table: string;
  readonly type: string;
  readonly precision: number | null;
  readonly scale: number | null;
  readonly length: number | null;
  readonly byteLength: number | null;
  readonly nullable: boolean;
  readonly collation: null;
}

const MIN_BIGINT = -(2n ** 63n);
const MAX_BIGINT = 2n ** 63n - 1n;
const INTEGER_TEXT = /^-?\d+$/;

/** Binds `bindings` ({"1": …, "2": …}) to the prepared statement's `?`s the way Snowflake types them. */
export function bindWireValues(
  prepared: DuckDBPreparedStatement,
  bindings: Readonly<Record<string, WireBind>>,
) {
  const count = prepared.parameterCount;
  const given = Object.keys(bindings).length;
  if (given !== count) {
    throw new BindCountError(`the statement has ${count} bind variables but ${given} values were bound`);
  }
  for (let n = 1; n <= count; n++) {
    const bind = bindings[String(n)];
    if (bind === undefined) throw new BindCountError(`bind variable ${n} has no value`);
    const value = bind.value;
    if (value === null) {
      prepared.bindValue(n, null, VARCHAR);
    } else if (typeof value !== 'string') {
      throw new BindCountError('array binds are not supported by this fake');
    } else if (bind.type === 'FIXED' && INTEGER_TEXT.test(value)) {
      const big = BigInt(value);
      prepared.bindValue(n, big, big >= MIN_BIGINT && big <= MAX_BIGINT ? BIGINT : HUGEINT);
    } else if (bind.type === 'REAL' || bind.type === 'FIXED') {
      prepared.bindValue(n, Number(value), DOUBLE);
    } else if (bind.type === 'BOOLEAN') {
      prepared.bindValue(n, value === 'true' || value === '1', BOOLEAN);
    } else {
      // TEXT (and any other type): a string Snowflake coerces by context, as DuckDB does for a
      // VARCHAR bound to a typed parameter.
      prepared.bindValue(n, value, VARCHAR);
    }
  }
}

/** A bind count or shape Snowflake would refuse. */
export class BindCountError extends Error {}

function rowType(name: string, type: string, extra: Partial<RowType> = {}): RowType {
  return {
    name,
    database: '',
    schema: '',
    table: '',
    type,
    precision: null,
    scale: null,
    length: null,
    byteLength: null,
    nullable: true,
    collation: null,
    ...extra,
  };
}

/** Snowflake's rowtype entry for a DuckDB column. */
export function rowTypeFor(name: string, type: DuckDBType): RowType {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return rowType(name, 'boolean');
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.UHUGEINT:
      return rowType(name, 'fixed', { precision: 38, scale: 0 });
    case DuckDBTypeId.DECIMAL:
      return rowType(name, 'fixed', { precision: type.width, scale: type.scale });
    case DuckDBTypeId.FLOAT:
    case DuckDBTypeId.DOUBLE:
      return rowType(name, 'real');
    case DuckDBTypeId.VARCHAR:
      return type.alias?.toUpperCase() === 'JSON'
        ? rowType(name, 'variant')
        : rowType(name, 'text', { length: 16_777_216, byteLength: 16_777_216 });
    case DuckDBTypeId.DATE:
      return rowType(name, 'date');
    case DuckDBTypeId.TIME:
      return rowType(name, 'time', { scale: 9 });
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return rowType(name, 'timestamp_ntz', { precision: 0, scale: 9 });
    case DuckDBTypeId.TIMESTAMP_TZ:
      return rowType(name, 'timestamp_tz', { precision: 0, scale: 9 });
    case DuckDBTypeId.BLOB:
      return rowType(name, 'binary', { length: 8_388_608, byteLength: 8_388_608 });
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return rowType(name, 'array');
    case DuckDBTypeId.STRUCT:
    case DuckDBTypeId.MAP:
      return rowType(name, 'object');
    default:
      return rowType(name, 'text');
  }
}

/** `micros` (since the epoch or midnight) as seconds with 9 fraction digits. */
function secondsText(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const seconds = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${seconds}.${fraction}000`;
}

function microsOf(value: DuckDBValue): bigint | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { micros?: unknown; millis?: unknown; seconds?: unknown; nanos?: unknown };
  if (typeof v.micros === 'bigint') return v.micros;
  if (typeof v.millis === 'bigint') return v.millis * 1000n;
  if (typeof v.seconds === 'bigint') return v.seconds * 1_000_000n;
  if (typeof v.nanos === 'bigint') return v.nanos / 1000n;
  return undefined;
}

/**
 * The text Snowflake sends for `value` in a column of `rowtype` (null stays null). `json` is the
 * same value as DuckDB's JSON conversion, used for nested values.
 */
export function wireValue(value: DuckDBValue, json: Json, type: RowType): string | null {
  if (value === null) return null;
  switch (type.type) {
    case 'boolean':
      return value === true ? '1' : '0';
    case 'fixed':
    case 'real':
    case 'text':
      return String(value);
    case 'date':
      return String((value as { days: number }).days);
    case 'time':
    case 'timestamp_ntz':
      return secondsText(microsOf(value) ?? 0n);
    case 'timestamp_tz':
      return `${secondsText(microsOf(value) ?? 0n)} 1440`;
    case 'binary':
      return Buffer.from((value as { bytes: Uint8Array }).bytes)
        .toString('hex')
        .toUpperCase();
    case 'variant':
      return String(value);
    default:
      return JSON.stringify(json);
  }
}
