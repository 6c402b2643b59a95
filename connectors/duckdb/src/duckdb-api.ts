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
  DuckDBTypeId,
  dateValue,
  LIST,
  listValue,
  StatementType,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} = api;

// The classes, each a value and (for annotations and `instanceof`) the type of its instances.
export const DuckDBArrayValue = api.DuckDBArrayValue;
export type DuckDBArrayValue = InstanceType<Api['DuckDBArrayValue']>;
export const DuckDBBlobValue = api.DuckDBBlobValue;
export type DuckDBBlobValue = InstanceType<Api['DuckDBBlobValue']>;
export const DuckDBDateValue = api.DuckDBDateValue;
export type DuckDBDateValue = InstanceType<Api['DuckDBDateValue']>;
export const DuckDBDecimalValue = api.DuckDBDecimalValue;
export type DuckDBDecimalValue = InstanceType<Api['DuckDBDecimalValue']>;
export const DuckDBInstance = api.DuckDBInstance;
export type DuckDBInstance = InstanceType<Api['DuckDBInstance']>;
export const DuckDBListValue = api.DuckDBListValue;
export type DuckDBListValue = InstanceType<Api['DuckDBListValue']>;
export const DuckDBMapValue = api.DuckDBMapValue;
export type DuckDBMapValue = InstanceType<Api['DuckDBMapValue']>;
export const DuckDBStructValue = api.DuckDBStructValue;
export type DuckDBStructValue = InstanceType<Api['DuckDBStructValue']>;
export const DuckDBTimestampMillisecondsValue = api.DuckDBTimestampMillisecondsValue;
export type DuckDBTimestampMillisecondsValue = InstanceType<Api['DuckDBTimestampMillisecondsValue']>;
export const DuckDBTimestampNanosecondsValue = api.DuckDBTimestampNanosecondsValue;
export type DuckDBTimestampNanosecondsValue = InstanceType<Api['DuckDBTimestampNanosecondsValue']>;
export const DuckDBTimestampSecondsValue = api.DuckDBTimestampSecondsValue;
export type DuckDBTimestampSecondsValue = InstanceType<Api['DuckDBTimestampSecondsValue']>;
export const DuckDBTimestampTZValue = api.DuckDBTimestampTZValue;
export type DuckDBTimestampTZValue = InstanceType<Api['DuckDBTimestampTZValue']>;
export const DuckDBTimestampValue = api.DuckDBTimestampValue;
export type DuckDBTimestampValue = InstanceType<Api['DuckDBTimestampValue']>;
export const DuckDBUnionValue = api.DuckDBUnionValue;
export type DuckDBUnionValue = InstanceType<Api['DuckDBUnionValue']>;
