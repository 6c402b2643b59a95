// Parses Trino's JSON responses without losing 64-bit integers. Trino sends BIGINT values as
// JSON numbers, and JSON.parse rounds any beyond 2^53 (9007199254740993 becomes …992); Node 20
// has no JSON.parse source access. So, before parsing, every integer token that is not a safe
// integer is turned into a JSON string of its exact digits; the value converters (trino-values.ts)
// read such strings as bigints. DOUBLE values are never affected: Trino writes them with a `.`
// or an exponent, and DECIMAL values already arrive as strings.

/** A JSON string token, or an integer token of 16+ digits that is not part of a larger number. */
const STRING_OR_LONG_INTEGER = /"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\w.+-])-?\d{16,}(?![\w.])/g;
/** Integers of up to 15 digits are always safe: no rewrite is needed for most pages. */
const SIXTEEN_DIGITS = /\d{16}/;

function keepExact(token: string): string {
  if (token.charCodeAt(0) === 34 /* " */ || Number.isSafeInteger(Number(token))) return token;
  return `"${token}"`;
}

/**
 * JSON.parse for Trino responses: integers beyond ±(2^53 − 1) come back as strings of their
 * exact digits instead of rounded numbers.
 *
 * @throws SyntaxError when `text` is not JSON.
 */
export function parseTrinoJson(text: string): unknown {
  if (!SIXTEEN_DIGITS.test(text)) return JSON.parse(text);
  return JSON.parse(text.replace(STRING_OR_LONG_INTEGER, keepExact));
}
