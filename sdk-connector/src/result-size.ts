// The yardstick of `maxResultBytes`, shared by the runtime (which counts the rows every driver
// hands it) and by drivers that count rows as they arrive, so both refuse at the same size.
import type { JsonValue } from './connector.js';
import { ConnectorError } from './connector-error.js';

/**
 * What one row costs beyond its values (its array and record in memory): a million narrow rows
 * weigh far more than their few bytes of JSON.
 */
export const RESULT_ROW_BYTES = 64;

/**
 * About how many bytes a JSON-safe value adds to the answer's JSON, cheap rather than exact
 * (strings are not escaped, numbers count 8).
 */
export function resultValueBytes(value: JsonValue): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return 8;
  if (typeof value === 'boolean') return 5;
  if (value === null) return 4;
  // JSON and array columns: rare, and their text is what the answer carries.
  return JSON.stringify(value).length;
}

/** The error of a result past its bound (after `rows` rows, when the counter knows). */
export function resultTooLarge(maxBytes: number, rows?: number): ConnectorError {
  return new ConnectorError(
    'RESULT_TOO_LARGE',
    `the result passed its size bound of ${maxBytes} bytes${rows === undefined ? '' : ` after ${rows} rows`}`,
  );
}
