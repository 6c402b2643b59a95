// One SQLite session: a worker thread (sqlite-worker.js) holding its own in-memory copy of the
// database file, and the main-thread side that sends it one query at a time. A query is cancelled
// by terminating the worker; the session is then dead, `validate()` says so, and the pool opens a
// new one. An idle worker is unref'd, so open sessions never keep a process alive on their own.
import { Worker } from 'node:worker_threads';
import type { CompiledQuery, ConnectorSession, ExecuteOptions, RawResult } from '@quarry/sdk-connector';
import { SqliteWorkerError } from './sqlite-errors.js';
import { toWorkerParams } from './sqlite-params.js';
import { probeSqlFor } from './sqlite-probe-sql.js';
import type { WorkerQuery, WorkerReply, WorkerStart } from './sqlite-protocol.js';
import { sqliteColumns } from './sqlite-types.js';

/**
 * The worker's entry, beside this module both in src/ and in dist/. It is plain JavaScript, so it
 * loads the same way under tsx (workers inherit `--import tsx`), vitest and a built package.
 */
const WORKER_URL = new URL('./sqlite-worker.js', import.meta.url);

/** Probe texts by SQL text: analytics reuse a handful of texts, so each is scanned once. */
const probeTexts = new Map<string, string>();
const PROBE_TEXTS_MAX = 256;

function probeTextFor(sql: string): string {
  let text = probeTexts.get(sql);
  if (text === undefined) {
    if (probeTexts.size >= PROBE_TEXTS_MAX) probeTexts.clear();
    text = probeSqlFor(sql);
    probeTexts.set(sql, text);
  }
  return text;
}

/**
 * The parent's Node flags for the workers, without `--input-type`: Node 20 fails a worker started
 * from a file when its parent ran `node --input-type=module -e …`. Loader flags such as
 * `--import tsx` stay, so a worker resolves `sql.js` the way its parent would.
 */
export function workerExecArgv(parent: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const flag = parent[i]!;
    if (flag === '--input-type') i++;
    else if (!flag.startsWith('--input-type=')) kept.push(flag);
  }
  return kept;
}

const WORKER_EXEC_ARGV = workerExecArgv(process.execArgv);

/** Starts the worker of one session; the default `spawnWorker` of createSqliteDriver. */
export function spawnSqliteWorker(start: WorkerStart): Worker {
  return new Worker(WORKER_URL, { workerData: start, execArgv: WORKER_EXEC_ARGV });
}

/** What {@link openSqliteSession} needs. */
export interface SqliteSessionOptions {
  readonly start: WorkerStart;
  readonly spawnWorker: (start: WorkerStart) => Worker;
  /** False once the session's copy of the file is out of date (or the driver is gone). */
  readonly isCurrent: () => boolean;
}

interface Waiting {
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
}

/**
 * Starts a worker and resolves once it has loaded the database file.
 *
 * @throws SqliteWorkerError when the file cannot be read or is not a database (the worker is
 *   stopped); the driver maps it to CONNECT_FAILED.
 */
export async function openSqliteSession(options: SqliteSessionOptions): Promise<ConnectorSession> {
  const worker = options.spawnWorker(options.start);
  let alive = true;
  let waiting: Waiting | undefined;
  let crash: Error | undefined;

  worker.on('message', (reply: WorkerReply) => {
    const current = waiting;
    waiting = undefined;
    worker.unref();
    current?.resolve(reply);
  });
  // Without a listener, an uncaught exception in the worker would be thrown in this thread.
  worker.on('error', (error: Error) => {
    crash = error;
  });
  worker.on('exit', () => {
    alive = false;
    const current = waiting;
    waiting = undefined;
    const why = crash === undefined ? '' : `: ${crash.message}`;
    current?.reject(new SqliteWorkerError('WORKER_EXITED', `the SQLite worker stopped${why}`));
  });

  /** Sends `query` (or nothing, while opening) and waits for the worker's one reply. */
  function request(query?: WorkerQuery): Promise<WorkerReply> {
    if (!alive)
      return Promise.reject(new SqliteWorkerError('WORKER_EXITED', 'the SQLite worker has stopped'));
    return new Promise<WorkerReply>((resolve, reject) => {
      waiting = { resolve, reject };
      worker.ref();
      if (query !== undefined) worker.postMessage(query);
    });
  }

  async function stop(): Promise<void> {
    alive = false;
    await worker.terminate();
  }

  const opened = await request();
  if (opened.kind === 'error') {
    await stop();
    throw new SqliteWorkerError(opened.code, opened.message);
  }

  return {
    async execute(query: CompiledQuery, options: ExecuteOptions): Promise<RawResult> {
      const reply = await request({
        sql: query.sql,
        probeSql: probeTextFor(query.sql),
        params: toWorkerParams(query.params),
        rowLimit: options.rowLimit,
      });
      if (reply.kind === 'error') throw new SqliteWorkerError(reply.code, reply.message);
      if (reply.kind === 'ready')
        throw new SqliteWorkerError('SQLITE_ERROR', 'the worker answered a query with "ready"');
      return { columns: sqliteColumns(reply.columns, reply.declaredTypes, reply.rows), rows: reply.rows };
    },
    validate: () => alive && options.isCurrent(),
    // sql.js cannot be interrupted from outside its thread: the thread goes, and the session with it.
    cancel: stop,
    close: stop,
  };
}
