// One vitest run for the whole workspace: unit tests beside the code, end-to-end tests in test/.
// The "@quarry/source" condition makes workspace packages resolve to their TypeScript sources,
// so tests never need a build step.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The live tests against cloud warehouses (`connectors/<name>/test/<name>-live.test.ts`) are
// collected only when one of their `QUARRY_LIVE_<NAME>_*` variables is set: a run without
// credentials has nothing to skip, and a run with some fails if the rest are missing.
const LIVE = ['bigquery', 'snowflake', 'trino'];
const liveOff = LIVE.filter(
  (name) => !Object.keys(process.env).some((key) => key.startsWith(`QUARRY_LIVE_${name.toUpperCase()}_`)),
).map((name) => `connectors/${name}/test/${name}-live.test.ts`);

// Files that run alone, after all the others: several gateways at once on one PostgreSQL (beside
// other files they took the local server past its 100 connections), or timings that compare
// the gateway with itself under a load the test makes (ten result-too-large queries at once, one
// answered 503 instead of 422 beside the other files).
const ALONE = [
  'test/multi-instance-haproxy.test.ts',
  'test/metering-across-instances.test.ts',
  'test/login-flood.test.ts',
  'test/large-results.test.ts',
  // Calls refused by an open circuit within 300 ms, time limits of a second or two.
  'test/warehouse-faults.test.ts',
  'test/store-faults.test.ts',
  // A timed-out query gone from the fake's server within 1 s of the timeout: over it once beside
  // other files in CI, where the client's cancel is an HTTP call to the fake.
  'connectors/bigquery/test/bigquery-conformance.test.ts',
];

// The other files run one more at a time than there are cores: most of a file's time is spent
// waiting on the gateways, warehouses and browsers it starts (on two cores, three at once took
// the run from ~21 to ~14 minutes).
const WORKERS = availableParallelism() + 1;

export default defineConfig({
  resolve: { conditions: ['@quarry/source'] },
  ssr: { resolve: { conditions: ['@quarry/source'] } },
  test: {
    // Inherited by both projects (`extends: true`).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['**/*.test.ts'],
          exclude: ['**/node_modules/**', '**/dist/**', ...liveOff, ...ALONE],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
