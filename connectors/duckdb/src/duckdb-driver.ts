// Opens one DuckDB database per connector, read-only, and hands out one connection per session.
//
// Read-only has three layers: the file opens with access_mode READ_ONLY (a `:memory:`
// connection gets an empty database file in a temp dir, because DuckDB cannot open an
// in-memory database read-only); sessions run SELECT statements only (see duckdb-session.ts);
// and file-system access is limited to the `files` directories (plus `allowedDirectories`),
// with the configuration locked, so an owner's SQL cannot read other files on the host.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  type ConnectorDriver,
  ConnectorError,
  type ConnectorSession,
  type DriverContext,
  type ResourceCaps,
} from '@quarry/sdk-connector';
import { DuckDBInstance } from './duckdb-api.js';
import { type DuckdbConfig, duckdbHostPaths, readerFor } from './duckdb-config.js';
import { connectFailed } from './duckdb-errors.js';
import { cappedMemoryLimit, cappedThreads } from './duckdb-resources.js';
import { createDuckdbSession } from './duckdb-session.js';

interface OpenDatabase {
  readonly instance: DuckDBInstance;
  /** Temp dir holding the empty database of a `:memory:` connection, removed on destroy. */
  readonly tempDir: string | undefined;
}

const GLOB_CHARS = /[*?[{]/;

/** Prefix of the temp dirs holding `:memory:` connections' empty databases. */
export const MEMORY_DIR_PREFIX = 'quarry-duckdb-mem-';

/** The directory prefix a path or glob reads from, with a trailing separator. */
export function directoryOf(pathOrGlob: string): string {
  const absolute = resolve(pathOrGlob);
  const glob = absolute.search(GLOB_CHARS);
  const fixed = glob === -1 ? absolute : absolute.slice(0, glob);
  const dir = glob === -1 || !fixed.endsWith(sep) ? dirname(fixed) : fixed;
  return dir.endsWith(sep) ? dir : dir + sep;
}

function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The statements that create one session's views over the configured files. */
export function fileViewStatements(files: Readonly<Record<string, string>> = {}): string[] {
  return Object.entries(files).map(([name, path]) => {
    const reader = readerFor(path) ?? 'read_parquet';
    return `CREATE OR REPLACE TEMP VIEW "${name}" AS SELECT * FROM ${reader}(${sqlString(resolve(path))})`;
  });
}

async function openDatabase(config: DuckdbConfig, caps: ResourceCaps | undefined): Promise<OpenDatabase> {
  let tempDir: string | undefined;
  let file = config.path;
  if (config.path === ':memory:' || config.path === '') {
    tempDir = await mkdtemp(join(tmpdir(), MEMORY_DIR_PREFIX));
    file = join(tempDir, 'empty.duckdb');
    const writer = await DuckDBInstance.create(file);
    writer.closeSync();
  }
  const options: Record<string, string> = {
    access_mode: 'READ_ONLY',
    // Never download extensions at query time.
    autoinstall_known_extensions: 'false',
  };
  // An owner's engine runs inside the gateway process: the gateway's caps bound what it asks for.
  const threads = cappedThreads(config.threads, caps);
  const memoryLimit = cappedMemoryLimit(config.memoryLimit, caps);
  if (threads !== undefined) options.threads = String(threads);
  if (memoryLimit !== undefined) options.memory_limit = memoryLimit;
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(file, options);
  } catch (error) {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    throw error;
  }
  try {
    await lockDown(instance, config);
  } catch (error) {
    instance.closeSync();
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    throw error;
  }
  return { instance, tempDir };
}

/** Instance-wide settings, applied once and then locked so no query can change them. */
async function lockDown(instance: DuckDBInstance, config: DuckdbConfig): Promise<void> {
  const files = Object.values(config.files ?? {}).map((path) => resolve(path));
  // A single file opens only itself; a glob opens the directory its fixed prefix names.
  const allowedPaths = files.filter((path) => !GLOB_CHARS.test(path));
  const allowedDirectories = [
    ...files.filter((path) => GLOB_CHARS.test(path)).map(directoryOf),
    ...(config.allowedDirectories ?? []).map((d) => directoryOf(join(d, 'x'))),
  ];
  const connection = await instance.connect();
  try {
    // Timestamps are UTC whatever the host's zone, so TIMESTAMPTZ params compare exactly.
    await connection.run(`SET GLOBAL TimeZone = 'UTC'`);
    await connection.run(`SET GLOBAL allowed_paths = [${allowedPaths.map(sqlString).join(', ')}]`);
    await connection.run(
      `SET GLOBAL allowed_directories = [${allowedDirectories.map(sqlString).join(', ')}]`,
    );
    await connection.run('SET GLOBAL enable_external_access = false');
    await connection.run('SET GLOBAL lock_configuration = true');
  } finally {
    connection.closeSync();
  }
}

/** Creates the driver for one DuckDB connection config; the database opens on the first session. */
export function createDuckdbDriver(config: DuckdbConfig, context: DriverContext): ConnectorDriver {
  // Every file a connection reads is on the gateway host: the operator's opt-in, checked here
  // as well as at creation, so a connection saved before the switch went off stays shut.
  for (const path of duckdbHostPaths(config)) context.destinations.checkFile(path);
  const views = fileViewStatements(config.files);
  let opening: Promise<OpenDatabase> | undefined;
  let destroyed = false;
  const connections = new Set<DuckDBConnection>();

  function database(): Promise<OpenDatabase> {
    opening ??= openDatabase(config, context.resources).catch((error: unknown) => {
      // Forget the failure so a later session can retry (e.g. the file appears later).
      opening = undefined;
      throw error;
    });
    return opening;
  }

  return {
    async createSession(): Promise<ConnectorSession> {
      if (destroyed) throw new ConnectorError('CLOSED', 'the DuckDB driver has been destroyed');
      let connection: DuckDBConnection | undefined;
      try {
        const db = await database();
        connection = await db.instance.connect();
        for (const sql of views) await connection.run(sql);
      } catch (error) {
        connection?.closeSync();
        context.logger.debug(
          { driverCode: connectFailed(error).driverCode },
          'duckdb: could not open a session',
        );
        throw connectFailed(error);
      }
      const open = connection;
      connections.add(open);
      return createDuckdbSession(open, {
        isDatabaseOpen: () => !destroyed,
        onClose: () => connections.delete(open),
      });
    },

    async destroy(): Promise<void> {
      if (destroyed) return;
      destroyed = true;
      const db = await opening?.catch(() => undefined);
      for (const connection of connections) connection.closeSync();
      connections.clear();
      if (db === undefined) return;
      db.instance.closeSync();
      if (db.tempDir !== undefined) await rm(db.tempDir, { recursive: true, force: true });
    },
  };
}
