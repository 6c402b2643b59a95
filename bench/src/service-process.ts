// Starts a TypeScript entry point of this repo as its own Node process (under tsx, workspace
// packages resolved to their sources), optionally pinned to one CPU with `taskset`, on a free
// port; waits until it answers a readiness path, and stops it (SIGTERM, then SIGKILL). Its
// output goes to a log file, so a busy server never blocks on a pipe the bench does not read.
// The gateway itself runs as `npm start` runs it: the esbuild bundle of its sources under plain
// node (scripts/start-bundle.mjs). QUARRY_BENCH_GATEWAY=tsx runs the sources under tsx instead,
// as the benches did before 2026-11-27: tsx keeps every function's name (esbuild's `keepNames`),
// which costs a property definition each time a named closure is made, on every request.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { buildGatewayBundle } from '../../scripts/start-bundle.mjs';

/** The repository root: the gateway resolves workspace packages from here. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A started process, listening at `url`. */
export interface ServiceProcess {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  readonly logFile: string;
  /** The last `chars` characters the process wrote (stdout and stderr). */
  tail(chars?: number): string;
  /** SIGTERM, then SIGKILL after `killAfterMs` (default 10 s); resolves once it has exited. */
  stop(killAfterMs?: number): Promise<void>;
}

/** How to start one. */
export interface ServiceOptions {
  /** Path of the entry point, relative to the repository root. */
  readonly entry: string;
  readonly args?: readonly string[];
  /** Extra flags for node itself, e.g. `--cpu-prof` to profile the service under load. */
  readonly nodeArgs?: readonly string[];
  /** Its whole environment on top of PATH, HOME and PORT (nothing else is inherited). */
  readonly env?: Readonly<Record<string, string>>;
  /** Pin the process to this CPU with taskset; undefined: not pinned. */
  readonly cpu?: number;
  /** GET this path until it answers 200 (default /healthz). */
  readonly readyPath?: string;
  readonly readyTimeoutMs?: number;
  readonly logFile: string;
  /** For the gateway: this bundle entry instead of the working tree's build (bench:ab's saved builds). */
  readonly bundle?: string;
}

const GATEWAY_ENTRY = 'gateway/src/server.ts';

/** How the gateway runs in benches: `bundle` (as `npm start`, the default) or `tsx`. */
export function gatewayRuntime(): 'bundle' | 'tsx' {
  const chosen = process.env.QUARRY_BENCH_GATEWAY ?? 'bundle';
  if (chosen !== 'bundle' && chosen !== 'tsx') {
    throw new Error(`QUARRY_BENCH_GATEWAY must be bundle or tsx, not ${JSON.stringify(chosen)}`);
  }
  return chosen;
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

/** Whether `taskset` exists and the machine has `cpu`. */
export function canPin(cpu: number): boolean {
  try {
    execFileSync('taskset', ['-c', String(cpu), 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Pins every thread of this process to `cpu` (the load generator's core). Returns a function
 * that restores the previous CPU list, or undefined when pinning is not possible.
 */
export function pinSelf(cpu: number): (() => void) | undefined {
  const pid = String(process.pid);
  try {
    // "pid 123's current affinity list: 0,1"
    const previous = execFileSync('taskset', ['-cp', pid], { encoding: 'utf8' }).split(':').pop()?.trim();
    execFileSync('taskset', ['-a', '-cp', String(cpu), pid], { stdio: 'ignore' });
    return () => {
      if (previous) execFileSync('taskset', ['-a', '-cp', previous, pid], { stdio: 'ignore' });
    };
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the process and resolves once it is ready; rejects with its output if it dies or times out. */
export async function startService(options: ServiceOptions): Promise<ServiceProcess> {
  const port = await freePort();
  const bundled =
    options.entry === GATEWAY_ENTRY && (options.bundle !== undefined || gatewayRuntime() === 'bundle');
  const nodeArgs = [
    ...(options.nodeArgs ?? []),
    ...(bundled
      ? [options.bundle ?? (await buildGatewayBundle()).file]
      : ['--import', 'tsx', '--conditions=@quarry/source', options.entry]),
    ...(options.args ?? []),
  ];
  // taskset execs node in place, so the child's pid is node's own (signals and /proc reach it).
  const [command, args] =
    options.cpu === undefined
      ? [process.execPath, nodeArgs]
      : ['taskset', ['-c', String(options.cpu), process.execPath, ...nodeArgs]];
  const log = openSync(options.logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        ...options.env,
      },
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const tail = (chars = 4000) => {
    try {
      return readFileSync(options.logFile, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) throw new Error(`${options.entry} exited before it was ready:\n${tail()}`);
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.entry} was not ready in time:\n${tail()}`);
    }
    try {
      const response = await fetch(`${url}${options.readyPath ?? '/healthz'}`, {
        signal: AbortSignal.timeout(1000),
      });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  // A gateway makes its /docs page and OpenAPI document once, a few seconds after it listens
  // (gateway/src/server.ts): made now, that second of CPU does not land in a measured window.
  if (options.entry === GATEWAY_ENTRY) {
    for (const path of ['/docs', '/v1/openapi.json']) {
      const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
    }
  }
  return {
    pid: child.pid ?? 0,
    port,
    url,
    logFile: options.logFile,
    tail,
    async stop(killAfterMs = 10_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      await exit;
      clearTimeout(timer);
    },
  };
}
