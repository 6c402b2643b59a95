// The compiled gateway as an operator runs it (issue 37): from any working directory it finds
// the files the project ships (the console), and a start that fails says why in plain words
// (the database it was given does not exist), with no stack trace to dig the cause out of.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import {
  compiledBuildProblem,
  type GatewayProcess,
  postgresStoreEnv,
  runGatewayToExit,
  startGateway,
} from './support/gateway-process.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();

describe.runIf(up)('the compiled gateway started outside the repository', () => {
  let dir: string;
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess | undefined;
  const compiled = { nodeFlags: [] as string[] };

  beforeAll(async () => {
    const problem = await compiledBuildProblem();
    if (problem !== undefined) throw new Error(problem);
    dir = await mkdtemp(join(tmpdir(), 'quarry-elsewhere-'));
    store = await createControlPlaneSchema(`quarry_elsewhere_${suffix}`);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves the console when started from another directory', async () => {
    gateway = await startGateway({
      env: postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      compiled,
      cwd: dir,
    });
    const page = await fetch(`${gateway.url}/`);
    const html = await page.text();
    expect(page.status, html.slice(0, 300)).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).not.toMatch(/not built/);
  }, 90_000);

  it('names the cause of a failed start, without a stack trace', async () => {
    const url = new URL(TEST_PG_URL);
    url.pathname = `/quarry_missing_${suffix}`;
    const { code, stderr } = await runGatewayToExit(
      { ...postgresStoreEnv(url.toString(), randomBytes(32).toString('base64')) },
      { compiled, cwd: dir },
    );
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/^Quarry could not start: /m);
    expect(stderr).toContain(`database "quarry_missing_${suffix}" does not exist`);
    expect(stderr).not.toMatch(/^\s+at /m);
  }, 90_000);
});
