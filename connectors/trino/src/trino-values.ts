// Turns values as Trino's JSON protocol sends them into the plain forms the SDK runtime makes
// JSON-safe: BIGINTs exact (bigint when beyond 2^53, see trino-json.ts), DOUBLE's "NaN" and
// "Infinity" as numbers, TIMESTAMP text (`2024-01-31 12:34:56.789000`, with or without a zone)
// as ISO-8601 UTC, JSON text parsed, ROW arrays as objects keyed by field name, and nested
// values converted by their own types, because the runtime only knows the outer column's type.
import { parseTrinoJson } from './trino-json.js';
import type { TrinoType } from './trino-types.js';

/** Converts one wire value of a known type. */
export type TrinoValueConverter = (value: unknown) => unknown;

const identity: TrinoValueConverter = (value) => value;

function toInteger(value: unknown): unknown {
  // Integers beyond 2^53 arrive as digit strings (parseTrinoJson); everything else is a number.
  return typeof value === 'string' && /^-?\d+$/.test(value) ? BigInt(value) : value;
}

function toDouble(value: unknown): unknown {
  return value === 'NaN' || value === 'Infinity' || value === '-Infinity' ? Number(value) : value;
}

const TIMESTAMP = /^(-?\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?: (.+))?$/;
const OFFSET = /^([+-])(\d{2}):(\d{2})$/;

/** UTC milliseconds of a calendar time; unlike Date.UTC, years 0–99 are not taken as 19xx. */
function utcWall(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** Formatters by IANA zone name (building one costs far more than using it); null for unknown zones. */
const zoneFormats = new Map<string, Intl.DateTimeFormat | null>();

function zoneFormat(zone: string): Intl.DateTimeFormat | null {
  let format = zoneFormats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      format = null;
    }
    if (zoneFormats.size < 1000) zoneFormats.set(zone, format);
  }
  return format;
}

/** Milliseconds east of UTC of `zone` at the instant `utcMs` (Intl knows the IANA zones). */
function zoneOffsetMs(zone: string, utcMs: number): number | undefined {
  const format = zoneFormat(zone);
  if (format === null) return undefined;
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(utcMs))) parts[part.type] = part.value;
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  const wall = utcWall(
    year,
    Number(parts.month),
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  return wall - Math.floor(utcMs / 1000) * 1000;
}

/** UTC milliseconds of a wall-clock time in `zone` (UTC, `±HH:MM` or an IANA name). */
function utcMillis(wallMs: number, zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'UTC' || zone === 'Z' || zone === 'Etc/UTC') return wallMs;
  const offset = OFFSET.exec(zone);
  if (offset !== null) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3]);
    return wallMs - (offset[1] === '-' ? -minutes : minutes) * 60_000;
  }
  // Two passes settle the offset around daylight-saving changes.
  const first = zoneOffsetMs(zone, wallMs);
  if (first === undefined) return undefined;
  const second = zoneOffsetMs(zone, wallMs - first);
  return second === undefined ? undefined : wallMs - second;
}

/**
 * Trino timestamp text (`YYYY-MM-DD HH:MM:SS[.fffffffff][ zone]`) as ISO-8601 UTC with
 * milliseconds (finer digits are dropped); a timestamp without a zone is read as UTC. Text it
 * cannot read (years past 9999, unknown zones) is returned unchanged.
 */
export function trinoTimestampToIso(text: string): string {
  const m = TIMESTAMP.exec(text);
  if (m === null) return text;
  const [, year, month, day, hour, minute, second, fraction = '', zone] = m;
  const wall = utcWall(
    Number(year),
    Number(month),
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
  );
  const utc = utcMillis(wall + Number(fraction.slice(0, 3).padEnd(3, '0')), zone);
  if (utc === undefined || !Number.isFinite(utc)) return text;
  const date = new Date(utc);
  if (date.getUTCFullYear() < 0 || date.getUTCFullYear() > 9999) return text;
  return date.toISOString();
}

function toTimestamp(value: unknown): unknown {
  return typeof value === 'string' ? trinoTimestampToIso(value) : value;
}

function toJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    const parsed = parseTrinoJson(value);
    // A JSON string stays as its text, so the runtime's json converter parses it back to the
    // same string (handing it the bare string would parse "123" as a number).
    return typeof parsed === 'string' ? value : parsed;
  } catch {
    return value;
  }
}

function nestedJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return parseTrinoJson(value);
  } catch {
    return value;
  }
}

function arrayConverter(element: TrinoValueConverter): TrinoValueConverter {
  return (value) => (Array.isArray(value) ? value.map(element) : value);
}

function mapConverter(convertValue: TrinoValueConverter): TrinoValueConverter {
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    // No prototype: a key named `__proto__` stays an ordinary key.
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, item] of Object.entries(value)) out[key] = convertValue(item);
    return out;
  };
}

function rowConverter(type: TrinoType, fieldsOf: readonly TrinoValueConverter[]): TrinoValueConverter {
  const names = type.fields.map((name, i) => name ?? `_col${i}`);
  return (value) => {
    if (!Array.isArray(value)) return value;
    const out: Record<string, unknown> = Object.create(null);
    value.forEach((item, i) => {
      out[names[i] ?? `_col${i}`] = (fieldsOf[i] ?? identity)(item);
    });
    return out;
  };
}

function childConverter(type: TrinoType | undefined): TrinoValueConverter {
  return type === undefined ? identity : trinoValueConverter(type, true);
}

/**
 * The converter for one column's values. `nested` is true inside arrays, maps and rows, where
 * JSON text is parsed here (at the top level the runtime's json converter parses it).
 */
export function trinoValueConverter(type: TrinoType, nested = false): TrinoValueConverter {
  switch (type.base) {
    case 'tinyint':
    case 'smallint':
    case 'integer':
    case 'bigint':
      return toInteger;
    case 'real':
    case 'double':
      return toDouble;
    case 'timestamp':
    case 'timestamp with time zone':
      return toTimestamp;
    case 'json':
      return nested ? nestedJson : toJson;
    case 'array':
      return arrayConverter(childConverter(type.children[0]));
    case 'map':
      return mapConverter(childConverter(type.children[1]));
    case 'row':
      return rowConverter(type, type.children.map(childConverter));
    default:
      // Strings, booleans, DECIMAL (exact text), DATE, TIME, VARBINARY (base64 both ways), others.
      return identity;
  }
}
