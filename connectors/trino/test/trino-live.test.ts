// Opt-in: the SDK's conformance kit against a real Trino (or Starburst) cluster. Runs only when
// QUARRY_LIVE_TRINO_SERVER, QUARRY_LIVE_TRINO_USER, QUARRY_LIVE_TRINO_CATALOG and
// QUARRY_LIVE_TRINO_SCHEMA are set (plus QUARRY_LIVE_TRINO_PASSWORD or QUARRY_LIVE_TRINO_JWT when
// the cluster authenticates). Collected only when a QUARRY_LIVE_TRINO_* variable is set
// (vitest.config.ts); fails naming what is missing unless the required ones are all set. The
// user must be allowed to create and drop a table in CATALOG.SCHEMA (e.g. `memory.default`): the
// fixture table is written there with the same credentials and dropped afterwards.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import type { QueryResult } from 'trino-client';
import { describe, it } from 'vitest';
import { createTrinoClient, trinoConnectionOptions } from '../src/trino-client.js';
import { resolveTrinoSettings, trinoConfigSchema } from '../src/trino-config.js';
import { trinoPlugin } from '../src/trino-plugin.js';
import { createFixtureSql, runningQueriesOver, slowTrinoQuery } from './trino-test-support.js';

const env = process.env;
const REQUIRED = [
  'QUARRY_LIVE_TRINO_SERVER',
  'QUARRY_LIVE_TRINO_USER',
  'QUARRY_LIVE_TRINO_CATALOG',
  'QUARRY_LIVE_TRINO_SCHEMA',
] as const;
const missing = REQUIRED.filter((name) => (env[name] ?? '') === '');

/** The connection config from the environment (validated by the plugin's own schema). */
function liveConfig(): Record<string, unknown> {
  return {
    server: env.QUARRY_LIVE_TRINO_SERVER,
    user: env.QUARRY_LIVE_TRINO_USER,
    ...(env.QUARRY_LIVE_TRINO_PASSWORD ? { password: env.QUARRY_LIVE_TRINO_PASSWORD } : {}),
    ...(env.QUARRY_LIVE_TRINO_JWT ? { accessToken: env.QUARRY_LIVE_TRINO_JWT } : {}),
    catalog: env.QUARRY_LIVE_TRINO_CATALOG,
    schema: env.QUARRY_LIVE_TRINO_SCHEMA,
  };
}

/** Runs a statement with the live credentials through trino-client, failing on any error page. */
async function runAdmin(sql: string): Promise<void> {
  const settings = resolveTrinoSettings(trinoConfigSchema.parse(liveConfig()));
  const agents = { http: new HttpAgent(), https: new HttpsAgent() };
  try {
    const client = createTrinoClient(trinoConnectionOptions(settings), agents, { timeoutMs: 120_000 });
    const pages = await client.query(sql);
    for (let step = await pages.next(); ; step = await pages.next()) {
      const page = step.value as QueryResult;
      if (page.error) throw new Error(`Trino ${page.error.errorName} while preparing the live fixture`);
      if (step.done === true || page.nextUri === undefined) break;
    }
  } finally {
    agents.http.destroy();
    agents.https.destroy();
  }
}

if (missing.length > 0) {
  describe('trino live conformance', () => {
    it('runs against a real Trino when its environment is set', () => {
      throw new Error(
        `set ${missing.join(', ')} to run the live Trino test (see connectors/trino/README.md)`,
      );
    });
  });
} else {
  describeConnectorConformance({
    name: 'trino-live',
    plugin: trinoPlugin,
    config: liveConfig,
    unreachableConfig: () => ({ server: 'http://127.0.0.1:1', user: 'nobody', password: 'unreachable-pw' }),
    setup: async (table) => {
      for (const statement of createFixtureSql(table, 'trino')) await runAdmin(statement);
    },
    teardown: async (table) => {
      await runAdmin(`DROP TABLE IF EXISTS ${table}`);
    },
    sql: {
      echo: () => 'SELECT :v AS v',
      slow: slowTrinoQuery,
      inList: (table) => `SELECT id FROM ${table} WHERE contains(:ids, id) ORDER BY id`,
      count: (table) => `SELECT count(*) AS n FROM ${table}`,
    },
    runningQueries: (marker) =>
      runningQueriesOver(
        String(env.QUARRY_LIVE_TRINO_SERVER),
        {
          user: String(env.QUARRY_LIVE_TRINO_USER),
          ...(env.QUARRY_LIVE_TRINO_PASSWORD ? { password: env.QUARRY_LIVE_TRINO_PASSWORD } : {}),
          ...(env.QUARRY_LIVE_TRINO_JWT ? { token: env.QUARRY_LIVE_TRINO_JWT } : {}),
        },
        marker,
      ),
    notApplicable: {
      killSessions: 'Trino has no server-side sessions to kill: every query is its own HTTP exchange',
    },
  });
}
