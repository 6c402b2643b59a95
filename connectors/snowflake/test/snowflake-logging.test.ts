// snowflake-sdk logs at INFO to the console and to ./snowflake.log unless configured, and its
// "easy logging" adopts a client config file (here through SF_CLIENT_CONFIG_FILE, pointing it at
// DEBUG and a log directory). Through the connector none of that may happen: queries that
// succeed, fail, time out and hit wide numbers (the driver warns about those) run in a temp cwd,
// and afterwards no snowflake.log exists anywhere there, nothing reached the console, and the
// driver's messages arrived at the connector's logger at debug.
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ConnectorLogger,
  createConnector,
  isConnectorError,
  parseTemplate,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, expect, it, type MockInstance, vi } from 'vitest';
import { snowflakePlugin } from '../src/snowflake-plugin.js';
import { type FakeSnowflakeServer, startFakeSnowflake } from './fake-snowflake-server.js';

const PASSWORD = 'logging-secret-pw';

interface Entry {
  readonly level: keyof ConnectorLogger;
  readonly fields: Record<string, unknown>;
  readonly message: string | undefined;
}

const entries: Entry[] = [];
const logger: ConnectorLogger = {
  debug: (fields, message) => entries.push({ level: 'debug', fields: { ...fields }, message }),
  info: (fields, message) => entries.push({ level: 'info', fields: { ...fields }, message }),
  warn: (fields, message) => entries.push({ level: 'warn', fields: { ...fields }, message }),
  error: (fields, message) => entries.push({ level: 'error', fields: { ...fields }, message }),
};

let dir: string;
let previousCwd: string;
let fake: FakeSnowflakeServer;
const spies: MockInstance[] = [];

async function filesNamed(root: string, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.name === name) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-snowflake-logging-'));
  previousCwd = process.cwd();
  process.chdir(dir);
  const clientConfig = join(dir, 'sf_client_config.json');
  await writeFile(clientConfig, JSON.stringify({ common: { log_level: 'DEBUG', log_path: dir } }));
  await chmod(clientConfig, 0o600);
  vi.stubEnv('SF_CLIENT_CONFIG_FILE', clientConfig);
  fake = await startFakeSnowflake({ users: { reader: { password: PASSWORD } }, holdMs: 100 });
  await fake.run(
    'CREATE TABLE wide AS SELECT 9999999999999999.99::DECIMAL(18,2) AS amount, -2.5e100::DOUBLE AS ratio',
  );
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    spies.push(vi.spyOn(console, method));
  }
  spies.push(vi.spyOn(process.stdout, 'write'), vi.spyOn(process.stderr, 'write'));
});

afterAll(async () => {
  for (const spy of spies) spy.mockRestore();
  vi.unstubAllEnvs();
  await fake?.close();
  process.chdir(previousCwd);
  await rm(dir, { recursive: true, force: true });
});

it('writes no snowflake.log, prints nothing, and routes the driver messages to the connector logger', async () => {
  const connector = await createConnector(
    snowflakePlugin,
    { account: fake.account, username: 'reader', password: PASSWORD, accessUrl: fake.url },
    { logger },
  );
  const run = (sql: string, timeoutMs = 5_000) =>
    connector.query({ template: parseTemplate(sql, snowflakePlugin.dialect), params: {}, timeoutMs });
  try {
    expect((await run('SELECT amount AS "amount", ratio AS "ratio" FROM wide')).rows).toEqual([
      { amount: '9999999999999999.99', ratio: -2.5e100 },
    ]);
    await expect(run('SELECT * FROM missing_table')).rejects.toSatisfy((e) =>
      isConnectorError(e, 'QUERY_FAILED'),
    );
    await expect(run('SELECT SYSTEM$WAIT(10) AS "w"', 300)).rejects.toSatisfy((e) =>
      isConnectorError(e, 'QUERY_TIMEOUT'),
    );
  } finally {
    await connector.close();
  }
  const wrong = await createConnector(
    snowflakePlugin,
    { account: fake.account, username: 'reader', password: 'wrong-password', accessUrl: fake.url },
    { logger },
  );
  await expect(wrong.test()).rejects.toSatisfy((e) => isConnectorError(e, 'CONNECT_FAILED'));
  await wrong.close();

  expect(await filesNamed(dir, 'snowflake.log'), 'no log file under the temp cwd').toEqual([]);
  for (const spy of spies) expect(spy, 'nothing written to the console').not.toHaveBeenCalled();
  const routed = entries.filter((entry) => entry.fields.source === 'snowflake-sdk');
  expect(routed.length, 'the driver messages reached our logger').toBeGreaterThan(0);
  expect(new Set(routed.map((entry) => entry.level))).toEqual(new Set(['debug']));
  expect(
    routed.some((entry) => entry.fields.sdkLevel === 'warn'),
    'the driver warning was routed too',
  ).toBe(true);
  expect(JSON.stringify(entries)).not.toContain(PASSWORD);
});
