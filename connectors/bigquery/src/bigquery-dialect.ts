// BigQuery's SQL dialect as the template compiler sees it: `:name` compiles to `@name` (BigQuery's
// named query parameters), backtick identifiers, strings with backslash escapes ('…' and "…" are
// both strings in GoogleSQL) and `#` line comments.
import type { ScalarParamType, SqlDialect } from '@quarry/sdk-connector';

/** The BigQuery type each param type is bound as (every param is sent with its type). */
export const BIGQUERY_PARAM_TYPES: Readonly<Record<ScalarParamType, string>> = {
  integer: 'INT64',
  number: 'FLOAT64',
  string: 'STRING',
  enum: 'STRING',
  boolean: 'BOOL',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
};

/** The placeholder syntax and string/comment rules of GoogleSQL. */
export const bigqueryDialect: SqlDialect = {
  family: 'bigquery',
  placeholders: 'named',
  backtickIdentifiers: true,
  backslashEscapes: true,
  hashComments: true,
};
