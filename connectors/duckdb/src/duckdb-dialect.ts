// DuckDB's SQL dialect as the template compiler sees it: `$1`-style placeholders, each cast to
// the param's DuckDB type. The cast matters: DuckDB binds a NULL as an untyped NULL (it would
// come back as INTEGER) and infers an unconstrained placeholder's type from its first value.
import type { ScalarParamType, SqlDialect } from '@quarry/sdk-connector';

/** The DuckDB type each param type binds as (see duckdb-params.ts, which must agree). */
export const DUCKDB_PARAM_TYPES: Readonly<Record<ScalarParamType, string>> = {
  integer: 'BIGINT',
  number: 'DOUBLE',
  string: 'VARCHAR',
  enum: 'VARCHAR',
  boolean: 'BOOLEAN',
  date: 'DATE',
  // With the session time zone pinned to UTC, comparing it with a plain TIMESTAMP column is exact.
  timestamp: 'TIMESTAMPTZ',
};

/** The placeholder syntax and string/comment rules of DuckDB SQL. */
export const duckdbDialect: SqlDialect = {
  family: 'duckdb',
  placeholders: 'numbered',
  castFor(type: ScalarParamType, array: boolean): string {
    return `::${DUCKDB_PARAM_TYPES[type]}${array ? '[]' : ''}`;
  },
  // DuckDB accepts PostgreSQL-style $$…$$ / $tag$…$tag$ string constants.
  dollarQuotes: true,
};
