// Prints what a host needs of a built checkout, one path a line (docs/deploy.md, section 1): the
// root manifests and scripts/, each workspace's package.json and the entries of its `files`
// other than `src`, the built console and deploy/. Paths a build has not made yet are left out.
// `--json` prints the list as a JSON array.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const manifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/** The workspace folders named by the root package.json (its globs are `dir` or `dir/prefix*`). */
export function workspaceDirs(root = '.') {
  const dirs = [];
  for (const pattern of manifest(root).workspaces ?? []) {
    const star = pattern.indexOf('*');
    if (star === -1) {
      dirs.push(pattern);
      continue;
    }
    const parent = pattern.slice(0, pattern.lastIndexOf('/'));
    const prefix = pattern.slice(parent.length + 1, star);
    for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.startsWith(prefix)) dirs.push(`${parent}/${entry.name}`);
    }
  }
  return dirs.sort();
}

export function shipList(root = '.') {
  const paths = ['package.json', 'package-lock.json', 'scripts/'];
  for (const dir of workspaceDirs(root)) {
    paths.push(`${dir}/package.json`);
    for (const entry of manifest(join(root, dir)).files ?? []) {
      if (entry === 'src') continue;
      if (existsSync(join(root, dir, entry))) paths.push(`${dir}/${entry}/`);
    }
  }
  paths.push('console/dist/', 'deploy/');
  return paths;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const list = shipList();
  process.stdout.write(
    process.argv.includes('--json') ? `${JSON.stringify(list)}\n` : `${list.join('\n')}\n`,
  );
}
