// Spawns a real gateway process (gateway/src/server.ts under tsx, or the compiled
// gateway/dist/server.js under plain node) on a free port, waits until /healthz answers, keeps its
// stdout/stderr (JSON logs) for later inspection, and stops it with SIGTERM, then SIGKILL after 10 s.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gatewayThreadpoolEnv } from '../../scripts/gateway-heap-flags.mjs';

/** The repository root: the gateway resolves examples/analytics and workspace packages from here. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface GatewayExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface GatewayProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** `performance.now()` when the process was spawned. */
  readonly spawnedAt: number;
  /** Milliseconds from spawn until /healthz first answered 200. */
  readonly startupMs: number;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Resolves once the process has exited. */
  readonly exited: Promise<GatewayExit>;
  /** SIGTERM, then SIGKILL after `killAfterMs` (default 10 s); resolves with how it exited. */
  stop(killAfterMs?: number): Promise<GatewayExit>;
}

export interface StartGatewayOptions {
  /** The gateway's environment (on top of PATH and HOME; nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** How long to wait for /healthz (default 60 s: the embedded store takes seconds to create). */
  readonly readyTimeoutMs?: number;
  /** The port to listen on (default: a free one). A restarted instance behind a proxy keeps its own. */
  readonly port?: number;
  /**
   * Run the output of `npm run build` (gateway/dist/server.js) with plain `node` and these flags,
   * as a deployment does, instead of the sources under tsx.
   */
  readonly compiled?: { readonly nodeFlags: readonly string[] };
  /** The working directory (default the repository root); another one needs `compiled`. */
  readonly cwd?: string;
  /** Node flags for a gateway run from its sources (a compiled one takes `compiled.nodeFlags`). */
  readonly nodeFlags?: readonly string[];
}

/** A port nothing listens on right now, picked by the OS. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Why the compiled build cannot be run as it is (not built, or older than the sources: tsc's own
 * read-only `tsc -b --dry`), or undefined. `.ci/run` builds before `npm test`; a local run must too.
 */
export async function compiledBuildProblem(): Promise<string | undefined> {
  if (!existsSync(join(REPO_ROOT, 'gateway/dist/server.js'))) {
    return 'gateway/dist/server.js is missing (run `npm run build`)';
  }
  const { stdout } = await promisify(execFile)('npx', ['tsc', '-b', '--dry'], { cwd: REPO_ROOT });
  const stale = stdout.split('\n').filter((line) => line.includes('would build project'));
  if (stale.length === 0) return undefined;
  return `the compiled build is missing or older than the sources (run \`npm run build\`):\n${stale.join('\n')}`;
}

/**
 * `gateway/src/server.ts` as its own process, with only PATH, HOME, HOST, UV_THREADPOOL_SIZE and
 * `env`. node --import
 * tsx (not `npx tsx`): signals reach the gateway itself, not a wrapper process.
 */
function spawnGateway(
  env: Readonly<Record<string, string>>,
  stdout: 'pipe' | 'ignore',
  compiled?: StartGatewayOptions['compiled'],
  cwd = REPO_ROOT,
  nodeFlags: readonly string[] = [],
): ChildProcess {
  const args =
    compiled === undefined
      ? [...nodeFlags, '--import', 'tsx', '--conditions=@quarry/source', 'gateway/src/server.ts']
      : [...compiled.nodeFlags, join(REPO_ROOT, 'gateway/dist/server.js')];
  return spawn(process.execPath, args, {
    cwd,
    // The thread pool as `npm start` sizes it (scripts/gateway-heap-flags.mjs), unless `env` sets it.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      ...gatewayThreadpoolEnv(env),
      ...env,
    },
    stdio: ['ignore', stdout, 'pipe'],
  });
}

/** Starts a gateway and resolves once it answers /healthz; rejects (with its output) if it dies first. */
export async function startGateway(options: StartGatewayOptions): Promise<GatewayProcess> {
  const port = options.port ?? (await freePort());
  const started = performance.now();
  const child = spawnGateway(
    { PORT: String(port), ...options.env },
    'pipe',
    options.compiled,
    options.cwd,
    options.nodeFlags,
  );
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  let exit: GatewayExit | undefined;
  const exited = new Promise<GatewayExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = started + (options.readyTimeoutMs ?? 60_000);
  let startupMs: number | undefined;
  while (startupMs === undefined) {
    if (exit !== undefined) {
      throw new Error(`gateway exited (${exit.code ?? exit.signal}) before it was ready\n${err}\n${out}`);
    }
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not answer /healthz within the timeout\n${err}\n${out}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) startupMs = performance.now() - started;
      await response.body?.cancel();
    } catch {
      // Not listening yet.
    }
    if (startupMs === undefined) await sleep(100);
  }
  return {
    url,
    port,
    child,
    spawnedAt: started,
    startupMs,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(killAfterMs = 10_000) {
      if (exit !== undefined) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** The environment of a gateway on the real Postgres store, as the end-to-end tests run it. */
export function postgresStoreEnv(databaseUrl: string, secretKey: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    QUARRY_SECRET_KEY: secretKey,
    QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
    QUARRY_ALLOW_HOST_FILES: 'true',
    QUARRY_DEMO: 'false',
    QUARRY_KEY_CACHE_MS: '1000',
    QUARRY_LOG_LEVEL: 'info',
    // Generous limits: these tests are about the contract, not the meter (its own tests set theirs).
    QUARRY_FREE_CALLS: '1000000',
    QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 100000, window_seconds: 60, burst: 100000 } }),
    // Every test signs up from 127.0.0.1 (test/signup-throttle.test.ts tests the default).
    QUARRY_SIGNUPS_PER_HOUR: '1000000',
  };
}

/** Runs a gateway that is expected to refuse to start; resolves with its exit code and stderr. */
export function runGatewayToExit(
  env: Record<string, string>,
  options: Pick<StartGatewayOptions, 'compiled' | 'cwd'> = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnGateway({ PORT: '0', ...env }, 'ignore', options.compiled, options.cwd);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway was still running after 60 s\n${stderr}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
