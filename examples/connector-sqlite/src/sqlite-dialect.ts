// SQLite's SQL dialect as the SDK's template compiler needs it. `:name` compiles to `?`, one
// positional parameter per occurrence (arrays expand to `?, ?, …` for `IN (…)`); SQLite also
// accepts MySQL-style `` `identifiers` ``, which the scanner must skip. SQLite has no backslash
// escapes in strings and does not nest block comments (the SDK defaults).
import type { SqlDialect } from '@quarry/sdk-connector';

/** How Quarry templates compile for SQLite. */
export const sqliteDialect: SqlDialect = {
  placeholders: 'positional',
  backtickIdentifiers: true,
};
