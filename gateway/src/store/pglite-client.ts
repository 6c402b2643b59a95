// SqlClient on embedded PGlite (the default store, no server needed). PGlite has one
// connection: its own mutex already queues every query and transaction, so concurrent callers
// wait for each other instead of interleaving statements inside someone else's transaction.
// Parsers are set per query so bytea and int8 come back as they do from pg.

import { existsSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite, type PGliteInterface, type Transaction } from '@electric-sql/pglite';
import { asInvalidText } from '../errors/store-error.js';
import { copyTree } from './copy-tree.js';
import { type SqlClient, type SqlExecutor, withSavepoint } from './sql-client.js';

const BYTEA_OID = 17;
const INT8_OID = 20;

const queryOptions = {
  parsers: {
    // PGlite hands parsers the text form, `\x` followed by hex.
    [BYTEA_OID]: (value: string) => Buffer.from(value.slice(2), 'hex'),
    [INT8_OID]: (value: string) => Number(value),
  },
};

/**
 * Postgres settings of the embedded store, after PGlite's own. Postgres's default shared_buffers
 * (128 MB) lives in PGlite's WebAssembly memory and is all touched as Postgres starts: with it,
 * that memory held ~150 MiB resident of the gateway's ~355; with 16 MB (2,048 pages), ~30 MiB.
 * 16 MB holds the control plane's hot pages; a page outside them is read from PGlite's files on
 * the host, from the OS page cache when it is there. Measured with `npm run bench:footprint
 * -w @quarry/bench -- --breakdown`.
 */
export const PGLITE_START_PARAMS: readonly string[] = [
  ...PGlite.defaultStartParams,
  '-c',
  'shared_buffers=16MB',
];

/** Options for {@link createPgliteClient}. */
export interface PgliteClientOptions {
  /**
   * A template (pglite-template.ts): a tarball of a freshly initialised database, or a data
   * directory (the migrated template), copied; a directory without a database is created from it
   * instead of by initdb. Ignored when it does not exist.
   */
  readonly template?: string;
  /** Called when the template could not be loaded; the database is then created by initdb. */
  readonly onTemplateError?: (error: unknown) => void;
}

async function openPglite(dataDir: string | undefined, options: PgliteClientOptions): Promise<PGlite> {
  const startParams = [...PGLITE_START_PARAMS];
  if (dataDir === undefined) return PGlite.create({ startParams });
  if (options.template !== undefined && !existsSync(join(dataDir, 'PG_VERSION'))) {
    const temp = `${dataDir}.tmp-${process.pid}`;
    try {
      if (existsSync(join(options.template, 'PG_VERSION'))) {
        // A data directory: copied aside and renamed into place, so a start that dies halfway
        // leaves no half a database behind.
        await rm(temp, { recursive: true, force: true });
        await copyTree(options.template, temp);
        await rm(dataDir, { recursive: true, force: true });
        await rename(temp, dataDir);
        return await PGlite.create({ dataDir, startParams });
      }
      const tarball = await readFile(options.template).catch(() => undefined);
      if (tarball !== undefined)
        return await PGlite.create({ dataDir, startParams, loadDataDir: new Blob([tarball]) });
    } catch (error) {
      // A damaged template: what it made goes (the directory held no database before).
      options.onTemplateError?.(error);
      await rm(temp, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return PGlite.create({ dataDir, startParams });
}

/**
 * Opens embedded PGlite: persisted in `source` when it is a directory path, in memory when it
 * is undefined, or wrapping an already open instance (e.g. a test's `clone()`), which the
 * client then owns and closes. Creating a new database takes seconds by initdb, about one from
 * `options.template`; reopening one ~0.5 s.
 */
export async function createPgliteClient(
  source?: string | PGliteInterface,
  options: PgliteClientOptions = {},
): Promise<SqlClient> {
  const db = typeof source === 'object' ? source : await openPglite(source, options);

  const executorOf = (runner: PGliteInterface | Transaction): SqlExecutor => {
    const executor: SqlExecutor = {
      kind: 'pglite',
      // `options.name` is ignored: PGlite's query has no named prepared statements.
      query: async <R>(sql: string, params?: readonly unknown[]) => {
        try {
          const result = await runner.query<R>(
            sql,
            params === undefined ? undefined : [...params],
            queryOptions,
          );
          return result.rows;
        } catch (error) {
          throw asInvalidText(error) ?? error;
        }
      },
      exec: async (script) => {
        await runner.exec(script, queryOptions);
      },
      transaction: (fn) =>
        runner === db ? db.transaction((tx) => fn(executorOf(tx))) : withSavepoint(executor, fn),
    };
    return executor;
  };

  let closed: Promise<void> | undefined;
  return {
    ...executorOf(db),
    close: () => {
      closed ??= db.closed ? Promise.resolve() : db.close();
      return closed;
    },
  };
}
