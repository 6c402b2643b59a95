// The gateway runs with V8's allocation-site pretenuring off (gateway/src/bootstrap/v8-flags.ts):
// with it on, objects of calls waiting on their usage event were allocated straight in old space
// under many connections and a cache hit's CPU doubled (bench/README.md, "Many connections").
// Node refuses the flag in NODE_OPTIONS, so the gateway sets it itself; this checks that it holds
// in a real gateway process, by V8's own trace of its pretenuring decisions: with the flag on,
// a gateway's start and its first requests already make dozens of "=> tenure" decisions.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';

describe('V8 pretenuring', () => {
  let dataDir: string | undefined;
  let gateway: GatewayProcess | undefined;

  afterAll(async () => {
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('decides no allocation site tenured, from start through requests', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-pretenure-'));
    gateway = await startGateway({
      env: { QUARRY_DATA_DIR: dataDir, QUARRY_DEMO: 'false', QUARRY_LOG_LEVEL: 'warn' },
      // V8 prints each pretenuring decision at the garbage collection that makes it.
      nodeFlags: ['--trace-pretenuring-statistics'],
    });
    const { url } = gateway;
    // Requests enough for scavenges, in parallel; and the OpenAPI document, a large allocation.
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        Array.from({ length: 25 }, async (_, i) => {
          const response = await fetch(`${url}${i === 0 ? '/v1/openapi.json' : '/healthz'}`);
          expect(response.status).toBe(200);
          await response.arrayBuffer();
        }),
      );
    }
    await gateway.stop();
    const trace = gateway.stdout();
    // The trace is on: V8 reports the sites it looked at (at least its own start-up's).
    expect(trace).toMatch(/pretenuring: /);
    const tenured = trace.split('\n').filter((line) => /=> tenure$/.test(line.trim()));
    expect(tenured, tenured.slice(0, 5).join('\n')).toEqual([]);
  }, 120_000);
});
