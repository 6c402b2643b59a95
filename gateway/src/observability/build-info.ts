// What build this process runs: the gateway package's version, the commit it was built from and
// the Node version. `npm run build` writes the commit to gateway/dist/build-info.json
// (scripts/write-build-info.mjs); a gateway run from source reports `unknown` unless
// QUARRY_BUILD_COMMIT names it. Read once, at start: /metrics (`quarry_build_info`), every access
// line and the `starting` log line carry it.
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  readonly version: string;
  readonly commit: string;
  readonly node: string;
}

/** gateway/ from src/observability/ and dist/observability/ alike. */
const GATEWAY_ROOT = new URL('../../', import.meta.url);

function readJson(relative: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(new URL(relative, GATEWAY_ROOT), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

let cached: Omit<BuildInfo, 'commit'> & { readonly builtCommit: string | undefined };

/** The build of this process; `commitOverride` (QUARRY_BUILD_COMMIT) wins over the built file. */
export function buildInfo(commitOverride?: string): BuildInfo {
  cached ??= {
    version: String(readJson('package.json')?.version ?? 'unknown'),
    builtCommit: readJson('dist/build-info.json')?.commit as string | undefined,
    node: process.versions.node,
  };
  return {
    version: cached.version,
    commit: commitOverride ?? cached.builtCommit ?? 'unknown',
    node: cached.node,
  };
}
