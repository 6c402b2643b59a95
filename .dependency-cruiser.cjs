// Import rules, checked by `npm test` (npm run lint:deps). The layers of the gateway point one
// way (docs/architecture.md): domain code at the bottom (errors/, auth/, and the services,
// billing, cache, catalog, store… above them), the query module above those, and HTTP at the
// top (http/, routes/, adapters/, app.ts, server.ts, create-gateway.ts). Type-only imports
// count: a cycle of types is still a cycle a reader has to untangle.
/** Gateway files that speak HTTP or assemble the whole: the only ones that may import HTTP code. */
const TOP =
  '^gateway/src/(http|routes|adapters|testing)/|^gateway/src/(app|server|create-gateway|index)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle, in any package: split the shared part out into a lower module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-up-into-http',
      severity: 'error',
      comment:
        'Domain, service and query code never imports the HTTP layer (http/, routes/, adapters/): ' +
        'move what it needs (an error, a type) down into errors/, auth/ or the module itself.',
      from: { path: '^gateway/src/', pathNot: [TOP, '\\.test\\.ts$'] },
      to: { path: '^gateway/src/(http|routes|adapters)/' },
    },
    {
      name: 'errors-at-the-bottom',
      severity: 'error',
      comment: 'errors/ is the bottom layer: it imports nothing else of the gateway.',
      from: { path: '^gateway/src/errors/' },
      to: { path: '^gateway/src/', pathNot: '^gateway/src/errors/' },
    },
    {
      name: 'money-testing-only-in-tests',
      severity: 'error',
      comment:
        "money/testing/ holds the tests' checks of the ledger (ledger-drift.ts): only tests and " +
        'test support import it, never the gateway.',
      from: { path: '^gateway/src/', pathNot: ['\\.(test|bench)\\.ts$', '^gateway/src/money/testing/'] },
      to: { path: '^gateway/src/money/testing/' },
    },
    {
      name: 'auth-below-services',
      severity: 'error',
      comment: 'auth/ sits under the services and the query module: it never imports them.',
      from: { path: '^gateway/src/auth/' },
      to: { path: '^gateway/src/(services|query|money|cache|catalog|bootstrap)/' },
    },
    {
      name: 'store-below-money',
      severity: 'error',
      comment:
        'store/ is the persistence layer under the domain: it never imports the money module, the ' +
        'services, the query module or anything above them (the money tables have their own store, ' +
        'money/money-store.ts).',
      from: { path: '^gateway/src/store/', pathNot: '\\.test\\.ts$' },
      to: { path: '^gateway/src/(money|services|query|cache|catalog|bootstrap|mcp|oauth)/' },
    },
    {
      name: 'money-repositories-stay-in-money',
      severity: 'error',
      comment:
        'Only the money module builds or calls its repositories (docs/money.md): the rest of the ' +
        'gateway goes through the billing service and the metering, or money/money-store.ts. ' +
        'Their types may be imported anywhere.',
      from: { path: '^gateway/src/', pathNot: ['^gateway/src/money/', '\\.(test|bench)\\.ts$'] },
      to: {
        path: '^gateway/src/money/(usage-repository|statement-repository|payment-repository|payout-repository)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'query-module-transport-free',
      severity: 'error',
      comment: 'The query module is plain data in and out: no Hono, no node:http.',
      from: { path: '^gateway/src/query/', pathNot: '\\.test\\.ts$' },
      to: { path: ['node_modules/(hono|@hono)/', '^http$', '^node:http$'] },
    },
    {
      name: 'results-under-the-query-module',
      severity: 'error',
      comment:
        "results/ (the data dir's result store, page cursors, export formats) sits under the query " +
        'module: of the gateway it imports only errors/ and itself.',
      from: { path: '^gateway/src/results/', pathNot: '\\.test\\.ts$' },
      to: { path: '^gateway/src/', pathNot: '^gateway/src/(results|errors)/' },
    },
    {
      name: 'gateway-never-imports-a-driver',
      severity: 'error',
      comment: 'The gateway knows warehouses only through @quarry/sdk-connector (docs/design.md §1).',
      // The control-plane store (store/) speaks to its own PostgreSQL; warehouses are another matter.
      from: { path: '^gateway/src/', pathNot: ['^gateway/src/store/', '\\.(test|bench)\\.ts$'] },
      to: { path: 'node_modules/(pg|mysql2|@duckdb|@google-cloud|snowflake-sdk|trino-client)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|coverage|\\.quarry)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.tests.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@quarry/source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
