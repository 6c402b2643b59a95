// Where the example analytic definitions (YAML) live, so the gateway can load them at start
// without knowing this package's layout.
import { fileURLToPath } from 'node:url';

/** Absolute path of `examples/analytics/`, whether running from `src/` or a built `dist/`. */
export function exampleAnalyticsDir(): string {
  return fileURLToPath(new URL('../analytics/', import.meta.url));
}
