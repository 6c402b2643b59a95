// One ship list (issue 37, finding 6): `node scripts/ship-list.mjs` prints what a host needs of
// the build, docs/deploy.md and the README send the operator to it, and the list is what
// test/compiled-start.test.ts deploys: each workspace's package.json and its published files
// without `src`, the built console, scripts/ and deploy/; never sources, tests or node_modules.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';

const run = promisify(execFile);

describe('the ship list', () => {
  it('holds the build and the manifests, and no sources', async () => {
    const { stdout } = await run(process.execPath, ['scripts/ship-list.mjs', '--json'], { cwd: REPO_ROOT });
    const list = JSON.parse(stdout) as string[];
    expect(list.slice(0, 3)).toEqual(['package.json', 'package-lock.json', 'scripts/']);
    for (const path of ['gateway/package.json', 'gateway/migrations/', 'console/dist/', 'deploy/'])
      expect(list).toContain(path);
    expect(list.filter((p) => /(^|\/)(src|node_modules)\//.test(p) || p.includes('.test.'))).toEqual([]);
    // Every workspace's manifest, so `npm ci --omit=dev` resolves the workspaces on the host.
    const root = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      workspaces: string[];
    };
    for (const pattern of root.workspaces.filter((w) => !w.includes('*')))
      expect(list).toContain(`${pattern}/package.json`);
  });

  it('is the one list the guide and the README give', async () => {
    const guide = await readFile(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    for (const doc of [guide, readme]) {
      expect(doc).toContain('scripts/ship-list.mjs');
      // The list's parts, named the same way in both.
      for (const part of ['`gateway/migrations/`', '`console/dist/`', '`deploy/`'])
        expect(doc).toContain(part);
    }
    // The guide no longer says to ship "without */src/" while the gateway publishes src.
    expect(guide).not.toMatch(/without `node_modules\/` and `\*\/src\/`/);
  });
});
