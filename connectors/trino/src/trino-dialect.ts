// Trino's SQL dialect as the template compiler sees it. Trino's client protocol has no parameter
// binding, but the server binds `?` parameters of `EXECUTE IMMEDIATE '…' USING …` (Trino 418+):
// templates compile to `?` placeholders and the session wraps them (see trino-statement.ts).
// Arrays bind whole, as one `ARRAY[…]` value: owners write `contains(:ids, id)`, and an array
// param can also be selected, compared or unnested like any Trino array.
import type { SqlDialect } from '@quarry/sdk-connector';

/** `?` placeholders, arrays as one value; ANSI strings (`''` doubling), `"identifiers"`, `--` and block comments. */
export const trinoDialect: SqlDialect = {
  family: 'trino',
  placeholders: 'positional',
  wholeArrays: true,
};
