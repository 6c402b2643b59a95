// Test code: the conformance kit's engine-specific SQL, as an owner would write it for Snowflake,
// shared by the fake-backed and the live conformance runs. Result names are double-quoted because
// Snowflake upper-cases unquoted ones (`SELECT id` is column ID); the integer echo casts because a
// bound integer beyond 2^53 travels as text (see src/snowflake-params.ts); arrays cannot be
// selected as one bound value through this driver, so they are proven by `inList`.
import { CONFORMANCE_COLUMNS, type ConformanceSql } from '@quarry/sdk-connector/conformance';

const columns = CONFORMANCE_COLUMNS.map((column) => `${column.name} AS "${column.name}"`).join(', ');

/** Snowflake SQL for describeConnectorConformance. */
export const snowflakeConformanceSql: ConformanceSql = {
  echo: (type, array) => {
    if (array) return undefined;
    return type === 'integer' ? 'SELECT CAST(:v AS NUMBER(38,0)) AS "v"' : 'SELECT :v AS "v"';
  },
  slow: (marker) => `SELECT SYSTEM$WAIT(10) AS "w" /* ${marker} */`,
  inList: (table) => `SELECT id AS "id" FROM ${table} WHERE id IN (:ids) ORDER BY id`,
  count: (table) => `SELECT count(*) AS "n" FROM ${table}`,
  all: (table) => `SELECT ${columns} FROM ${table} ORDER BY id`,
  byName: (table) => `SELECT id AS "id" FROM ${table} WHERE name = :name ORDER BY id`,
  nullFilter: (table, column) =>
    `SELECT id AS "id" FROM ${table} WHERE (:x IS NULL OR ${column} = :x) ORDER BY id`,
};
