// One SQLite session's engine, in a worker thread of its own (see sqlite-session.ts). sql.js runs
// synchronously on the thread that calls it, so a slow query here never blocks the gateway, and
// terminating this thread is how a query is cancelled. The database file is copied into memory
// once and never written back, and statements run under `PRAGMA query_only = ON`.
//
// Plain JavaScript, type-checked through JSDoc (`checkJs`): a worker thread starts without the
// parent's module loaders under vitest, so a TypeScript entry would not load there. This file runs
// as it is under tsx (the gateway), vitest (the tests) and from dist/ (a published build).
import { readFileSync, statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import initSqlJs from 'sql.js';

/** @import { WorkerErrorCode, WorkerQuery, WorkerReply, WorkerStart, WorkerValue } from './sqlite-protocol.js' */

/**
 * @typedef {object} Prepared A statement ready to run, with what the type probe found.
 * @property {import('sql.js').Statement} statement
 * @property {readonly string[]} declaredTypes
 */

/**
 * sql.js 1.16 reads INTEGER cells as exact bigints with `{ useBigInt: true }`; @types/sql.js 1.4
 * does not know that option yet.
 * @typedef {{ get(params: null, config: { useBigInt: true }): WorkerValue[] }} BigIntRowReader
 */

/** Prepared statements kept per SQL text (analytics reuse a handful of texts). */
const CACHE_SIZE = 64;
/** The temporary view the type probe creates and drops again. */
const PROBE_VIEW = 'quarry_column_types_probe';

/** A refusal or failure with a code the session maps (see sqlite-errors.ts). */
class WorkerError extends Error {
  /**
   * @param {WorkerErrorCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const port = parentPort;
if (port === null) throw new Error('sqlite-worker.js runs as a worker thread (see sqlite-session.ts)');
/** @type {WorkerStart} */
const start = workerData;

/** @param {WorkerReply} message */
function reply(message) {
  port?.postMessage(message);
}

/**
 * @param {unknown} error
 * @returns {WorkerReply}
 */
function failure(error) {
  if (error instanceof WorkerError) return { kind: 'error', code: error.code, message: error.message };
  return { kind: 'error', code: 'SQLITE_ERROR', message: messageOf(error) };
}

/**
 * sql.js throws Error(sqlite3_errmsg()), and plain strings for misuse ("Statement closed").
 * @param {unknown} error
 */
function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Copies the database file into an in-memory sql.js database, read-only from then on.
 * @returns {Promise<import('sql.js').Database>}
 */
async function openDatabase() {
  /** @type {Buffer} */
  let bytes;
  try {
    const { size } = statSync(start.path);
    if (size > start.maxFileBytes) {
      throw new WorkerError(
        'TOO_LARGE',
        `the database file is ${size} bytes, over maxFileBytes (${start.maxFileBytes})`,
      );
    }
    bytes = readFileSync(start.path);
  } catch (error) {
    if (error instanceof WorkerError) throw error;
    const code = /** @type {{ code?: unknown }} */ (error).code;
    throw new WorkerError('OPEN_FAILED', `cannot read the database file (${String(code ?? error)})`);
  }
  const SQL = await initSqlJs();
  const db = new SQL.Database(bytes);
  try {
    db.run('PRAGMA query_only = ON');
    // The first schema read parses the header: a file that is not a database fails here.
    db.exec('SELECT count(*) FROM sqlite_schema');
  } catch (error) {
    db.close();
    throw new WorkerError('OPEN_FAILED', `cannot open the database (${messageOf(error)})`);
  }
  return db;
}

/**
 * Refuses SQL text that holds no statement or more than one (sql.js's `prepare` would silently
 * run the first of `SELECT 1; DELETE …` and ignore the rest). Syntax errors surface here.
 * @param {import('sql.js').Database} db
 * @param {string} sql
 */
function requireOneStatement(db, sql) {
  let count = 0;
  // The iterator frees each statement when it moves on, and the rest when the loop breaks.
  for (const _ of db.iterateStatements(sql)) {
    count++;
    if (count > 1) break;
  }
  if (count === 0) throw new WorkerError('EMPTY', 'the query holds no SQL statement');
  if (count > 1) throw new WorkerError('MULTIPLE_STATEMENTS', 'a query must be a single SQL statement');
}

/**
 * Compiles the statement (parameters replaced by NULL) as the body of a temporary view. SQLite
 * accepts only a query there (SELECT, WITH … SELECT, VALUES), never a write, DDL, PRAGMA or
 * ATTACH, and reports each view column's declared type: the column's own for a column reference,
 * a type from the affinity for a CAST, '' for other expressions. The view is never queried, so
 * the statement does not run while `query_only` is briefly off; `prepare` compiles only the
 * first statement of the text.
 * @param {import('sql.js').Database} db
 * @param {string} probeSql
 * @returns {string[]}
 */
function probeDeclaredTypes(db, probeSql) {
  db.run('PRAGMA query_only = OFF');
  try {
    /** @type {import('sql.js').Statement} */
    let create;
    try {
      create = db.prepare(`CREATE TEMP VIEW ${PROBE_VIEW} AS ${probeSql}`);
    } catch {
      throw new WorkerError(
        'NOT_A_QUERY',
        'only a query (SELECT, WITH … SELECT or VALUES) can run on a read-only SQLite connection',
      );
    }
    try {
      create.step();
    } finally {
      create.free();
    }
    const info = db.exec(`SELECT type FROM pragma_table_info('${PROBE_VIEW}', 'temp')`);
    return (info[0]?.values ?? []).map((row) => String(row[0] ?? ''));
  } finally {
    db.run(`DROP VIEW IF EXISTS temp.${PROBE_VIEW}`);
    db.run('PRAGMA query_only = ON');
  }
}

/** @type {Map<string, Prepared>} */
const cache = new Map();

/**
 * The prepared statement for `query.sql`, from the cache or checked and compiled now.
 * @param {import('sql.js').Database} db
 * @param {WorkerQuery} query
 * @returns {Prepared}
 */
function preparedFor(db, query) {
  const cached = cache.get(query.sql);
  if (cached !== undefined) {
    // Refresh its place so the least recently used statement is evicted first.
    cache.delete(query.sql);
    cache.set(query.sql, cached);
    return cached;
  }
  requireOneStatement(db, query.sql);
  const declaredTypes = probeDeclaredTypes(db, query.probeSql);
  const entry = { statement: db.prepare(query.sql), declaredTypes };
  cache.set(query.sql, entry);
  if (cache.size > CACHE_SIZE) {
    const [oldestSql, oldest] = /** @type {[string, Prepared]} */ (cache.entries().next().value);
    cache.delete(oldestSql);
    oldest.statement.free();
  }
  return entry;
}

/**
 * Runs one query, stepping the statement at most `rowLimit` times.
 * @param {import('sql.js').Database} db
 * @param {WorkerQuery} query
 * @returns {WorkerReply}
 */
function run(db, query) {
  const { statement, declaredTypes } = preparedFor(db, query);
  const reader = /** @type {BigIntRowReader} */ (/** @type {unknown} */ (statement));
  try {
    statement.bind(/** @type {import('sql.js').SqlValue[]} */ (query.params));
    /** @type {WorkerValue[][]} */
    const rows = [];
    while (rows.length < query.rowLimit && statement.step()) rows.push(reader.get(null, { useBigInt: true }));
    return { kind: 'result', columns: statement.getColumnNames(), declaredTypes, rows };
  } finally {
    statement.reset();
  }
}

try {
  const db = await openDatabase();
  port.on('message', (/** @type {WorkerQuery} */ query) => {
    /** @type {WorkerReply} */
    let answer;
    try {
      answer = run(db, query);
    } catch (error) {
      answer = failure(error);
    }
    reply(answer);
  });
  reply({ kind: 'ready' });
} catch (error) {
  reply(failure(error));
}
