// A mistyped variable stops the gateway at start, before it opens or creates its store: exit
// code 2, and every problem listed on stderr at once (no stack trace), including the variables
// that have a syntax of their own (plans, rate limits, the key ring).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayToExit } from './support/gateway-process.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-config-errors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('configuration problems', () => {
  it('lists every problem, plans, rate limits and key ring included, and exits 2 with an empty data dir', async () => {
    const dataDir = await mkdtemp(join(dir, 'data-'));
    const { code, stderr } = await runGatewayToExit({
      QUARRY_DATA_DIR: dataDir,
      QUARRY_PLANS: '[{"id": "free"',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 0, window_seconds: 60 } }),
      QUARRY_SECRET_KEY: 'k1:dG9vLXNob3J0',
      QUARRY_LOG_LEVEL: 'loud',
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/^Invalid configuration:/);
    expect(stderr).toMatch(/QUARRY_PLANS: not valid JSON/);
    expect(stderr).toMatch(/QUARRY_RATE_LIMITS: free\.limit: /);
    expect(stderr).toMatch(/QUARRY_SECRET_KEY: key "k1" must be 32 bytes of base64/);
    expect(stderr).toMatch(/QUARRY_LOG_LEVEL: /);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(await readdir(dataDir)).toEqual([]);
  }, 90_000);

  it('names a plan entry that breaks the schema', async () => {
    const dataDir = await mkdtemp(join(dir, 'data-'));
    const { code, stderr } = await runGatewayToExit({
      QUARRY_DATA_DIR: dataDir,
      QUARRY_PLANS: JSON.stringify([{ id: 'smb', name: 'SMB', included_calls: -3 }]),
    });
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/QUARRY_PLANS: 0\.included_calls: /);
    expect(await readdir(dataDir)).toEqual([]);
  }, 90_000);
});
