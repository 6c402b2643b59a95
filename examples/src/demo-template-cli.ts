// `node examples/dist/demo-template-cli.js` (run by `npm run build`, and under tsx by the root's
// `prepare`, so `npm ci` leaves one behind): makes the demo warehouse's template for the installed
// DuckDB unless it is there, and says which. A new data directory's demo warehouse is a copy of
// it (seed-demo-warehouse.ts). Never fails the install or the build.
import { relative } from 'node:path';
import { ensureDemoTemplate } from './seed-demo-warehouse.js';

const started = performance.now();
try {
  const { file, created } = await ensureDemoTemplate();
  const shown = relative(process.cwd(), file);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    created
      ? `demo warehouse template: made ${shown} in ${seconds} s`
      : `demo warehouse template: ${shown} is there`,
  );
} catch (error) {
  // Not fatal: without a template a new demo warehouse is generated at start (seconds).
  console.error(
    `demo warehouse template: not made (${error instanceof Error ? error.message : String(error)})`,
  );
}
