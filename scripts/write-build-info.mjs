// After `tsc -b` (`npm run build`): records the commit the gateway was built from in
// gateway/dist/build-info.json, which the gateway reports as `quarry_build_info` and on every
// access line (gateway/src/observability/build-info.ts). QUARRY_BUILD_COMMIT, when set, is taken
// as is (a build from a source tarball has no .git); otherwise `git rev-parse HEAD`, else unknown.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';

function gitCommit() {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return `${head.trim().slice(0, 12)}${dirty.trim() === '' ? '' : '-dirty'}`;
  } catch {
    return 'unknown';
  }
}

const commit = process.env.QUARRY_BUILD_COMMIT || gitCommit();
await mkdir('gateway/dist', { recursive: true });
await writeFile(
  'gateway/dist/build-info.json',
  `${JSON.stringify({ commit, built_at: new Date().toISOString() })}\n`,
);
