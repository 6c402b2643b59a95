// The embedded default loads a driver only when a connection of its type is used: started, it
// holds none of pg, mysql2, ioredis, DuckDB or the cloud SDKs (~35 MiB resident and ~0.4 s of
// start between them, bench/README.md), nor the OpenTelemetry SDK (tracing is off without an OTLP
// endpoint); the demo's first query loads DuckDB's and nothing else.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seedDemoWarehouse } from '@quarry/examples';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';

const run = promisify(execFile);

describe('drivers load on first use', () => {
  it('an embedded gateway starts with no driver loaded, and its demo query loads DuckDB only', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-lazy-'));
    try {
      await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 2_000 });
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', '--conditions=@quarry/source', 'test/support/loaded-drivers.ts', dataDir],
        { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } },
      );
      const [started, answered] = stdout
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(started).toEqual({ started: [] });
      expect(answered).toEqual({ status: 200, answered: ['@duckdb/node-api'] });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
