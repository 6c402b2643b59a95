// The engines the connector bench measures. Each target creates a small keyed table and offers
// the same one-row lookup two ways: A through the bare driver (one connection, the driver's own
// parameter binding), B through our connector exactly as the gateway runs an analytic (template
// parsed once, params validated per call, createConnector with one pooled session).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type Connector,
  type ConnectorPlugin,
  createConnector,
  type ParamSchema,
  parseTemplate,
  type SqlTemplate,
  validateParams,
} from '@quarry/sdk-connector';
import mysql from 'mysql2/promise';
import pg from 'pg';
// zod comes with @quarry/sdk-connector (a plugin's configSchema is a zod schema).
import { z } from 'zod';

/** Rows in each bench table; lookups cycle over all of them. */
export const BENCH_KEYS = 1_000;

/** One engine, ready to run the lookup both ways. Both return the row's `name`, to prove equal work. */
export interface BenchTarget {
  readonly engine: string;
  /** A: the bare driver. */
  bare(id: number): Promise<string>;
  /** B: our connector, with per-call param validation as the gateway does it. */
  connector(id: number): Promise<string>;
  /** Drops the table and closes every connection. */
  close(): Promise<void>;
}

/** How to reach each engine. */
export interface BenchTargetConfig {
  readonly postgresUrl: string;
  readonly mysqlUrl: string;
}

/** An engine the bench knows; `required` engines fail the run when unavailable. */
export interface BenchTargetFactory {
  readonly engine: string;
  readonly required: boolean;
  /** False for the in-memory engine: its A does no I/O, so only B − A means anything, not B/A. */
  readonly budgeted: boolean;
  create(config: BenchTargetConfig): Promise<BenchTarget>;
}

const PARAMS: ParamSchema = { id: { type: 'integer', required: true, min: 1, max: BENCH_KEYS } };

function tableName(): string {
  return `quarry_bench_kv_${process.pid}_${randomBytes(3).toString('hex')}`;
}

function nameOf(id: number): string {
  return `item-${id}`;
}

/** B's per-call path, shared by every engine: validate, then query through the connector. */
function connectorLookup(connector: Connector, template: SqlTemplate): (id: number) => Promise<string> {
  return async (id) => {
    const validation = validateParams(PARAMS, { id });
    if (!validation.ok) throw new Error(`bench params refused: ${JSON.stringify(validation.issues)}`);
    const result = await connector.query({
      template,
      params: validation.values,
      timeoutMs: 5_000,
      maxRows: 1_000,
    });
    return String(result.rows[0]?.name);
  };
}

async function openConnector(plugin: ConnectorPlugin, config: unknown): Promise<Connector> {
  // One session, like the bare side's one connection; everything else as the plugin defaults it.
  const connector = await createConnector(plugin, config, { pool: { min: 1, max: 1 } });
  await connector.test();
  return connector;
}

const postgres: BenchTargetFactory = {
  engine: 'postgres',
  required: true,
  budgeted: true,
  async create(config) {
    const { plugin } = await import('@quarry/connector-postgres');
    const table = tableName();
    const admin = new pg.Client({ connectionString: config.postgresUrl });
    await admin.connect();
    await admin.query(
      `CREATE TABLE ${table} (id integer PRIMARY KEY, name text NOT NULL, score double precision NOT NULL)`,
    );
    await admin.query(
      `INSERT INTO ${table} SELECT g, 'item-' || g, g * 1.5 FROM generate_series(1, ${BENCH_KEYS}) AS g`,
    );
    const bareClient = new pg.Client({ connectionString: config.postgresUrl });
    await bareClient.connect();
    const sql = `SELECT id, name, score FROM ${table} WHERE id = $1`;
    const connector = await openConnector(plugin, { connectionString: config.postgresUrl });
    const template = parseTemplate(`SELECT id, name, score FROM ${table} WHERE id = :id`, plugin.dialect);
    return {
      engine: 'postgres',
      async bare(id) {
        const result = await bareClient.query<{ name: string }>({ text: sql, values: [id] });
        return result.rows[0]!.name;
      },
      connector: connectorLookup(connector, template),
      async close() {
        await connector.close();
        await bareClient.end();
        await admin.query(`DROP TABLE IF EXISTS ${table}`);
        await admin.end();
      },
    };
  },
};

function mysqlOptions(url: string): mysql.ConnectionOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    user: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.slice(1) || 'test',
  };
}

const mariadb: BenchTargetFactory = {
  engine: 'mysql',
  required: false,
  budgeted: true,
  async create(config) {
    const { plugin } = await import('@quarry/connector-mysql');
    const options = mysqlOptions(config.mysqlUrl);
    const table = tableName();
    const admin = await mysql.createConnection(options);
    await admin.query(
      `CREATE TABLE ${table} (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, score DOUBLE NOT NULL) ENGINE=InnoDB`,
    );
    const values = Array.from({ length: BENCH_KEYS }, (_, i) => [i + 1, nameOf(i + 1), (i + 1) * 1.5]);
    await admin.query(`INSERT INTO ${table} (id, name, score) VALUES ?`, [values]);
    const bareConnection = await mysql.createConnection(options);
    const sql = `SELECT id, name, score FROM ${table} WHERE id = ?`;
    const connector = await openConnector(plugin, {
      host: options.host,
      port: options.port,
      user: options.user,
      database: options.database,
      ...(options.password === '' ? {} : { password: options.password }),
    });
    const template = parseTemplate(`SELECT id, name, score FROM ${table} WHERE id = :id`, plugin.dialect);
    return {
      engine: 'mysql',
      async bare(id) {
        const [rows] = await bareConnection.execute<mysql.RowDataPacket[]>(sql, [id]);
        return String(rows[0]?.name);
      },
      connector: connectorLookup(connector, template),
      async close() {
        await connector.close();
        await bareConnection.end();
        await admin.query(`DROP TABLE IF EXISTS ${table}`);
        await admin.end();
      },
    };
  },
};

const duckdb: BenchTargetFactory = {
  engine: 'duckdb',
  required: false,
  budgeted: true,
  async create() {
    const { plugin } = await import('@quarry/connector-duckdb');
    const dir = await mkdtemp(join(tmpdir(), 'quarry-bench-'));
    const file = join(dir, 'bench.duckdb');
    const writer = await DuckDBInstance.create(file);
    const setup = await writer.connect();
    await setup.run(
      `CREATE TABLE kv (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, score DOUBLE NOT NULL);
       INSERT INTO kv SELECT g, 'item-' || g, g * 1.5 FROM range(1, ${BENCH_KEYS + 1}) AS t(g);
       CHECKPOINT;`,
    );
    setup.closeSync();
    writer.closeSync();
    // Both sides open the file the way the connector does: read-only.
    const bareInstance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    const bareConnection = await bareInstance.connect();
    const prepared = await bareConnection.prepare('SELECT id, name, score FROM kv WHERE id = $1');
    const connector = await openConnector(plugin, { path: file });
    const template = parseTemplate('SELECT id, name, score FROM kv WHERE id = :id', plugin.dialect);
    return {
      engine: 'duckdb',
      async bare(id) {
        prepared.bindInteger(1, id);
        const reader = await prepared.runAndReadAll();
        return String(reader.getRowsJS()[0]?.[1]);
      },
      connector: connectorLookup(connector, template),
      async close() {
        await connector.close();
        prepared.destroySync();
        bareConnection.closeSync();
        bareInstance.closeSync();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

/**
 * No warehouse at all: a session that answers from memory. A calls the session directly, B goes
 * through createConnector, so B − A is the SDK runtime's own cost per query (pool, timers, abort
 * wiring, template compilation, JSON-safe values) with no network noise around it.
 */
const nullEngine: BenchTargetFactory = {
  engine: 'null',
  required: false,
  budgeted: false,
  async create() {
    const columns = [
      { name: 'id', type: 'integer' as const },
      { name: 'name', type: 'string' as const },
      { name: 'score', type: 'number' as const },
    ];
    const session = {
      async execute(query: { readonly params: readonly { readonly value: unknown }[] }) {
        const id = Number(query.params[0]?.value);
        return { columns, rows: [[id, nameOf(id), id * 1.5]] };
      },
      validate: async () => true,
      close: async () => {},
    };
    const plugin: ConnectorPlugin<Record<string, never>> = {
      type: 'null',
      configSchema: z.object({}).strict() as z.ZodType<Record<string, never>>,
      dialect: { placeholders: 'numbered' },
      createDriver: () => ({ createSession: async () => session }),
    };
    const connector = await openConnector(plugin, {});
    const template = parseTemplate('SELECT id, name, score FROM kv WHERE id = :id', plugin.dialect);
    return {
      engine: 'null',
      async bare(id) {
        const result = await session.execute({ params: [{ value: id }] });
        return String(result.rows[0]?.[1]);
      },
      connector: connectorLookup(connector, template),
      close: () => connector.close(),
    };
  },
};

/** Every engine, Postgres first (the one the acceptance figure is about). */
export const BENCH_TARGETS: readonly BenchTargetFactory[] = [postgres, mariadb, duckdb, nullEngine];

/** The expected `name` for a key, to check both paths return the same row. */
export const expectedName = nameOf;
