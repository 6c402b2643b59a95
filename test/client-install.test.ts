// @quarry/client works from a fresh clone right after `npm ci` (issue 18): npm runs the
// package's `prepare` script for the workspace, which builds dist/; a plain `node` (no tsx, no
// source condition) then imports the package exactly as client/README.md shows, and the
// published entry points all exist.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';

const run = promisify(execFile);

describe('@quarry/client from a clone', () => {
  it('is built by the install (prepare) and imports in plain node as the README shows', async () => {
    const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'client/package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      exports: Record<string, { default: string }>;
    };
    expect(manifest.scripts.prepare, 'npm ci builds the client through its prepare script').toBeDefined();
    await run('npm', ['run', '-s', 'prepare', '-w', '@quarry/client'], { cwd: REPO_ROOT });
    const script = [
      "import { createQuarryClient, RateLimitError } from '@quarry/client';",
      "import { runCli } from '@quarry/client/cli';",
      "const quarry = createQuarryClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: 'qry_live_x' });",
      'console.log(JSON.stringify([typeof quarry.query, typeof RateLimitError, typeof runCli]));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(JSON.parse(stdout)).toEqual(['function', 'function', 'function']);
    for (const entry of Object.values(manifest.exports)) {
      await expect(readFile(join(REPO_ROOT, 'client', entry.default))).resolves.toBeDefined();
    }
  }, 120_000);
});
