// One gateway per data directory: a second one started on a directory in use exits 2 with one
// line, before it opens the embedded store, and the first keeps serving; a lock left by a
// gateway that was killed (`kill -9`) is taken over by the next start.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, runGatewayToExit, startGateway } from './support/gateway-process.js';

describe('data directory lock', () => {
  let dataDir: string | undefined;
  const running: GatewayProcess[] = [];

  afterAll(async () => {
    await Promise.allSettled(running.map((g) => g.stop()));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('refuses a second gateway on the same data dir with exit 2 and one line; takes over after kill -9', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-lock-'));
    const env = { QUARRY_DATA_DIR: dataDir, QUARRY_DEMO: 'false', QUARRY_LOG_LEVEL: 'warn' };
    const first = await startGateway({ env });
    running.push(first);

    const second = await runGatewayToExit(env);
    expect(second.code, second.stderr).toBe(2);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Another gateway \(pid \d+\) is using the data directory .+; stop it/);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    // A lock whose process is gone is taken over.
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(true);
    const next = await startGateway({ env });
    running.push(next);
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    // …and a gateway that stops cleanly leaves no lock behind.
    await next.stop();
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  }, 120_000);
});
