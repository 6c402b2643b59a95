// The conformance kit's entry: one vitest `describe` that proves a connector plugin honours the
// Quarry contract against its real engine (binding, typed NULLs, arrays, injection, read-only,
// timeouts, row caps, JSON-safe types, pooling, session loss, close, unreachable servers).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe } from 'vitest';
import { createConnector } from '../index.js';
import { connectorOptions, createConformanceHarness, type HarnessState } from './conformance-harness.js';
import type { ConformanceOptions } from './conformance-options.js';
import { registerDescribeConformance } from './describe-conformance.js';
import { registerDestinationConformance } from './destination-conformance.js';
import { registerInjectionConformance } from './injection-conformance.js';
import { registerLifecycleConformance } from './lifecycle-conformance.js';
import { registerLimitsConformance } from './limits-conformance.js';
import { registerParamConformance } from './param-conformance.js';
import { registerReadOnlyRuntimeConformance } from './read-only-runtime-conformance.js';

const HOOK_TIMEOUT_MS = 60_000;

/**
 * Registers the conformance suite for one connector plugin. Call it at the top level of a vitest
 * test file (`<name>-conformance.test.ts`); vitest must be the runner. The suite, in order:
 * checks `available` (skips loudly, or fails under `CI=true`), calls `setup(table)`, creates the
 * connector from `config()` with a pool of `max: 3` (unless `pool` says otherwise), runs the
 * checks, then closes every connector it opened and calls `teardown(table)`.
 *
 * Checks (names as in `notApplicable`): `echo` every scalar param type round-trips with its
 * column type; `typedNulls` the `(:x IS NULL OR col = :x)` idiom; `arrays` `inList` with 0, 1,
 * many ids and NULL; `arrayEcho` array values where `sql.echo(type, true)` gives a template;
 * `hostileStrings` 200+ hostile values are inert (same rows and compiled SQL as a harmless value,
 * each < 1 s, table unchanged); `nul` NUL is refused with PARAM_INVALID; `readOnly` writes, DDL
 * and stacked statements fail with QUERY_FAILED; `readOnlyRuntime` the statements of the plugin's
 * SQL family (`dialect.family`) that write or reach the host (`INTO OUTFILE`, `COPY … TO
 * PROGRAM`, `pg_read_file`, `ATTACH`, …) are refused before execution (QUERY_FAILED, driverCode
 * READ_ONLY) and write no file; `timeout` QUERY_TIMEOUT, the statement gone from
 * the server within 1 s; `maxRows` exact truncation; `columnTypes` fixture types and JSON-safe
 * values; `concurrency` 4× pool max concurrent queries; `killSessions` sessions killed on the
 * server are replaced; `close` idempotent, drains, then CLOSED; `unreachable` CONNECT_FAILED
 * within 5 s without a secret in the message; `destinations` every `forbiddenDestinations` config
 * (loopback, link-local, private, unix socket, host file) is refused by the plugin's declared
 * destinations and by its driver under the strictest policy, loopback and host files pass under
 * the operator's, and cloud metadata never does; and (with `namedWarehouse`) the driver connects
 * to the address the guard resolved a host name to, never asking the system resolver for it (DNS
 * rebinding), and a new connector is refused once the name resolves to cloud metadata; `describe` (with `describes: true`) a statement
 * is checked without running it: its columns, unknown tables and columns named in the
 * warehouse's message, every write refused. Each check has its own 30 s timeout.
 *
 * Checks that need an optional probe (`killSessions`, `unreachableConfig`), and `arrayEcho` for
 * an engine that cannot select an array, register no test when they cannot apply: the reason is
 * printed instead; without `runningQueries` the timeout check
 * proves the query settled and the connector recovered, but cannot see the server.
 *
 * @example
 * describeConnectorConformance({
 *   name: 'postgres',
 *   plugin: postgresPlugin,
 *   config: () => ({ host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' }),
 *   setup: async (table) => { const f = conformanceFixtureSql(table); await admin.query(f.createTable); await admin.query(f.insertRows); },
 *   teardown: async (table) => { await admin.query(conformanceFixtureSql(table).dropTable); },
 *   sql: {
 *     echo: (_type, _array) => 'SELECT :v AS v',
 *     slow: (marker) => `SELECT pg_sleep(10) /* ${marker} *\/`,
 *     inList: (table) => `SELECT id FROM ${table} WHERE id = ANY(:ids) ORDER BY id`,
 *   },
 *   runningQueries: async (marker) => …,
 *   killSessions: async () => …,
 * });
 */
export function describeConnectorConformance<Config>(options: ConformanceOptions<Config>): void {
  // The plugin's Config only matters to createConnector, which takes the raw config as unknown.
  const opts = options as unknown as ConformanceOptions;
  const table = opts.table ?? defaultTableName(opts.name);
  const state: HarnessState = { unavailable: undefined, main: undefined, config: undefined, extras: [] };
  const harness = createConformanceHarness(opts, table, state);
  let setupStarted = false;

  describe(`${opts.name} connector conformance`, () => {
    beforeAll(async () => {
      const verdict = await checkAvailable(opts);
      if (verdict !== true) {
        if (process.env.CI === 'true') {
          throw new Error(`[quarry conformance] ${opts.name} is unavailable and CI=true: ${verdict}`);
        }
        console.warn(
          `\n${'!'.repeat(80)}\n[quarry conformance] ${opts.name}: SKIPPING THE WHOLE SUITE: ${verdict}\n` +
            `Set CI=true to make this a failure.\n${'!'.repeat(80)}\n`,
        );
        state.unavailable = verdict;
        return;
      }
      setupStarted = true;
      await opts.setup(table);
      state.config = await opts.config();
      state.main = await createConnector(opts.plugin, state.config, connectorOptions(opts));
    }, HOOK_TIMEOUT_MS);

    afterAll(async () => {
      const connectors = [state.main, ...state.extras];
      await Promise.allSettled(connectors.map((connector) => connector?.close()));
      if (setupStarted) await opts.teardown?.(table);
    }, HOOK_TIMEOUT_MS);

    registerParamConformance(harness);
    registerInjectionConformance(harness);
    registerReadOnlyRuntimeConformance(harness);
    registerLimitsConformance(harness);
    registerLifecycleConformance(harness);
    registerDestinationConformance(harness);
    registerDescribeConformance(harness);
  });
}

async function checkAvailable(options: ConformanceOptions): Promise<true | string> {
  if (options.available === undefined) return true;
  try {
    return await options.available();
  } catch (error) {
    return `available() threw: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** `quarry_conf_<name>_<hex>`: lower-case, unquoted-identifier safe, unique per run, ≤ 63 chars. */
function defaultTableName(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  return `quarry_conf_${slug}_${randomBytes(4).toString('hex')}`;
}
