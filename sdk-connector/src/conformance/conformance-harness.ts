// Shared state and helpers of one conformance run: the availability verdict, the fixture table,
// the connector under test, and small query helpers every check uses. Only the SDK's public API
// is used, so the kit proves what a gateway (or any caller) would observe.
import { expect, it, type TestContext } from 'vitest';
import type { Connector, QueryResult } from '../connector.js';
import {
  type ConnectorError,
  type ConnectorErrorCode,
  checkParamSchema,
  createConnector,
  isConnectorError,
  type ParamSchema,
  type ParamValues,
  parseTemplate,
  type ScalarParamType,
  type ScalarValue,
  type SqlTemplate,
  type TypedValue,
  validateParams,
} from '../index.js';
import { CONFORMANCE_COLUMNS } from './conformance-fixture.js';
import type { ConformanceCheck, ConformanceOptions, ConformanceSql } from './conformance-options.js';
import { expectJsonSafe } from './expected-json.js';

/** Every template of ConformanceSql with defaults filled in (`count` stays optional: see harness.count). */
export type ResolvedConformanceSql = Required<Omit<ConformanceSql, 'count'>>;

/** What each group of checks is given. */
export interface ConformanceHarness {
  readonly options: ConformanceOptions;
  readonly table: string;
  readonly sql: ResolvedConformanceSql;
  /** The pool `max` the connector runs with. */
  readonly poolMax: number;
  /** The connector under test (after beforeAll). */
  connector(): Connector;
  /**
   * Registers one check of the kit as a test. A check that cannot apply to this plugin (declared
   * in `notApplicable`, or `body` is the reason instead of a function) registers no test and
   * prints the reason once: a skipped test would read as a gap in CI. A registered check skips
   * only when the engine turned out to be unavailable (the suite's beforeAll decides, and fails
   * instead under CI=true).
   */
  check(
    check: ConformanceCheck,
    title: string,
    body: ((context: TestContext) => Promise<void>) | string,
    timeoutMs: number,
  ): void;
  /** Parses (once) a template with the plugin's dialect. */
  template(sql: string): SqlTemplate;
  /** Runs a template; asserts the rows are JSON-safe. */
  query(sql: string, params?: ParamValues, limits?: QueryLimits, connector?: Connector): Promise<QueryResult>;
  /** Validates JSON input against a schema (checked with checkParamSchema) and asserts it is accepted. */
  validated(schema: Record<string, unknown>, input: Readonly<Record<string, unknown>>): ParamValues;
  /** The fixture table's row count through the connector. */
  count(): Promise<number>;
  /** Every fixture row through the connector, ordered by id. */
  snapshot(): Promise<QueryResult['rows']>;
  /** A second connector on the same config, closed by the kit in afterAll. */
  extraConnector(): Promise<Connector>;
}

/** Per-query limits the checks pass through. */
export interface QueryLimits {
  readonly maxRows?: number;
  readonly timeoutMs?: number;
  readonly maxResultBytes?: number;
}

/** Mutable lifecycle state, owned by describeConnectorConformance's hooks. */
export interface HarnessState {
  unavailable: string | undefined;
  main: Connector | undefined;
  config: unknown;
  readonly extras: Connector[];
}

const KIT_POOL_DEFAULTS = { max: 3, acquireTimeoutMs: 10_000 } as const;

/** A typed scalar or array value, for tests that bypass validation on purpose. */
export function typed(
  type: ScalarParamType,
  value: ScalarValue | readonly ScalarValue[] | null,
  array = false,
): TypedValue {
  return { type, array, value };
}

/** Runs `promise` and returns the ConnectorError it rejects with; fails on success or another error. */
export async function expectConnectorError(
  promise: Promise<unknown>,
  code: ConnectorErrorCode,
  what: string,
): Promise<ConnectorError> {
  let outcome: unknown;
  try {
    await promise;
    outcome = 'success';
  } catch (error) {
    if (isConnectorError(error, code)) return error;
    outcome = error;
  }
  throw new Error(`${what}: expected ConnectorError ${code}, got ${describeOutcome(outcome)}`);
}

/** A short description of an outcome for failure messages. */
export function describeOutcome(outcome: unknown): string {
  if (isConnectorError(outcome)) return `ConnectorError ${outcome.code}: ${outcome.message}`;
  if (outcome instanceof Error) return `${outcome.name}: ${outcome.message}`;
  return String(outcome);
}

/** Builds the harness; its state is filled by the suite's beforeAll. */
export function createConformanceHarness(
  options: ConformanceOptions,
  table: string,
  state: HarnessState,
): ConformanceHarness {
  const dialect = options.plugin.dialect;
  const sql = resolveSql(options.sql);
  const pool = { ...KIT_POOL_DEFAULTS, ...options.pool };
  const templates = new Map<string, SqlTemplate>();

  const connector = (): Connector => {
    if (state.main === undefined) throw new Error('the connector under test was not created (see beforeAll)');
    return state.main;
  };

  const template = (text: string): SqlTemplate => {
    let parsed = templates.get(text);
    if (parsed === undefined) {
      parsed = parseTemplate(text, dialect);
      templates.set(text, parsed);
    }
    return parsed;
  };

  const query = async (
    text: string,
    params: ParamValues = {},
    limits: QueryLimits = {},
    target: Connector = connector(),
  ): Promise<QueryResult> => {
    const result = await target.query({ template: template(text), params, ...limits });
    expectJsonSafe(result.rows, text);
    return result;
  };

  const harness: ConformanceHarness = {
    options,
    table,
    sql,
    poolMax: pool.max,
    connector,
    check(check, title, body, timeoutMs) {
      const reason = options.notApplicable?.[check] ?? (typeof body === 'string' ? body : undefined);
      if (reason !== undefined || typeof body === 'string') {
        console.info(`[conformance] ${options.name}: ${check} does not apply: ${reason}`);
        return;
      }
      it(
        title,
        async (context) => {
          if (state.unavailable !== undefined)
            context.skip(`${options.name} unavailable: ${state.unavailable}`);
          await body(context);
        },
        timeoutMs,
      );
    },
    template,
    query,
    validated(schema, input) {
      const checked: ParamSchema = checkParamSchema(schema);
      const validation = validateParams(checked, input);
      if (!validation.ok) {
        throw new Error(
          `validateParams refused ${JSON.stringify(input)}: ${JSON.stringify(validation.issues)}`,
        );
      }
      return validation.values;
    },
    async count() {
      if (options.sql.count === undefined)
        return (await query(sql.all(table), {}, { maxRows: 1_000_000 })).rowCount;
      const result = await query(options.sql.count(table));
      expect(result.rows, 'count query must return one row').toHaveLength(1);
      return Number(Object.values(result.rows[0] ?? {})[0]);
    },
    async snapshot() {
      return (await query(sql.all(table))).rows;
    },
    async extraConnector() {
      const extra = await createConnector(options.plugin, state.config, connectorOptions(options));
      state.extras.push(extra);
      return extra;
    },
  };
  return harness;
}

/** The createConnector options the kit uses for every connector it opens. */
export function connectorOptions(options: ConformanceOptions) {
  return {
    pool: { ...KIT_POOL_DEFAULTS, ...options.pool },
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
}

function resolveSql(sql: ConformanceSql): ResolvedConformanceSql {
  const columns = CONFORMANCE_COLUMNS.map((column) => column.name).join(', ');
  return {
    echo: (type, array) => sql.echo(type, array),
    slow: (marker) => sql.slow(marker),
    inList: (table) => sql.inList(table),
    all: (table) => sql.all?.(table) ?? `SELECT ${columns} FROM ${table} ORDER BY id`,
    byName: (table) => sql.byName?.(table) ?? `SELECT id FROM ${table} WHERE name = :name ORDER BY id`,
    nullFilter: (table, column, type) =>
      sql.nullFilter?.(table, column, type) ??
      `SELECT id FROM ${table} WHERE (:x IS NULL OR ${column} = :x) ORDER BY id`,
    writes: (table) =>
      sql.writes?.(table) ?? [
        `INSERT INTO ${table} (id, name) VALUES (100, 'written')`,
        `UPDATE ${table} SET name = 'written'`,
        `DELETE FROM ${table}`,
        `TRUNCATE TABLE ${table}`,
        `CREATE TABLE ${table}_created (id integer)`,
        `SELECT 1; DELETE FROM ${table}`,
        `DROP TABLE ${table}`,
      ],
  };
}

/** ids of a result, as numbers, in result order. */
export function idsOf(result: QueryResult): number[] {
  return result.rows.map((row) => Number(row.id));
}
