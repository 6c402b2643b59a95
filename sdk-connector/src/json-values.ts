// Turns the values drivers return into JSON-safe values typed by column, so every connector's
// results look the same: 64-bit integers and wide decimals beyond 2^53 stay exact as strings,
// dates are `YYYY-MM-DD`, timestamps ISO-8601 UTC, bytes base64. This runs once per result cell,
// so each converter is a module-level function that allocates nothing but its result.

import type { JsonValue } from './connector.js';
import type { ColumnType } from './connector-plugin.js';

/** Converts one raw cell value to JSON. */
export type JsonConverter = (raw: unknown) => JsonValue;

const INTEGER_TEXT = /^[+-]?\d+$/;
const DATE_PREFIX = /^\d{4}-\d{2}-\d{2}/;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const PAD2: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));

function isBytes(raw: unknown): raw is Uint8Array {
  return raw instanceof Uint8Array;
}

function bytesToBase64(raw: Uint8Array): string {
  // Buffer.from(arrayBuffer, offset, length) is a view, not a copy.
  return (Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)).toString(
    'base64',
  );
}

function bigintToJson(raw: bigint): number | string {
  return raw >= MIN_SAFE && raw <= MAX_SAFE ? Number(raw) : raw.toString();
}

function finiteOrNull(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/**
 * True when decimal text `s` denotes exactly the number whose shortest form is `t`
 * (`String(Number(s))`, without an exponent): ignores a leading `+`, leading zeros of the
 * integer part and trailing zeros of the fraction, without allocating.
 */
function sameDecimal(s: string, t: string): boolean {
  let i = 0;
  let j = 0;
  const sl = s.length;
  const tl = t.length;
  const sNeg = s.charCodeAt(0) === 45; // '-'
  if (sNeg || s.charCodeAt(0) === 43) i = 1; // '+'
  const tNeg = t.charCodeAt(0) === 45;
  if (tNeg) j = 1;
  // Trim trailing fractional zeros (and a bare '.') from s.
  let end = sl;
  if (s.indexOf('.') !== -1) {
    while (end > i && s.charCodeAt(end - 1) === 48) end--;
    if (end > i && s.charCodeAt(end - 1) === 46) end--;
  }
  // Skip leading zeros of s's integer part, keeping one before '.' or the end.
  while (i < end - 1 && s.charCodeAt(i) === 48 && s.charCodeAt(i + 1) !== 46) i++;
  // "-0" and "0" are the same decimal; String(-0) is "0".
  if (sNeg !== tNeg && !(end - i === 1 && s.charCodeAt(i) === 48)) return false;
  if (end - i !== tl - j) return false;
  for (; i < end; i++, j++) if (s.charCodeAt(i) !== t.charCodeAt(j)) return false;
  return true;
}

function dateToIsoDate(d: Date): string | null {
  const t = d.getTime();
  if (Number.isNaN(t)) return null;
  const y = d.getUTCFullYear();
  if (y < 1000 || y > 9999) return d.toISOString().slice(0, 10);
  return `${y}-${PAD2[d.getUTCMonth() + 1]}-${PAD2[d.getUTCDate()]}`;
}

function dateToIsoTimestamp(d: Date): string | null {
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** Any value whose column type is not known (array elements, `unknown`-typed nested data). */
export function toGenericJson(raw: unknown): JsonValue {
  switch (typeof raw) {
    case 'string':
    case 'boolean':
      return raw;
    case 'number':
      return finiteOrNull(raw);
    case 'bigint':
      return bigintToJson(raw);
    case 'undefined':
      return null;
    case 'object': {
      if (raw === null) return null;
      if (Array.isArray(raw)) {
        const out: JsonValue[] = new Array(raw.length);
        for (let i = 0; i < raw.length; i++) out[i] = toGenericJson(raw[i]);
        return out;
      }
      if (raw instanceof Date) return dateToIsoTimestamp(raw);
      if (isBytes(raw)) return bytesToBase64(raw);
      if (raw instanceof Map) {
        const out: Record<string, JsonValue> = {};
        for (const [k, v] of raw) setKey(out, String(k), toGenericJson(v));
        return out;
      }
      const proto = Object.getPrototypeOf(raw);
      if (proto === Object.prototype || proto === null) {
        const out: Record<string, JsonValue> = {};
        for (const k of Object.keys(raw)) {
          const v = (raw as Record<string, unknown>)[k];
          if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol')
            setKey(out, k, toGenericJson(v));
        }
        return out;
      }
      // Driver value classes (decimal, interval, DuckDB values, …) know their own text form.
      return String(raw);
    }
    default:
      return String(raw);
  }
}

/** Sets a key even when it is `__proto__`, which plain assignment would treat as the prototype. */
function setKey(out: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    out[key] = value;
  }
}

function toStringJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return raw;
  if (raw instanceof Date) return dateToIsoTimestamp(raw);
  if (isBytes(raw)) return bytesToBase64(raw);
  if (typeof raw === 'object') {
    const proto = Object.getPrototypeOf(raw);
    if (Array.isArray(raw) || proto === Object.prototype || proto === null) {
      return JSON.stringify(toGenericJson(raw));
    }
  }
  return String(raw);
}

function toIntegerJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'number') {
    if (Number.isSafeInteger(raw)) return raw;
    // A float already past 2^53 (or a fraction) cannot be made exact again: say what it is.
    return Number.isInteger(raw) ? BigInt(raw).toString() : finiteOrNull(raw);
  }
  if (typeof raw === 'bigint') return bigintToJson(raw);
  if (typeof raw === 'string') {
    if (!INTEGER_TEXT.test(raw)) return raw;
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : raw;
  }
  return toDecimalJson(raw);
}

function toDecimalJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'number') return finiteOrNull(raw);
  if (typeof raw === 'bigint') return bigintToJson(raw);
  const s = typeof raw === 'string' ? raw : String(raw);
  if (s.length === 0) return s;
  const n = Number(s);
  if (!Number.isFinite(n)) {
    // NaN/Infinity (Postgres numeric allows them) have no JSON number; text that is not a number stays text.
    return s === 'NaN' || s === 'Infinity' || s === '-Infinity' ? null : s;
  }
  const t = String(n);
  // Exponent forms (|n| < 1e-6 or ≥ 1e21) are kept as the exact text rather than compared.
  if (t.indexOf('e') !== -1) return s;
  return sameDecimal(s, t) ? n : s;
}

function toNumberJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'number') return finiteOrNull(raw);
  if (typeof raw === 'bigint') return Number(raw);
  if (typeof raw === 'string') {
    if (raw.length === 0) return raw;
    const n = Number(raw);
    return Number.isNaN(n) && raw !== 'NaN' ? raw : finiteOrNull(n);
  }
  return toGenericJson(raw);
}

function toBooleanJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'number') return raw !== 0;
  if (typeof raw === 'bigint') return raw !== 0n;
  if (typeof raw === 'string') {
    if (raw === 't' || raw === 'true' || raw === '1' || raw === 'TRUE') return true;
    if (raw === 'f' || raw === 'false' || raw === '0' || raw === 'FALSE') return false;
    return raw;
  }
  return toGenericJson(raw);
}

function toDateJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') {
    if (raw.length === 10) return raw;
    return DATE_PREFIX.test(raw) ? raw.slice(0, 10) : raw;
  }
  // A Date for a DATE column is at UTC or local midnight depending on the driver; connectors
  // should hand strings. We read UTC fields, which is right for UTC-midnight Dates.
  if (raw instanceof Date) return dateToIsoDate(raw);
  return toStringJson(raw);
}

const TIMESTAMP_TEXT =
  /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

function timestampFromText(raw: string): JsonValue {
  // Fast path: already `YYYY-MM-DDTHH:MM:SS.sssZ`.
  if (raw.length === 24 && raw.charCodeAt(23) === 90 && raw.charCodeAt(10) === 84) return raw;
  const m = TIMESTAMP_TEXT.exec(raw);
  if (m === null) return raw; // 'infinity', BC dates, …: keep the engine's text.
  const [, day, clock, fraction = '', zone] = m;
  const seconds = clock!.length === 5 ? `${clock}:00` : clock;
  let offset = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : zone;
  if (offset.length === 3) offset = `${offset}:00`;
  else if (offset.length === 5) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const ms = `${fraction}000`.slice(0, 3);
  const d = new Date(`${day}T${seconds}.${ms}${offset}`);
  if (Number.isNaN(d.getTime())) return raw;
  const iso = d.toISOString();
  // An offset moves whole minutes, so digits past the millisecond are unchanged: keep them.
  return fraction.length > 3 ? `${iso.slice(0, 23)}${fraction.slice(3)}Z` : iso;
}

function toTimestampJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return timestampFromText(raw);
  if (raw instanceof Date) return dateToIsoTimestamp(raw);
  if (typeof raw === 'bigint') {
    // Microseconds since the epoch (DuckDB, BigQuery, Arrow).
    let ms = raw / 1000n;
    let micros = raw % 1000n;
    if (micros < 0n) {
      ms -= 1n;
      micros += 1000n;
    }
    const d = new Date(Number(ms));
    if (Number.isNaN(d.getTime())) return raw.toString();
    const iso = d.toISOString();
    return micros === 0n ? iso : `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}Z`;
  }
  if (typeof raw === 'number') return dateToIsoTimestamp(new Date(raw)); // epoch milliseconds
  return toStringJson(raw);
}

function toTimeJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return raw;
  if (raw instanceof Date) {
    const iso = dateToIsoTimestamp(raw);
    return iso === null ? null : iso.slice(11, 23);
  }
  return toStringJson(raw);
}

function toBytesJson(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (isBytes(raw)) return bytesToBase64(raw);
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString('base64');
  return toStringJson(raw);
}

function toJsonJson(raw: unknown): JsonValue {
  if (typeof raw === 'string') {
    try {
      return toGenericJson(JSON.parse(raw));
    } catch {
      return raw; // not JSON text after all: keep it rather than lose it
    }
  }
  return toGenericJson(raw);
}

function toArrayJson(raw: unknown): JsonValue {
  // Elements' types are unknown here, so each is converted generically; a driver that hands the
  // engine's array text (`{1,2}`) gets it back unchanged.
  return toGenericJson(raw);
}

const CONVERTERS: Readonly<Record<ColumnType, JsonConverter>> = {
  string: toStringJson,
  integer: toIntegerJson,
  number: toNumberJson,
  decimal: toDecimalJson,
  boolean: toBooleanJson,
  date: toDateJson,
  timestamp: toTimestampJson,
  time: toTimeJson,
  bytes: toBytesJson,
  json: toJsonJson,
  array: toArrayJson,
  unknown: toStringJson,
};

/**
 * The converter for one column type, for callers converting many cells of the same column
 * (look it up once per column, not per cell). Unknown type names fall back to `unknown`.
 */
export function jsonConverterFor(type: ColumnType): JsonConverter {
  return CONVERTERS[type] ?? toStringJson;
}

/**
 * Makes one driver value JSON-safe according to its column type.
 *
 * - `integer`: a number when within ±(2^53 − 1), else a decimal string.
 * - `decimal`: a number when its text round-trips exactly through a JS number
 *   (`'1234.50'` → `1234.5`), else the exact decimal string.
 * - `number`: a number; NaN and ±Infinity become `null`.
 * - `date`: `YYYY-MM-DD` (a `Date` is read in UTC). `timestamp`: ISO-8601 UTC ending in `Z`
 *   (strings without an offset are taken as UTC; a bigint is microseconds since the epoch).
 * - `time`: a string. `bytes`: base64. `json`: parsed when text, else a deep JSON-safe copy
 *   (bigints beyond 2^53 → strings). `array`: elements converted recursively.
 * - `string` / `unknown`: text (`Date` → ISO, bytes → base64, objects → JSON text).
 * - `null` / `undefined` → `null` for every type.
 */
export function toJsonValue(type: ColumnType, raw: unknown): JsonValue {
  return jsonConverterFor(type)(raw);
}
