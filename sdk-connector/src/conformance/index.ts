// @quarry/sdk-connector/conformance: the test kit every Quarry connector must pass, run from a
// vitest file against the connector's real engine. Also exports the fixture data and the hostile
// string generator so other test suites (the gateway's) can reuse them.
//
// It imports vitest, which the caller installs (a devDependency, vitest 4.1). The package does
// not declare it, not even as an optional peer: npm counts an optional peer of a runtime
// dependency as an optional edge, flags vitest (and vite and tsx behind it) `devOptional` in the
// lockfile, and then keeps them in an `npm ci --omit=dev` install, TypeScript tooling in production.

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
export { hostileStatements } from './read-only-runtime-conformance.js';
