// Column type mapping for MySQL/MariaDB result sets: turns mysql2's field metadata (wire type code,
// length, flags, charset) into Quarry's logical ColumnType plus, where the raw driver value is not
// what the runtime expects, a per-value converter. Converters run only for the columns that need
// one, so a result of plain integers and strings costs nothing extra.
import type { ColumnInfo, ColumnType } from '@quarry/sdk-connector';

/** The parts of mysql2's FieldPacket the mapping reads. */
export interface MysqlField {
  readonly name: string;
  readonly columnType?: number;
  readonly type?: number;
  readonly characterSet?: number;
  readonly flags?: number | readonly string[];
  readonly columnLength?: number;
  readonly decimals?: number;
  /** MariaDB ≥ 10.5 extended metadata: `json` for JSON columns (which are LONGTEXT there). */
  readonly extendedFormat?: string;
  readonly extendedTypeName?: string;
}

/** Turns one non-null raw driver value into the value handed to the runtime. */
export type ValueConverter = (value: unknown) => unknown;

/** A result column: what is reported, and how its values are converted (if at all). */
export interface MysqlColumn {
  readonly info: ColumnInfo;
  readonly convert?: ValueConverter;
}

// Wire type codes (mysql2's lib/constants/types.js; MySQL's enum_field_types).
const T = {
  DECIMAL: 0x00,
  TINY: 0x01,
  SHORT: 0x02,
  LONG: 0x03,
  FLOAT: 0x04,
  DOUBLE: 0x05,
  NULL: 0x06,
  TIMESTAMP: 0x07,
  LONGLONG: 0x08,
  INT24: 0x09,
  DATE: 0x0a,
  TIME: 0x0b,
  DATETIME: 0x0c,
  YEAR: 0x0d,
  NEWDATE: 0x0e,
  VARCHAR: 0x0f,
  BIT: 0x10,
  VECTOR: 0xf2,
  JSON: 0xf5,
  NEWDECIMAL: 0xf6,
  ENUM: 0xf7,
  SET: 0xf8,
  TINY_BLOB: 0xf9,
  MEDIUM_BLOB: 0xfa,
  LONG_BLOB: 0xfb,
  BLOB: 0xfc,
  VAR_STRING: 0xfd,
  STRING: 0xfe,
  GEOMETRY: 0xff,
} as const;

const UNSIGNED_FLAG = 32;
const ENUM_FLAG = 256;
const SET_FLAG = 2048;
/** Charset 63 is `binary`: BLOB/BINARY/VARBINARY rather than TEXT/CHAR/VARCHAR. */
const BINARY_CHARSET = 63;

const INTEGER_NAMES: Readonly<Record<number, string>> = {
  [T.TINY]: 'TINYINT',
  [T.SHORT]: 'SMALLINT',
  [T.INT24]: 'MEDIUMINT',
  [T.LONG]: 'INT',
  [T.LONGLONG]: 'BIGINT',
  [T.YEAR]: 'YEAR',
};

const BLOB_CODES: ReadonlySet<number> = new Set([T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB, T.BLOB]);

/**
 * `YYYY-MM-DD HH:MM:SS[.ffffff]` (a DATETIME, or a TIMESTAMP read with the session time zone at
 * UTC) → `YYYY-MM-DDTHH:MM:SS.fff[fff]Z`: at least milliseconds, microseconds kept when the
 * column has them (as the SDK's toJsonValue does). DATETIME has no zone; Quarry reads it as UTC,
 * the zone the session runs in. MySQL's zero date (`0000-00-00 …`) is not an instant: null.
 */
export function mysqlTimestampToIso(value: unknown): unknown {
  if (typeof value !== 'string' || value.length < 19) return value;
  if (value.startsWith('0000-00-00')) return null;
  const fraction = value.length > 20 ? value.slice(20).padEnd(3, '0') : '000';
  return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction}Z`;
}

/** A DATE as `YYYY-MM-DD`; MySQL's zero date becomes null. */
export function mysqlDateToIso(value: unknown): unknown {
  return value === '0000-00-00' ? null : value;
}

/** BIT(n) arrives as a big-endian Buffer; BIT(1) is a flag, wider BITs are unsigned integers. */
function bitToBoolean(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.some((byte) => byte !== 0) : value;
}

function bitToInteger(value: unknown): unknown {
  if (!Buffer.isBuffer(value)) return value;
  let n = 0n;
  for (const byte of value) n = (n << 8n) | BigInt(byte);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
}

function flagsOf(field: MysqlField): number {
  return typeof field.flags === 'number' ? field.flags : 0;
}

function column(name: string, type: ColumnType, nativeType: string, convert?: ValueConverter): MysqlColumn {
  return convert === undefined
    ? { info: { name, type, nativeType } }
    : { info: { name, type, nativeType }, convert };
}

/**
 * Maps one mysql2 field to a Quarry column.
 *
 * Decisions: TINYINT(1) and BIT(1) are `boolean` (MySQL's BOOLEAN is TINYINT(1); 0 is false, any
 * other value true, which the runtime's toJsonValue does for numbers); YEAR and wider
 * BITs are `integer`; BIGINT and DECIMAL arrive as strings (bigNumberStrings) so no precision is
 * lost; JSON is `json` on MySQL and on MariaDB ≥ 10.5 (extended metadata), plain `string` on
 * older MariaDB where JSON is just LONGTEXT; binary-charset strings and GEOMETRY are `bytes`.
 */
export function mysqlColumn(field: MysqlField): MysqlColumn {
  const code = field.columnType ?? field.type ?? T.VAR_STRING;
  const flags = flagsOf(field);
  const unsigned = (flags & UNSIGNED_FLAG) !== 0 ? ' UNSIGNED' : '';
  const binary = field.characterSet === BINARY_CHARSET;
  const name = field.name;

  const integerName = INTEGER_NAMES[code];
  if (integerName !== undefined) {
    if (code === T.TINY && field.columnLength === 1) return column(name, 'boolean', 'TINYINT(1)');
    return column(name, 'integer', `${integerName}${unsigned}`);
  }
  switch (code) {
    case T.DECIMAL:
    case T.NEWDECIMAL:
      return column(name, 'decimal', `DECIMAL${unsigned}`);
    case T.FLOAT:
      return column(name, 'number', 'FLOAT');
    case T.DOUBLE:
      return column(name, 'number', 'DOUBLE');
    case T.DATE:
    case T.NEWDATE:
      return column(name, 'date', 'DATE', mysqlDateToIso);
    case T.DATETIME:
      return column(name, 'timestamp', 'DATETIME', mysqlTimestampToIso);
    case T.TIMESTAMP:
      return column(name, 'timestamp', 'TIMESTAMP', mysqlTimestampToIso);
    case T.TIME:
      return column(name, 'time', 'TIME');
    case T.BIT:
      return field.columnLength === 1
        ? column(name, 'boolean', 'BIT(1)', bitToBoolean)
        : column(name, 'integer', 'BIT', bitToInteger);
    case T.JSON:
      return column(name, 'json', 'JSON');
    case T.GEOMETRY:
      return column(name, 'bytes', 'GEOMETRY');
    case T.VECTOR:
      return column(name, 'unknown', 'VECTOR');
    case T.NULL:
      return column(name, 'unknown', 'NULL');
    default:
      break;
  }
  if (field.extendedFormat === 'json') return column(name, 'json', 'JSON');
  if ((flags & ENUM_FLAG) !== 0 || code === T.ENUM) return column(name, 'string', 'ENUM');
  if ((flags & SET_FLAG) !== 0 || code === T.SET) return column(name, 'string', 'SET');
  if (BLOB_CODES.has(code)) return column(name, binary ? 'bytes' : 'string', binary ? 'BLOB' : 'TEXT');
  if (code === T.STRING) return column(name, binary ? 'bytes' : 'string', binary ? 'BINARY' : 'CHAR');
  return column(name, binary ? 'bytes' : 'string', binary ? 'VARBINARY' : 'VARCHAR');
}
