// @quarry/sdk-connector: the plugin interface, parameter typing, template compilation, the
// session pool and the runtime every Quarry connector is built on. The conformance kit is the
// separate entry point `@quarry/sdk-connector/conformance`.

export {
  parseConnectorConfig,
  redactConfig,
  secretField,
  secretFieldsOf,
} from './config-schema.js';
export type {
  Connector,
  ConnectorOptions,
  DescribeRequest,
  JsonValue,
  QueryRequest,
  QueryResult,
  ResultRow,
  RowSink,
  StreamSummary,
} from './connector.js';
export { checkDestinations, type Destination } from './connector-destinations.js';
export {
  ConnectorError,
  type ConnectorErrorCode,
  type ConnectorErrorDetail,
  type ConnectorErrorOptions,
  isConnectorError,
  redactSecrets,
} from './connector-error.js';
export type {
  BoundParam,
  ColumnInfo,
  ColumnType,
  CompiledQuery,
  ConnectorDriver,
  ConnectorLogger,
  ConnectorPlugin,
  ConnectorSession,
  DescribeOptions,
  DriverContext,
  ExecuteOptions,
  HostAccess,
  PlaceholderStyle,
  RawResult,
  RawRowSink,
  ResourceCaps,
  SqlDialect,
  StatementDescription,
} from './connector-plugin.js';
export type { PoolOptions, PoolStats } from './connector-pool.js';
export { createConnector } from './create-connector.js';
export {
  type CheckedHost,
  createDestinationGuard,
  DESTINATION_NOT_ALLOWED,
  type DestinationGuard,
  type DestinationGuardOptions,
  destinationRefused,
  type HostResolver,
  isDestinationRefusal,
  type ResolvedAddress,
} from './destination-guard.js';
export {
  type AddressClass,
  type AddressVerdict,
  addressAllowed,
  classifyAddress,
  type DestinationPolicy,
  isMetadataHostName,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
} from './destination-policy.js';
export {
  type FieldInput,
  type FieldOption,
  type FieldUi,
  fieldsWithoutUi,
  fieldUi,
  fieldUiOf,
} from './field-ui.js';
export { createGuardedAgents, type GuardedAgentOptions, type GuardedAgents } from './guarded-http-agents.js';
export { toJsonValue } from './json-values.js';
export { noopLogger } from './noop-logger.js';
// Implemented by the SDK helpers (names fixed here so every package can code against them):
export {
  compileOwnerPattern,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_PROGRAM_SIZE,
  MAX_PATTERN_WORK,
  MAX_SCHEMA_PATTERN_SIZE,
  MAX_STRING_LENGTH,
  type OwnerPattern,
  type OwnerPatternResult,
} from './owner-pattern.js';
export { checkParamSchema, coerceQueryParams, validateParams } from './param-schema.js';
export type {
  ArrayParamSpec,
  ParamIssue,
  ParamSchema,
  ParamSpec,
  ParamType,
  ParamValidation,
  ParamValues,
  ScalarParamSpec,
  ScalarParamType,
  ScalarValue,
  TypedValue,
} from './param-types.js';
export { assertReadOnlySql, readOnlyViolation, type SqlFamily } from './read-only-sql.js';
export { RESULT_ROW_BYTES, resultTooLarge } from './result-size.js';
export { createSessionPool, type SessionPool } from './session-pool.js';
export { renderAnsiLiteral } from './sql-literal.js';
export { compileTemplate, parseTemplate, type SqlTemplate } from './sql-template.js';
export { leadingKeyword, READ_ONLY_KEYWORDS } from './statement-keyword.js';
