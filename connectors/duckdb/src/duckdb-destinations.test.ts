// DuckDB reads the gateway host's own disk (issue 17): an owner's connection needs
// QUARRY_ALLOW_HOST_FILES, private networks alone are not enough (before the fix the one switch
// let `allowedDirectories: ["/"]` read the gateway's secret-key.json), and an owner's engine is
// held to the gateway's thread and memory caps whatever its config asks.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createConnector,
  isDestinationRefusal,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
  parseTemplate,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbPlugin } from './duckdb-plugin.js';
import { cappedMemoryLimit, memoryLimitBytes } from './duckdb-resources.js';

let dir: string;
let secret: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-duckdb-dest-'));
  secret = join(dir, 'secret-key.json');
  await writeFile(secret, '{"current":"k1","keys":{"k1":"c2VjcmV0"}}\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readSecret = () => parseTemplate(`SELECT * FROM read_text('${secret.replaceAll("'", "''")}')`);

describe('duckdb destinations', () => {
  it("cannot read the gateway's files with private networks allowed but host files not", async () => {
    const config = { path: ':memory:', allowedDirectories: ['/'] };
    expect(duckdbPlugin.destinations?.(duckdbPlugin.configSchema.parse(config))).toEqual([
      { kind: 'file', path: '/' },
    ]);
    const refused = createConnector(duckdbPlugin, config, {
      destinations: { ...PUBLIC_ONLY, privateNetworks: true },
    });
    const error = await refused
      .then(
        (c) => c.query({ template: readSecret(), params: {} }).finally(() => c.close()),
        (e: unknown) => Promise.reject(e),
      )
      .catch((e: unknown) => e);
    expect(isDestinationRefusal(error)).toBe(true);
  });

  it('reads them when the operator allows host files (the switch does what it says)', async () => {
    const connector = await createConnector(
      duckdbPlugin,
      { path: ':memory:', allowedDirectories: [dir] },
      { destinations: OPERATOR_TRUSTED },
    );
    try {
      const result = await connector.query({ template: readSecret(), params: {} });
      expect(String(result.rows[0]?.content)).toContain('c2VjcmV0');
    } finally {
      await connector.close();
    }
  });

  it("caps an owner's threads and memory_limit at the gateway's limits", async () => {
    const connector = await createConnector(
      duckdbPlugin,
      { path: ':memory:', threads: 64, memoryLimit: '100GB' },
      { resources: { maxThreads: 1, maxMemoryBytes: 256 * 1024 * 1024 } },
    );
    try {
      const result = await connector.query({
        template: parseTemplate(
          "SELECT current_setting('threads') AS threads, current_setting('memory_limit') AS memory",
        ),
        params: {},
      });
      expect(result.rows[0]).toMatchObject({ threads: 1 });
      expect(String(result.rows[0]?.memory)).toMatch(/^25[0-9](\.\d+)? MiB$|^268\.\d+ MB$/);
    } finally {
      await connector.close();
    }
    expect(cappedMemoryLimit('512MB', { maxMemoryBytes: 2 ** 30 })).toBe('512MB');
    expect(cappedMemoryLimit(undefined, { maxMemoryBytes: 2 ** 30 })).toBe('1048576KiB');
    expect(memoryLimitBytes('2 GiB')).toBe(2 ** 31);
  });
});
