// @quarry/connector-bigquery: the Google BigQuery connector plugin. The gateway loads it by
// module specifier and takes its `plugin` export.
export { type BigqueryConfig, bigqueryConfigSchema, type ServiceAccountKey } from './bigquery-config.js';
export { BIGQUERY_PARAM_TYPES, bigqueryDialect } from './bigquery-dialect.js';
export { bigqueryPlugin, bigqueryPlugin as plugin } from './bigquery-plugin.js';
