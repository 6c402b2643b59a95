// Opt-in: the conformance kit against a real Snowflake account. Collected only when a
// QUARRY_LIVE_SNOWFLAKE_* variable is set (vitest.config.ts); fails naming what is missing unless
// the required ones are all set.
//
//   QUARRY_LIVE_SNOWFLAKE_ACCOUNT      account identifier, e.g. myorg-myaccount
//   QUARRY_LIVE_SNOWFLAKE_USER         login name
//   QUARRY_LIVE_SNOWFLAKE_PASSWORD     password, or instead:
//   QUARRY_LIVE_SNOWFLAKE_PRIVATE_KEY_PATH        PEM private key file (key-pair login)
//   QUARRY_LIVE_SNOWFLAKE_PRIVATE_KEY_PASSPHRASE  its passphrase, if encrypted (optional)
//   QUARRY_LIVE_SNOWFLAKE_WAREHOUSE, _DATABASE, _SCHEMA   where the fixture table is created
//   QUARRY_LIVE_SNOWFLAKE_ROLE         optional; must be able to CREATE TABLE in the schema
//
// The fixture table is created and dropped through a plain snowflake-sdk connection with the same
// credentials (the connector itself refuses to write, which the kit proves). Running statements
// are counted from INFORMATION_SCHEMA.QUERY_HISTORY; killing sessions needs privileges a test
// user should not have, so that check is reported as skipped.
import { readFileSync } from 'node:fs';
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import type { Connection } from 'snowflake-sdk';
import { describe, it } from 'vitest';
import { snowflakeConfigSchema } from '../src/snowflake-config.js';
import { snowflakeConnectionOptions } from '../src/snowflake-connection-options.js';
import { snowflakePlugin } from '../src/snowflake-plugin.js';
import { loadSnowflakeSdk } from '../src/snowflake-sdk.js';
import { snowflakeConformanceSql } from './snowflake-conformance-sql.js';

const PREFIX = 'QUARRY_LIVE_SNOWFLAKE_';
const env = (name: string): string | undefined => process.env[`${PREFIX}${name}`] || undefined;

function liveConfig(): Record<string, unknown> | string {
  const missing = ['ACCOUNT', 'USER', 'WAREHOUSE', 'DATABASE', 'SCHEMA']
    .filter((name) => env(name) === undefined)
    .map((name) => PREFIX + name);
  if (env('PASSWORD') === undefined && env('PRIVATE_KEY_PATH') === undefined) {
    missing.push(`${PREFIX}PASSWORD or ${PREFIX}PRIVATE_KEY_PATH`);
  }
  if (missing.length > 0) return `set ${missing.join(', ')} to run it`;
  const keyPath = env('PRIVATE_KEY_PATH');
  return {
    account: env('ACCOUNT'),
    username: env('USER'),
    ...(keyPath === undefined
      ? { password: env('PASSWORD') }
      : { privateKey: readFileSync(keyPath, 'utf8'), privateKeyPassphrase: env('PRIVATE_KEY_PASSPHRASE') }),
    warehouse: env('WAREHOUSE'),
    database: env('DATABASE'),
    schema: env('SCHEMA'),
    role: env('ROLE'),
  };
}

/** A plain (writing) snowflake-sdk connection for the fixture and the probes. */
let admin: Promise<Connection> | undefined;

function adminConnection(config: Record<string, unknown>): Promise<Connection> {
  admin ??= (async () => {
    const sdk = await loadSnowflakeSdk();
    const connection = sdk.createConnection(snowflakeConnectionOptions(snowflakeConfigSchema.parse(config)));
    await new Promise<void>((resolve, reject) =>
      connection.connect((error) => (error ? reject(error) : resolve())),
    );
    return connection;
  })();
  return admin;
}

async function run(
  config: Record<string, unknown>,
  sqlText: string,
  binds: string[] = [],
): Promise<unknown[][]> {
  const connection = await adminConnection(config);
  return new Promise((resolve, reject) => {
    connection.execute({
      sqlText,
      binds,
      complete: (error, _statement, rows) => (error ? reject(error) : resolve((rows ?? []) as unknown[][])),
    });
  });
}

const config = liveConfig();

if (typeof config === 'string') {
  describe('snowflake live conformance', () => {
    it('runs against a real Snowflake account when its environment is set', () => {
      throw new Error(`Snowflake live test: ${config}`);
    });
  });
} else {
  describeConnectorConformance({
    name: 'snowflake live',
    plugin: snowflakePlugin,
    config: () => config,
    unreachableConfig: () => ({ ...config, accessUrl: 'http://127.0.0.1:1' }),
    // A suspended warehouse takes a few seconds to resume; the slow query must still be running.
    slowTimeoutMs: 2_000,
    setup: async (table) => {
      const fixture = conformanceFixtureSql(table);
      await run(config, fixture.createTable);
      await run(config, fixture.insertRows);
    },
    teardown: async (table) => {
      try {
        await run(config, conformanceFixtureSql(table).dropTable);
      } finally {
        const connection = await admin;
        admin = undefined;
        if (connection !== undefined)
          await new Promise<void>((resolve) => connection.destroy(() => resolve()));
      }
    },
    sql: snowflakeConformanceSql,
    runningQueries: async (marker) => {
      const rows = await run(
        config,
        `SELECT count(*) AS n FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY(RESULT_LIMIT => 1000))
         WHERE EXECUTION_STATUS IN ('RUNNING', 'QUEUED', 'RESUMING_WAREHOUSE', 'BLOCKED')
           AND QUERY_TEXT LIKE ? AND QUERY_TEXT NOT ILIKE '%QUERY_HISTORY%'`,
        [`%${marker}%`],
      );
      // Sessions use array rows and fetch numbers as text.
      return Number(rows[0]?.[0] ?? 0);
    },
  });
}
