// Snowflake's SQL dialect as the template compiler sees it: `?` placeholders (arrays expanded for
// `IN (…)`), a cast after every placeholder whose type the driver's bind cannot carry, backslash
// escapes inside '…' strings and $$…$$ string constants.
//
// Why the casts: snowflake-sdk 3.3.0 infers each bind's wire type from the JS value (a number is
// FIXED or REAL, a boolean BOOLEAN, anything else TEXT), so a date, a timestamp or a NULL would
// otherwise reach Snowflake as text. Integers and strings stay bare: an integer goes as FIXED (or
// as exact TEXT past 2^53, which Snowflake coerces by context) and `LIMIT ?` / `TOP ?` take only
// a plain bind, not an expression; a string is TEXT already.
import type { ScalarParamType, SqlDialect } from '@quarry/sdk-connector';

/** The cast appended to each placeholder, by param type; absent types are bound bare. */
export const SNOWFLAKE_PARAM_CASTS: Readonly<Partial<Record<ScalarParamType, string>>> = {
  number: '::FLOAT',
  boolean: '::BOOLEAN',
  date: '::DATE',
  // Compared with TIMESTAMP_NTZ columns in the session's TIMEZONE, which sessions pin to UTC.
  timestamp: '::TIMESTAMP_TZ',
};

/** Snowflake SQL: `?` placeholders, backslash escapes in strings, `$$…$$` constants. */
export const snowflakeDialect: SqlDialect = {
  family: 'snowflake',
  placeholders: 'positional',
  castFor(type: ScalarParamType): string | undefined {
    return SNOWFLAKE_PARAM_CASTS[type];
  },
  // Snowflake processes \' \\ \n … inside single-quoted strings.
  backslashEscapes: true,
  // Snowflake's $$…$$ string constants (a superset is recognised, which only errs on the safe side).
  dollarQuotes: true,
};
