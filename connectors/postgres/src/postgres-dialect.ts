// The SQL dialect facts for Postgres: `$1` placeholders, each with a cast so a NULL or an
// untyped literal still has a type (`$1::int8 IS NULL` works where a bare `$1 IS NULL` does not),
// and `$tag$…$tag$` strings so the template scanner skips `:name` inside them.
import type { ScalarParamType, SqlDialect } from '@quarry/sdk-connector';

const CASTS: Readonly<Record<ScalarParamType, string>> = {
  integer: 'int8',
  number: 'float8',
  string: 'text',
  enum: 'text',
  boolean: 'bool',
  date: 'date',
  timestamp: 'timestamptz',
};

/** The Postgres cast for a param type, e.g. `::int8` or `::text[]`. */
export function postgresCastFor(type: ScalarParamType, array: boolean): string {
  return `::${CASTS[type]}${array ? '[]' : ''}`;
}

/** How `:name` placeholders compile for Postgres. */
export const postgresDialect: SqlDialect = {
  family: 'postgres',
  placeholders: 'numbered',
  castFor: postgresCastFor,
  dollarQuotes: true,
};
