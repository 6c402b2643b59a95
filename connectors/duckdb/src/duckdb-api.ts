// @duckdb/node-api's values, loaded with require. The package is CommonJS: imported from an ES
// module, node first scans each of its files for their export names (cjs-module-lexer), and
// loading it took ~125 ms against ~70 ms by require, paid by the first DuckDB call after every
// start, a newcomer's first demo answer among them (bench/README.md, "A restart waiting on the
// WebAssembly compiler"). Types still come from the package itself (`import type`).
import { createRequire } from 'node:module';

type Api = typeof import('@duckdb/node-api');
const api: Api = createRequire(import.meta.url)('@duckdb/node-api');

export const {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  DuckDBUnionValue,
  dateValue,
  LIST,
  listValue,
  StatementType,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} = api;

// The classes the connector also names as types: their instances' types, beside the values.
export type DuckDBDecimalValue = InstanceType<Api['DuckDBDecimalValue']>;
export type DuckDBInstance = InstanceType<Api['DuckDBInstance']>;
