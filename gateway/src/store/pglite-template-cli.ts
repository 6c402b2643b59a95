// `node gateway/dist/store/pglite-template-cli.js` (run by `npm run build`, and under tsx by the
// root's `prepare`, so `npm ci` leaves them behind): makes the embedded store's templates (initdb's,
// and migrated) for the installed PGlite unless they are there, and says which. See
// pglite-template.ts.
import { relative } from 'node:path';
import { ensurePgliteTemplate } from './pglite-template.js';

const started = performance.now();
try {
  const { file, created, migrated } = await ensurePgliteTemplate();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const files = [file, migrated.dir].map((f) => relative(process.cwd(), f)).join(', ');
  console.log(
    created || migrated.created
      ? `embedded store templates: made ${files} in ${seconds} s`
      : `embedded store templates: ${files} are there`,
  );
} catch (error) {
  // Not fatal for the build: without a template a new store is created by initdb (slower).
  console.error(
    `embedded store template: not made (${error instanceof Error ? error.message : String(error)})`,
  );
}
