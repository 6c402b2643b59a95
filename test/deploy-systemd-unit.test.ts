// deploy/systemd/quarry.service, the unit docs/deploy.md installs. systemd is not PID 1 on the
// machines the tests run on, so the unit cannot be started by systemd itself; instead:
//   - `systemd-analyze verify` accepts it, and its command line is the guide's;
//   - its command line is run the way its settings say (WorkingDirectory, Environment,
//     EnvironmentFile) under a supervisor that follows its Restart=, RestartSec=,
//     RestartPreventExitStatus=, KillSignal= and TimeoutStopSec=: a gateway killed is started
//     again; sent SIGTERM, it exits 0 within TimeoutStopSec and stays stopped; refusing to start
//     (exit 2, a bad variable) it is not restarted in a loop.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '@quarry/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guideNodeFlags } from './support/deploy-guide.js';
import { compiledBuildProblem, freePort, REPO_ROOT } from './support/gateway-process.js';
import { serviceUp } from './support/test-services.js';

const run = promisify(execFile);
const UNIT = join(REPO_ROOT, 'deploy/systemd/quarry.service');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The unit's [Service] settings, each key with every value it is given. */
async function serviceSettings(): Promise<Map<string, string[]>> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of (await readFile(UNIT, 'utf8')).split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) {
      section = header[1] as string;
      continue;
    }
    if (section !== 'Service') continue;
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

const one = (settings: Map<string, string[]>, key: string) => {
  const values = settings.get(key);
  if (values?.length !== 1) throw new Error(`the unit has ${values?.length ?? 0} ${key}=, not 1`);
  return values[0] as string;
};

/** `KEY=value KEY2=value` (Environment=) or one `KEY=value` a line (EnvironmentFile). */
const assignments = (text: string) =>
  Object.fromEntries(
    text
      .split(/\s+|\n/)
      .filter((w) => /^[A-Z_][A-Z0-9_]*=/.test(w))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );

async function systemdAnalyzeAvailable(): Promise<true | string> {
  try {
    await run('systemd-analyze', ['--version']);
    return true;
  } catch (error) {
    return `systemd-analyze is not installed (${(error as Error).message})`;
  }
}

const analyzer = serviceUp(await systemdAnalyzeAvailable());

describe('the systemd unit', () => {
  it.runIf(analyzer)('passes systemd-analyze verify', async () => {
    const { stdout, stderr } = await run('systemd-analyze', ['verify', UNIT]);
    expect(`${stdout}${stderr}`.split('\n').filter((l) => l.includes('quarry.service'))).toEqual([]);
  });

  it("runs the guide's command line, and stops within TimeoutStopSec of the guide's delay and grace", async () => {
    const settings = await serviceSettings();
    const [node, ...args] = one(settings, 'ExecStart').split(/\s+/);
    expect(node).toBe('/usr/bin/node');
    expect(args.at(-1)).toBe('gateway/dist/server.js');
    expect(args.slice(0, -1)).toEqual(await guideNodeFlags());
    expect(assignments(one(settings, 'Environment')).UV_THREADPOOL_SIZE).toBe('5');
    expect(one(settings, 'KillSignal')).toBe('SIGTERM');
    expect(one(settings, 'Restart')).toBe('on-failure');
    // The guide's QUARRY_SHUTDOWN_DELAY_MS (5 s) + the default QUARRY_SHUTDOWN_GRACE_MS (the
    // longest analytic timeout + 5 s), with room: read from config.ts, so a raised default that
    // the unit does not follow fails here.
    expect(Number(one(settings, 'TimeoutStopSec')) * 1000).toBeGreaterThan(
      5_000 + loadConfig({}).shutdownGraceMs,
    );
    expect(one(settings, 'EnvironmentFile')).toBe('/etc/quarry/env');
  });
});

const buildProblem = await compiledBuildProblem();
const built = buildProblem === undefined || serviceUp(buildProblem);

/**
 * A supervisor for the unit's command line with systemd's semantics for the settings it uses:
 * on-failure restarts after an unclean exit (a signal other than the stop signal, or a code
 * other than 0 and the RestartPreventExitStatus ones), after RestartSec.
 */
function supervise(settings: Map<string, string[]>, env: Record<string, string>) {
  const [, ...args] = one(settings, 'ExecStart').split(/\s+/);
  const restartSec = Number(one(settings, 'RestartSec'));
  const prevent = new Set(one(settings, 'RestartPreventExitStatus').split(/\s+/).map(Number));
  const starts: ChildProcess[] = [];
  const exits: { code: number | null; signal: NodeJS.Signals | null }[] = [];
  let stopping = false;
  const start = () => {
    // WorkingDirectory=/opt/quarry is this checkout here; node is this test's node.
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    starts.push(child);
    child.once('exit', (code, signal) => {
      exits.push({ code, signal });
      const clean = code === 0 || (signal !== null && stopping);
      if (!stopping && !clean && !(code !== null && prevent.has(code)))
        setTimeout(() => !stopping && start(), restartSec * 1000);
    });
  };
  start();
  return {
    starts,
    exits,
    current: () => starts.at(-1) as ChildProcess,
    /** systemctl stop: KillSignal=, then SIGKILL after TimeoutStopSec. */
    async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
      stopping = true;
      const child = starts.at(-1) as ChildProcess;
      if (child.exitCode !== null || child.signalCode !== null)
        return { code: child.exitCode, signal: child.signalCode, ms: 0 };
      const began = Date.now();
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      child.kill(one(settings, 'KillSignal') as NodeJS.Signals);
      const timer = setTimeout(() => child.kill('SIGKILL'), Number(one(settings, 'TimeoutStopSec')) * 1000);
      const result = await exited;
      clearTimeout(timer);
      return { ...result, ms: Date.now() - began };
    },
  };
}

describe.runIf(built)('the unit, run the way its settings say', () => {
  let dir: string;
  let settings: Map<string, string[]>;
  let port: number;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-unit-'));
    settings = await serviceSettings();
    port = await freePort();
    // /etc/quarry/env of a one-instance host (the embedded store, to keep the test to itself).
    const envFile = join(dir, 'env');
    await writeFile(
      envFile,
      [
        `PORT=${port}`,
        'HOST=127.0.0.1',
        `QUARRY_DATA_DIR=${join(dir, 'data')}`,
        'QUARRY_DEMO=false',
        'QUARRY_SHUTDOWN_DELAY_MS=500',
        'QUARRY_SHUTDOWN_GRACE_MS=2000',
        'QUARRY_LOG_LEVEL=warn',
        '',
      ].join('\n'),
    );
    env = {
      PATH: process.env.PATH ?? '',
      ...assignments(one(settings, 'Environment')),
      ...assignments(await readFile(envFile, 'utf8')),
    };
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function healthy(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.status === 200) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error('the gateway did not answer /healthz');
      await sleep(200);
    }
  }

  it('is restarted after a kill, stops cleanly on SIGTERM and stays stopped', async () => {
    const unit = supervise(settings, env);
    try {
      await healthy();
      const first = unit.current();
      first.kill('SIGKILL');
      // RestartSec later, a new process answers.
      const deadline = Date.now() + 60_000;
      while (unit.starts.length < 2 && Date.now() < deadline) await sleep(100);
      expect(unit.starts.length).toBe(2);
      expect(unit.exits[0]).toEqual({ code: null, signal: 'SIGKILL' });
      await healthy();
      expect(unit.current().pid).not.toBe(first.pid);
      const stopped = await unit.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.ms).toBeLessThan(Number(one(settings, 'TimeoutStopSec')) * 1000);
      await sleep((Number(one(settings, 'RestartSec')) + 1) * 1000);
      expect(unit.starts.length).toBe(2);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      await unit.stop();
    }
  }, 180_000);

  it('is not restarted in a loop when it refuses to start (exit 2)', async () => {
    const unit = supervise(settings, { ...env, QUARRY_LOG_LEVEL: 'loud' });
    const deadline = Date.now() + 30_000;
    while (unit.exits.length < 1 && Date.now() < deadline) await sleep(100);
    expect(unit.exits[0]).toEqual({ code: 2, signal: null });
    await sleep((Number(one(settings, 'RestartSec')) + 1) * 1000);
    expect(unit.starts.length).toBe(1);
  }, 60_000);
});
