// One vitest run for the whole workspace: unit tests beside the code, end-to-end tests in test/.
// The "@quarry/source" condition makes workspace packages resolve to their TypeScript sources,
// so tests never need a build step.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@quarry/source'] },
  ssr: { resolve: { conditions: ['@quarry/source'] } },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
