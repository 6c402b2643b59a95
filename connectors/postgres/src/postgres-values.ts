// Bound values in Postgres' text format. Every value travels as text in a Bind message and the
// placeholder's cast (see postgres-dialect) types it on the server, so nothing is ever spliced
// into SQL and the encoding is the same for a value and for each element of an array.
import type { BoundParam, ScalarValue } from '@quarry/sdk-connector';

/** One scalar as Postgres input text; bigint as its decimal digits so no precision is lost. */
function scalarText(value: ScalarValue): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return typeof value === 'string' ? value : String(value);
}

/** An array literal (`{"a","b",NULL}`): every element quoted, so commas, braces and quotes are data. */
function arrayLiteral(values: readonly (ScalarValue | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const value = values[i];
    out +=
      value === null || value === undefined ? 'NULL' : `"${scalarText(value).replace(/[\\"]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

/** The Bind-message values for a compiled query's params, in placeholder order. */
export function toPostgresValues(params: readonly BoundParam[]): (string | null)[] {
  const values = new Array<string | null>(params.length);
  for (let i = 0; i < params.length; i++) {
    const { value } = params[i]!;
    if (value === null) values[i] = null;
    else if (Array.isArray(value)) values[i] = arrayLiteral(value as readonly ScalarValue[]);
    else values[i] = scalarText(value as ScalarValue);
  }
  return values;
}
