// `npm run build` and `npm ci` (the root's `prepare`) end here: makes the templates a first
// `npm start` copies instead of building: the embedded store's (gateway/src/store/pglite-template.ts,
// initdb's and a migrated one) and the demo warehouse's (examples/src/seed-demo-warehouse.ts).
// With the compiled code when it is built, else from the sources under tsx (a fresh clone's
// `npm ci`), else it says why not (an install without dev dependencies and without a build, where
// the gateway creates its store by initdb and generates the demo warehouse instead). Never fails
// the install or the build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function tsxInstalled() {
  try {
    import.meta.resolve('tsx');
    return true;
  } catch {
    return false;
  }
}

const makers = [
  [
    'embedded store templates',
    'gateway/dist/store/pglite-template-cli.js',
    'gateway/src/store/pglite-template-cli.ts',
  ],
  ['demo warehouse template', 'examples/dist/demo-template-cli.js', 'examples/src/demo-template-cli.ts'],
];
for (const [what, compiled, source] of makers) {
  const args = existsSync(compiled)
    ? [compiled]
    : tsxInstalled()
      ? ['--import', 'tsx', '--conditions=@quarry/source', source]
      : undefined;
  if (args === undefined) console.error(`${what}: not made (no build and no tsx)`);
  else spawnSync(process.execPath, args, { stdio: 'inherit' });
}
