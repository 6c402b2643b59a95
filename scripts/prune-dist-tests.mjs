// After `tsc -b` (`npm run build`): removes the compiled unit tests (`*.test.*`, which live beside
// the code in src/ and so are emitted with it) from every package's dist/, so what an operator
// deploys holds no test code. Tests always run from the TypeScript sources.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const roots = ['sdk-connector', 'gateway', 'examples', 'client'];
for (const group of ['connectors', 'examples']) {
  for (const entry of await readdir(group, { withFileTypes: true })) {
    if (entry.isDirectory() && (group === 'connectors' || entry.name.startsWith('connector-'))) {
      roots.push(join(group, entry.name));
    }
  }
}
let removed = 0;
for (const root of roots) {
  const dist = join(root, 'dist');
  let files;
  try {
    files = await readdir(dist, { recursive: true });
  } catch {
    continue; // not built
  }
  for (const file of files) {
    if (/\.test\.(js|d\.ts)(\.map)?$/.test(file)) {
      await rm(join(dist, file));
      removed += 1;
    }
  }
}
console.error(`build: removed ${removed} compiled test files from dist/`);
