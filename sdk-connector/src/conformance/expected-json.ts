// What a JSON-safe result value must look like for a given input and reported column type, and
// assertions for it. Decimals may arrive as numbers or strings (either is JSON-safe) but must be
// exact; integers beyond 2^53 − 1 must be exact decimal strings; timestamps ISO-8601 with `Z`.
import { expect } from 'vitest';
import type { JsonValue } from '../connector.js';
import type { ColumnType } from '../connector-plugin.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** A value as the fixture or a param holds it, before a connector returns it. */
export type SourceValue = string | number | bigint | boolean | null;

/**
 * Asserts that `actual` is the JSON-safe form of `source` for a column reported as `type`.
 * `where` names the value in failure messages.
 */
export function expectJsonValue(
  actual: JsonValue | undefined,
  source: SourceValue,
  type: ColumnType,
  where: string,
): void {
  if (source === null) {
    expect(actual, `${where}: NULL must come back as null`).toBeNull();
    return;
  }
  switch (type) {
    case 'integer':
      expectInteger(actual, typeof source === 'boolean' ? BigInt(source ? 1 : 0) : BigInt(source), where);
      return;
    case 'decimal':
      expectDecimal(actual, String(source), where);
      return;
    case 'number':
      expect(actual, `${where}: a double must come back as the same JSON number`).toBe(Number(source));
      return;
    case 'boolean':
      expect(actual, `${where}: a boolean must come back as a JSON boolean`).toBe(source);
      return;
    case 'date':
      expect(actual, `${where}: a date must come back as YYYY-MM-DD`).toBe(String(source));
      return;
    case 'timestamp':
      expectTimestamp(actual, String(source), where);
      return;
    default:
      expect(actual, `${where}: must come back unchanged`).toBe(String(source));
  }
}

/** Asserts an integer: a JSON number within ±(2^53 − 1), else its exact decimal string. */
export function expectInteger(actual: JsonValue | undefined, expected: bigint, where: string): void {
  const safe = expected <= MAX_SAFE && expected >= -MAX_SAFE;
  if (safe) {
    expect(actual, `${where}: a safe integer must be a JSON number`).toBe(Number(expected));
  } else {
    expect(actual, `${where}: an integer beyond 2^53 must be an exact decimal string`).toBe(
      expected.toString(),
    );
  }
}

/** Asserts a decimal: a JSON number or string with exactly the expected value. */
export function expectDecimal(actual: JsonValue | undefined, expected: string, where: string): void {
  expect(['number', 'string'], `${where}: a decimal must be a JSON number or string`).toContain(
    typeof actual,
  );
  const text = typeof actual === 'number' ? plainNumber(actual) : String(actual);
  expect(
    canonicalDecimal(text),
    `${where}: decimal ${JSON.stringify(actual)} must equal ${expected} exactly`,
  ).toBe(canonicalDecimal(expected));
}

/** Asserts an ISO-8601 UTC timestamp (`…Z`) denoting the same instant as `expected`. */
export function expectTimestamp(actual: JsonValue | undefined, expected: string, where: string): void {
  expect(actual, `${where}: a timestamp must be ISO-8601 in UTC with Z`).toMatch(ISO_UTC);
  expect(Date.parse(String(actual)), `${where}: ${String(actual)} must be the instant ${expected}`).toBe(
    Date.parse(expected),
  );
}

/** Asserts every value of every row survives JSON.stringify/parse unchanged (no bigint, Date, undefined, NaN). */
export function expectJsonSafe(rows: readonly Readonly<Record<string, JsonValue>>[], where: string): void {
  let text: string;
  try {
    text = JSON.stringify(rows);
  } catch (error) {
    throw new Error(`${where}: result rows are not JSON-serialisable (${String(error)})`);
  }
  expect(JSON.parse(text), `${where}: result rows must survive a JSON round trip unchanged`).toStrictEqual(
    rows,
  );
}

/** `1e-7` → `0.0000001`: a number's exact decimal digits without exponent (for comparison only). */
function plainNumber(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  return value.toFixed(20).replace(/\.?0+$/, '');
}

/** Strips sign of zero, leading zeros and trailing fractional zeros: `-0012.500` → `-12.5`. */
function canonicalDecimal(text: string): string {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (match === null) return text;
  const int = (match[2] ?? '').replace(/^0+/, '') || '0';
  const frac = (match[3] ?? '').replace(/0+$/, '');
  const body = frac === '' ? int : `${int}.${frac}`;
  return body === '0' || match[1] !== '-' ? body : `-${body}`;
}
