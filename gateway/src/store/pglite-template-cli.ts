// `node gateway/dist/store/pglite-template-cli.js` (run by `npm run build`, and under tsx by the
// root's `prepare`, so `npm ci` leaves one behind): makes the embedded store's template for the
// installed PGlite unless it is there, and says which. See pglite-template.ts.
import { relative } from 'node:path';
import { ensurePgliteTemplate } from './pglite-template.js';

const started = performance.now();
try {
  const { file, created } = await ensurePgliteTemplate();
  const shown = relative(process.cwd(), file);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    created
      ? `embedded store template: made ${shown} in ${seconds} s`
      : `embedded store template: ${shown} is there`,
  );
} catch (error) {
  // Not fatal for the build: without a template a new store is created by initdb (slower).
  console.error(
    `embedded store template: not made (${error instanceof Error ? error.message : String(error)})`,
  );
}
