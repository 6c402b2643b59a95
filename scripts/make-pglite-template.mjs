// `npm run build` and `npm ci` (the root's `prepare`) end here: makes the embedded store's
// template (gateway/src/store/pglite-template.ts) so a first `npm start` skips initdb. With the
// compiled gateway when it is built, else from its source under tsx (a fresh clone's `npm ci`),
// else it says why not (an install without dev dependencies and without a build, where the
// gateway creates its store by initdb instead). Never fails the install or the build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const compiled = 'gateway/dist/store/pglite-template-cli.js';
const source = 'gateway/src/store/pglite-template-cli.ts';

function tsxInstalled() {
  try {
    import.meta.resolve('tsx');
    return true;
  } catch {
    return false;
  }
}

const args = existsSync(compiled)
  ? [compiled]
  : tsxInstalled()
    ? ['--import', 'tsx', '--conditions=@quarry/source', source]
    : undefined;
if (args === undefined) {
  console.error('embedded store template: not made (no build and no tsx); new stores run initdb');
} else {
  spawnSync(process.execPath, args, { stdio: 'inherit' });
}
