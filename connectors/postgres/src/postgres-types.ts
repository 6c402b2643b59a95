// Postgres column types: which logical ColumnType each type OID reports, and how its text-format
// value is parsed. Parsing is per query and never touches pg's global type registry, so another
// pg user in the same process (the gateway's store) cannot change what a connector returns.
import type { ColumnType } from '@quarry/sdk-connector';
import pg from 'pg';

/** Turns one non-null text-format value into what the runtime expects for its ColumnType. */
export type PgValueParser = (text: string) => unknown;

/** What a connector knows about one Postgres type OID. */
export interface PgTypeInfo {
  readonly type: ColumnType;
  /** The Postgres type name, e.g. `int8` or `timestamptz[]`. */
  readonly nativeType: string;
  /** Undefined means the text is handed over as is. */
  readonly parse: PgValueParser | undefined;
}

// postgres-array (through pg-types) parses array literals, nested ones included; @types/pg
// declares `arrayParser` as a function, but at runtime it is `{create(source, transform)}`.
const arrayParser = pg.types.arrayParser as unknown as {
  create(source: string, transform: (entry: string) => unknown): { parse(): unknown[] };
};

const parseBoolean: PgValueParser = (text) => text === 't';
const parseNumber: PgValueParser = (text) => Number(text);
const parseJson: PgValueParser = (text) => JSON.parse(text);

/** bytea in `hex` output (what sessions ask for) or the older `escape` format. */
export const parseBytea: PgValueParser = (text) => {
  if (text.startsWith('\\x')) return Buffer.from(text.slice(2), 'hex');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && text[i + 1] === '\\') {
      bytes.push(0x5c);
      i += 1;
    } else if (text[i] === '\\') {
      bytes.push(Number.parseInt(text.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(text.charCodeAt(i));
    }
  }
  return Buffer.from(bytes);
};

const TIMESTAMP =
  /^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)?( BC)?$/;

/**
 * Converts Postgres' ISO text for `timestamp` and `timestamptz` to ISO-8601 UTC with milliseconds
 * (`2024-01-31T12:00:00.000Z`). A timestamp without time zone is read as UTC, never local time.
 * Microseconds are cut to milliseconds; `infinity` and `-infinity` stay as they are.
 */
export const parseTimestamp: PgValueParser = (text) => {
  const m = TIMESTAMP.exec(text);
  if (m === null) return text;
  const [, year, month, day, hour, minute, second, fraction = '', sign, offH, offM, offS, bc] = m;
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const offsetSeconds =
    sign === undefined ? 0 : Number(offH) * 3600 + Number(offM ?? 0) * 60 + Number(offS ?? 0);
  // The common case (UTC session or no zone, four-digit AD year) needs no Date at all.
  if (offsetSeconds === 0 && bc === undefined && year!.length === 4) {
    return `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}Z`;
  }
  const date = new Date(0);
  // setUTCFullYear, because Date.UTC maps years 0–99 to 1900–1999.
  date.setUTCFullYear(bc === undefined ? Number(year) : 1 - Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), Number(millis));
  const utc = date.getTime() - (sign === '-' ? -1 : 1) * offsetSeconds * 1000;
  return Number.isNaN(utc) ? text : new Date(utc).toISOString();
};

function scalar(type: ColumnType, nativeType: string, parse?: PgValueParser): PgTypeInfo {
  return { type, nativeType, parse };
}

// Scalar types by OID (see pg_type, or pg-types' builtins).
const SCALARS: ReadonlyMap<number, PgTypeInfo> = new Map([
  [16, scalar('boolean', 'bool', parseBoolean)],
  [17, scalar('bytes', 'bytea', parseBytea)],
  [18, scalar('string', 'char')],
  [19, scalar('string', 'name')],
  // int8 stays a string so values beyond 2^53 survive; the runtime decides number vs string.
  [20, scalar('integer', 'int8')],
  [21, scalar('integer', 'int2', parseNumber)],
  [23, scalar('integer', 'int4', parseNumber)],
  [25, scalar('string', 'text')],
  [26, scalar('integer', 'oid', parseNumber)],
  [114, scalar('json', 'json', parseJson)],
  [142, scalar('string', 'xml')],
  [650, scalar('string', 'cidr')],
  [700, scalar('number', 'float4', parseNumber)],
  [701, scalar('number', 'float8', parseNumber)],
  [705, scalar('string', 'unknown')],
  [790, scalar('string', 'money')],
  [829, scalar('string', 'macaddr')],
  [869, scalar('string', 'inet')],
  [1042, scalar('string', 'bpchar')],
  [1043, scalar('string', 'varchar')],
  [1082, scalar('date', 'date')],
  [1083, scalar('time', 'time')],
  [1114, scalar('timestamp', 'timestamp', parseTimestamp)],
  [1184, scalar('timestamp', 'timestamptz', parseTimestamp)],
  [1186, scalar('unknown', 'interval')],
  [1266, scalar('string', 'timetz')],
  [1560, scalar('string', 'bit')],
  [1562, scalar('string', 'varbit')],
  [1700, scalar('decimal', 'numeric')],
  [2950, scalar('string', 'uuid')],
  [3802, scalar('json', 'jsonb', parseJson)],
]);

// Array type OID → element type OID.
const ARRAYS: ReadonlyMap<number, number> = new Map([
  [1000, 16],
  [1001, 17],
  [1002, 18],
  [1003, 19],
  [1016, 20],
  [1005, 21],
  [1007, 23],
  [1009, 25],
  [1028, 26],
  [199, 114],
  [143, 142],
  [651, 650],
  [1021, 700],
  [1022, 701],
  [791, 790],
  [1040, 829],
  [1041, 869],
  [1014, 1042],
  [1015, 1043],
  [1182, 1082],
  [1183, 1083],
  [1115, 1114],
  [1185, 1184],
  [1187, 1186],
  [1270, 1266],
  [1231, 1700],
  [2951, 2950],
  [3807, 3802],
]);

// Array elements reach the runtime without a column type, so an int8 element must say what it is:
// a bigint becomes a JSON number when safe and exact text beyond 2^53.
const ELEMENT_PARSERS: ReadonlyMap<number, PgValueParser> = new Map([[20, (text: string) => BigInt(text)]]);

function arrayOf(elementOid: number): PgTypeInfo {
  const element = SCALARS.get(elementOid)!;
  const transform = ELEMENT_PARSERS.get(elementOid) ?? element.parse ?? ((entry: string) => entry);
  return {
    type: 'array',
    nativeType: `${element.nativeType}[]`,
    parse: (text) => arrayParser.create(text, transform).parse(),
  };
}

const KNOWN: ReadonlyMap<number, PgTypeInfo> = new Map([
  ...SCALARS,
  ...[...ARRAYS].map(([oid, elementOid]): [number, PgTypeInfo] => [oid, arrayOf(elementOid)]),
]);

/**
 * The ColumnType, native name and parser for a type OID. Types we do not know (enums, domains
 * of extensions, composites) report `unknown` and arrive as Postgres' text, which the runtime
 * renders as a string.
 */
export function postgresTypeInfo(oid: number): PgTypeInfo {
  return KNOWN.get(oid) ?? { type: 'unknown', nativeType: `oid:${oid}`, parse: undefined };
}
