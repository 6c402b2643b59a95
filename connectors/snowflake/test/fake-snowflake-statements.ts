// Test code: how the fake Snowflake server (fake-snowflake-server.ts) runs one statement: the
// statement count check (MULTI_STATEMENT_COUNT), the session's TIMEZONE, binds, the service-side
// STATEMENT_TIMEOUT_IN_SECONDS, interrupting on cancel, and the result answer with its rows paged
// into chunks past `inlineRows`.
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { type Answer, duckdbFailure, ok, queryFailure, statementTypeId } from './fake-snowflake-answers.js';
import {
  bindWireValues,
  type RowType,
  rowTypeFor,
  type WireBind,
  wireValue,
} from './fake-snowflake-results.js';
import { isSqlTextError, translateSql } from './fake-snowflake-sql.js';

/** How results are paged: rows sent inline, rows per chunk, and where chunk `index` is served. */
export interface Paging {
  readonly inlineRows: number;
  readonly chunkRows: number;
  chunkUrl(queryId: string, index: number): string;
}

/** One Snowflake session of the fake: its tokens, parameters and DuckDB connection. */
export interface Session {
  readonly id: number;
  token: string;
  master: string;
  readonly connection: DuckDBConnection;
  readonly params: Record<string, unknown>;
  readonly context: Readonly<Record<string, string | null>>;
  /** The TimeZone currently set on the DuckDB connection. */
  timezone: string;
  /** Statements run one at a time per session. */
  queue: Promise<unknown>;
  alive: boolean;
}

/** One statement of the fake, from its query request to its answer. */
export interface Query {
  readonly id: string;
  readonly requestId: string;
  readonly sql: string;
  readonly session: Session;
  state: 'queued' | 'running' | 'done';
  stopped: 'cancel' | 'timeout' | undefined;
  timeoutSeconds: number;
  answer: Answer | undefined;
  /** Settles with the statement's answer. */
  readonly done: Promise<Answer>;
  chunks: string[];
  qrmk: string;
}

/** Session parameters the service reports at login, as a new account has them. */
export const SESSION_DEFAULTS: Readonly<Record<string, unknown>> = {
  TIMEZONE: 'America/Los_Angeles',
  TIMESTAMP_OUTPUT_FORMAT: 'YYYY-MM-DD HH24:MI:SS.FF3 TZHTZM',
  TIMESTAMP_NTZ_OUTPUT_FORMAT: 'YYYY-MM-DD HH24:MI:SS.FF3',
  TIMESTAMP_LTZ_OUTPUT_FORMAT: '',
  TIMESTAMP_TZ_OUTPUT_FORMAT: '',
  DATE_OUTPUT_FORMAT: 'YYYY-MM-DD',
  TIME_OUTPUT_FORMAT: 'HH24:MI:SS',
  BINARY_OUTPUT_FORMAT: 'HEX',
  CLIENT_PREFETCH_THREADS: 4,
  CLIENT_RESULT_CHUNK_SIZE: 160,
  QUERY_CONTEXT_CACHE_SIZE: 5,
  MULTI_STATEMENT_COUNT: 1,
  STATEMENT_TIMEOUT_IN_SECONDS: 172_800,
};

const TIMEZONE_NAME = /^[A-Za-z0-9_+\-/]+$/;

/** The parameters list of an answer: the session's, with the statement's on top. */
export function parametersOf(session: Session, statement: Readonly<Record<string, unknown>>) {
  return Object.entries({ ...session.params, ...statement }).map(([name, value]) => ({ name, value }));
}

/**
 * Runs one statement of a session in DuckDB, after `previous` (the session's statement before it)
 * settled, and answers as the service would: a result, a failure, or the cancel/timeout failure.
 */
export async function runStatement(
  query: Query,
  previous: Promise<unknown>,
  statementParams: Record<string, unknown>,
  bindings: Record<string, WireBind>,
  paging: Paging,
): Promise<Answer> {
  const { session } = query;
  let translated: ReturnType<typeof translateSql>;
  try {
    translated = translateSql(query.sql);
  } catch (error) {
    if (isSqlTextError(error))
      return queryFailure(query.id, '001003', '42000', 'SQL compilation error: syntax error');
    throw error;
  }
  const expected = Number(statementParams.MULTI_STATEMENT_COUNT ?? session.params.MULTI_STATEMENT_COUNT);
  if (expected !== 0 && translated.statementCount !== expected) {
    return queryFailure(
      query.id,
      '000008',
      '0A000',
      `Actual statement count ${translated.statementCount} did not match the desired statement count ${expected}.`,
    );
  }
  if (translated.statementCount > 1) {
    return queryFailure(
      query.id,
      '000002',
      '0A000',
      'Unsupported feature: this fake runs one statement per request.',
    );
  }
  // One statement at a time per session: wait for the one before.
  await previous.catch(() => {});
  if (query.stopped !== undefined || !session.alive) return stoppedAnswer(query);
  query.state = 'running';
  const timezone = String(statementParams.TIMEZONE ?? session.params.TIMEZONE);
  let prepared: DuckDBPreparedStatement | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    if (timezone !== session.timezone && TIMEZONE_NAME.test(timezone)) {
      await session.connection.run(`SET TimeZone = '${timezone}'`);
      session.timezone = timezone;
    }
    prepared = await session.connection.prepare(translated.sql);
    bindWireValues(prepared, bindings);
    const timeoutSeconds = Number(
      statementParams.STATEMENT_TIMEOUT_IN_SECONDS ?? session.params.STATEMENT_TIMEOUT_IN_SECONDS,
    );
    query.timeoutSeconds = timeoutSeconds;
    if (timeoutSeconds > 0) {
      timer = setTimeout(() => stopStatement(query, 'timeout'), timeoutSeconds * 1000);
    }
    const typeId = statementTypeId(prepared.statementType);
    const reader = await prepared.runAndReadAll();
    if (query.stopped !== undefined) return stoppedAnswer(query);
    const rowtype: RowType[] = reader.columnNames().map((name, i) => {
      const shown = translated.quoted.has(name) ? name : name.toUpperCase();
      return rowTypeFor(shown, reader.columnType(i));
    });
    const values = reader.getRows();
    const nested = rowtype.some((t) => t.type === 'array' || t.type === 'object');
    const json = nested ? reader.getRowsJson() : undefined;
    const rowset = values.map((row, r) =>
      row.map((value, c) => wireValue(value, json?.[r]?.[c] ?? null, rowtype[c] as RowType)),
    );
    return resultAnswer(query, statementParams, rowtype, rowset, typeId, paging);
  } catch (error) {
    if (query.stopped !== undefined) return stoppedAnswer(query);
    return duckdbFailure(query.id, error);
  } finally {
    clearTimeout(timer);
    prepared?.destroySync();
  }
}

function stoppedAnswer(query: Query): Answer {
  return query.stopped === 'timeout'
    ? queryFailure(
        query.id,
        '000630',
        '57014',
        `Statement reached its statement or warehouse timeout of ${query.timeoutSeconds} second(s) and was canceled.`,
      )
    : queryFailure(query.id, '000604', '57014', 'SQL execution canceled');
}

function resultAnswer(
  query: Query,
  statementParams: Record<string, unknown>,
  rowtype: RowType[],
  rowset: (string | null)[][],
  typeId: number,
  paging: Paging,
): Answer {
  const { session } = query;
  const { inlineRows, chunkRows } = paging;
  const inline = rowset.slice(0, inlineRows);
  const rest = rowset.slice(inlineRows);
  const chunks: { url: string; rowCount: number; uncompressedSize: number; compressedSize: number }[] = [];
  for (let start = 0; start < rest.length; start += chunkRows) {
    const rows = rest.slice(start, start + chunkRows);
    // A chunk body is the rows without the enclosing brackets, as the driver expects.
    const text = rows.map((row) => JSON.stringify(row)).join(',');
    query.chunks.push(text);
    chunks.push({
      url: paging.chunkUrl(query.id, query.chunks.length - 1),
      rowCount: rows.length,
      uncompressedSize: Buffer.byteLength(text),
      compressedSize: Buffer.byteLength(text),
    });
  }
  return ok({
    parameters: parametersOf(session, statementParams),
    rowtype,
    rowset: inline,
    total: rowset.length,
    returned: rowset.length,
    queryId: query.id,
    databaseProvider: null,
    finalDatabaseName: session.context.databaseName,
    finalSchemaName: session.context.schemaName,
    finalWarehouseName: session.context.warehouseName,
    finalRoleName: session.context.roleName,
    numberOfBinds: 0,
    arrayBindSupported: false,
    statementTypeId: typeId,
    version: 1,
    sendResultTime: Date.now(),
    queryResultFormat: 'json',
    queryContext: { entries: [] },
    ...(chunks.length === 0 ? {} : { chunks, qrmk: query.qrmk }),
  });
}

/** Stops a statement: a queued one never starts, a running one is interrupted in DuckDB. */
export function stopStatement(query: Query, reason: 'cancel' | 'timeout'): void {
  if (query.state === 'done' || query.stopped !== undefined) return;
  query.stopped = reason;
  if (query.state === 'running') query.session.connection.interrupt();
}
