// The production start runs the compiled build with plain `node` and no TypeScript tooling:
// `npm run build`, then what a deployment holds (what `node scripts/ship-list.mjs` prints: each
// workspace's package.json and the files it publishes, without src/; the built console;
// scripts/ and deploy/) is copied to an empty directory, where
// `npm ci --omit=dev` installs the runtime dependencies only (no typescript, tsx, vite or
// vitest), and `npm run start:prod` seeds the demo warehouse and starts gateway/dist/server.js on
// an empty data directory (its store unpacked from the template the build made). The demo key
// then answers /healthz and a demo query. `.ci/run` builds before `npm test`, so the build here
// is tsc's up-to-date check; from a clean tree it compiles everything (minutes on two cores).
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, type GatewayExit, REPO_ROOT } from './support/gateway-process.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * Copies what a deployment of the build holds into `target`: exactly what `node
 * scripts/ship-list.mjs` prints (docs/deploy.md, section 1), so the list the guide gives is the
 * list this test starts from. No sources, no node_modules.
 */
async function copyDeployment(target: string): Promise<void> {
  const { stdout } = await run(process.execPath, ['scripts/ship-list.mjs', '--json'], { cwd: REPO_ROOT });
  for (const path of JSON.parse(stdout) as string[]) {
    await mkdir(dirname(join(target, path)), { recursive: true });
    await cp(join(REPO_ROOT, path), join(target, path), { recursive: true });
  }
}

describe('compiled build (npm run build, npm ci --omit=dev, npm run start:prod)', () => {
  let root: string | undefined;
  let stop: (() => Promise<GatewayExit>) | undefined;

  afterAll(async () => {
    await stop?.();
    if (root) await rm(root, { recursive: true, force: true });
  }, 30_000);

  it('runs the gateway with plain node and no TypeScript tooling, and answers the demo query', async () => {
    const timings: string[] = [];
    let started = performance.now();
    const lap = (what: string) => {
      timings.push(`${what} ${Math.round(performance.now() - started)} ms`);
      started = performance.now();
    };
    await run('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, maxBuffer: 16 * 2 ** 20 });
    lap('build');

    root = await mkdtemp(join(tmpdir(), 'quarry-e2e-compiled-'));
    const app = join(root, 'app');
    await copyDeployment(app);
    // --prefer-offline: the packages are in npm's cache since the repository's own `npm ci`.
    // --ignore-scripts: the root's `prepare` bundles the console, which the copy holds built.
    await run(
      'npm',
      ['ci', '--omit=dev', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        cwd: app,
        maxBuffer: 16 * 2 ** 20,
      },
    );
    lap('npm ci --omit=dev');
    expect(await exists(join(app, 'node_modules/@quarry/gateway/dist/server.js'))).toBe(true);
    expect(await exists(join(app, 'gateway/src'))).toBe(false);
    // No TypeScript tooling is installed at all (the SDK's conformance kit does not declare
    // vitest, so nothing flags it, vite or tsx devOptional in the lockfile).
    for (const tool of ['typescript', 'tsx', 'vite', 'vitest']) {
      expect(await exists(join(app, 'node_modules', tool)), tool).toBe(false);
    }
    // The build made the embedded store's template, and the deployment ships it.
    expect((await readdir(join(app, 'gateway/pglite-template'))).some((f) => f.endsWith('.tar.gz'))).toBe(
      true,
    );

    const dataDir = join(root, 'data');
    const port = await freePort();
    const child = spawn('npm', ['run', '-s', 'start:prod'], {
      cwd: app,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        QUARRY_DATA_DIR: dataDir,
        // Anything that still wanted TypeScript at run time would have to find it through here.
        NODE_OPTIONS: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const exited = new Promise<GatewayExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    let gone: GatewayExit | undefined;
    void exited.then((exit) => {
      gone = exit;
    });
    stop = async () => {
      // The whole group: npm, the launcher, the seeder and the gateway.
      if (gone === undefined && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      return exited;
    };

    const url = `http://127.0.0.1:${port}`;
    const deadline = performance.now() + 90_000;
    let key: string | undefined;
    while (key === undefined) {
      if (gone !== undefined) throw new Error(`start:prod exited (${gone.code ?? gone.signal})\n${output}`);
      if (performance.now() > deadline) throw new Error(`no answer within 90 s\n${output}`);
      try {
        const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
        await health.body?.cancel();
        if (health.status === 200) key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
      } catch {
        // Not listening yet, or the key not written yet.
      }
      if (key === undefined) await sleep(100);
    }
    lap('start:prod → /healthz');

    // The seeder runs beside the gateway: the demo warehouse may trail /healthz by a moment.
    let answer: { results?: { region: string; revenue: unknown }[] } = {};
    let status = 0;
    while (performance.now() < deadline) {
      const response = await fetch(`${url}/v1/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
      });
      status = response.status;
      answer = (await response.json()) as typeof answer;
      if (status === 200) break;
      await sleep(200);
    }
    lap('first answer');
    expect(status, JSON.stringify(answer)).toBe(200);
    expect(answer.results).toHaveLength(6);
    for (const row of answer.results ?? []) expect(Number(row.revenue)).toBeGreaterThan(0);
    console.log(`[e2e] compiled start: ${timings.join('; ')}`);
  }, 600_000);
});
