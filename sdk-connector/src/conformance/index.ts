// @quarry/sdk-connector/conformance: the test kit every Quarry connector must pass, run from a
// vitest file against the connector's real engine. Also exports the fixture data and the hostile
// string generator so other test suites (the gateway's) can reuse them.

export {
  CONFORMANCE_COLUMNS,
  CONFORMANCE_ROWS,
  type ConformanceColumn,
  type ConformanceColumnName,
  type ConformanceFixtureSql,
  type ConformanceFixtureSqlOptions,
  type ConformanceRow,
  conformanceFixtureSql,
} from './conformance-fixture.js';
export type {
  ConformanceCheck,
  ConformanceOptions,
  ConformanceSql,
  ForbiddenDestinationKind,
  NamedWarehouse,
} from './conformance-options.js';
export { describeConnectorConformance } from './describe-connector-conformance.js';
export { type HostileStringsOptions, hostileStrings } from './hostile-strings.js';
