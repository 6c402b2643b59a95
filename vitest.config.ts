// One vitest run for the whole workspace: unit tests beside the code, end-to-end tests in test/.
// The "@quarry/source" condition makes workspace packages resolve to their TypeScript sources,
// so tests never need a build step.
import { defineConfig } from 'vitest/config';

// The live tests against cloud warehouses (`connectors/<name>/test/<name>-live.test.ts`) are
// collected only when one of their `QUARRY_LIVE_<NAME>_*` variables is set: a run without
// credentials has nothing to skip, and a run with some fails if the rest are missing.
const LIVE = ['bigquery', 'snowflake', 'trino'];
const liveOff = LIVE.filter(
  (name) => !Object.keys(process.env).some((key) => key.startsWith(`QUARRY_LIVE_${name.toUpperCase()}_`)),
).map((name) => `connectors/${name}/test/${name}-live.test.ts`);

export default defineConfig({
  resolve: { conditions: ['@quarry/source'] },
  ssr: { resolve: { conditions: ['@quarry/source'] } },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', ...liveOff],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
