// The SQL dialect facts of MySQL/MariaDB the SDK's template scanner and compiler need: `?`
// placeholders, backslash escapes inside string literals, backtick identifiers and `#` comments
// (so a `:name` inside any of those is never taken for a parameter).
import type { SqlDialect } from '@quarry/sdk-connector';

/** MySQL and MariaDB (default sql_mode: backslash escapes on, ANSI_QUOTES off). */
export const mysqlDialect: SqlDialect = {
  family: 'mysql',
  placeholders: 'positional',
  backslashEscapes: true,
  backtickIdentifiers: true,
  hashComments: true,
};
