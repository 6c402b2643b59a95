// Test code: the answers of the fake Snowflake server (fake-snowflake-server.ts) in the shapes
// the service uses and snowflake-sdk 3.3.0 parses: `{data, code, message, success}` envelopes,
// statement failures with `sqlState` and `queryId`, the 333333 "in progress" answer, DuckDB errors
// as the Snowflake errors a similar statement would get, and Snowflake's `statementTypeId`.
import { StatementType } from '@duckdb/node-api';
import { BindCountError } from './fake-snowflake-results.js';

/** An HTTP answer: status and JSON body (or text, for result chunks). */
export type Answer = { readonly status: number; readonly body: unknown };

/** Snowflake's `statementTypeId` for a DuckDB statement type. */
export function statementTypeId(type: StatementType): number {
  switch (type) {
    case StatementType.SELECT:
      return 0x1000;
    case StatementType.INSERT:
      return 0x3100;
    case StatementType.UPDATE:
      return 0x3200;
    case StatementType.DELETE:
      return 0x3300;
    default:
      return 0x6000; // DDL
  }
}

/** A successful answer carrying `data`. */
export function ok(data: unknown): Answer {
  return { status: 200, body: { data, code: null, message: null, success: true } };
}

/** A failed answer (HTTP 200, `success: false`) with the service's code and message. */
export function failure(code: string, message: string, data: unknown = null): Answer {
  return { status: 200, body: { data, code, message, success: false, headers: null } };
}

/** What the service answers for a session token it does not know (any more). */
export const SESSION_EXPIRED = failure('390112', 'Your session has expired. Please login again.');

/** A failed statement, with the fields the driver reads (`sqlState`, `queryId`). */
export function queryFailure(queryId: string, code: string, sqlState: string, message: string): Answer {
  return failure(code, message, {
    internalError: false,
    errorCode: code,
    age: 0,
    sqlState,
    queryId,
    line: -1,
    pos: -1,
    type: 'COMPILATION',
  });
}

/** A DuckDB error as the Snowflake error a similar statement would get. */
export function duckdbFailure(queryId: string, error: unknown): Answer {
  const text = error instanceof Error ? error.message : String(error);
  if (error instanceof BindCountError)
    return queryFailure(queryId, '002049', '42601', `SQL compilation error: ${text}`);
  if (text.startsWith('Parser Error')) {
    return queryFailure(queryId, '001003', '42000', `SQL compilation error: syntax error (${text})`);
  }
  if (text.startsWith('Catalog Error')) {
    return queryFailure(
      queryId,
      '002003',
      '42S02',
      `SQL compilation error: Object does not exist or not authorized. (${text})`,
    );
  }
  if (text.startsWith('Binder Error')) {
    return queryFailure(queryId, '000904', '42000', `SQL compilation error: invalid identifier (${text})`);
  }
  if (text.startsWith('Conversion Error') || text.startsWith('Invalid Input Error')) {
    return queryFailure(queryId, '100038', '22018', `Numeric value is not recognized (${text})`);
  }
  return queryFailure(queryId, '000603', 'XX000', `SQL execution internal error (${text})`);
}

/** The 333333 answer: the statement still runs; poll `getResultUrl`. */
export function inProgress(queryId: string): Answer {
  return {
    status: 200,
    body: {
      data: {
        queryId,
        getResultUrl: `/queries/${queryId}/result`,
        queryAbortsAfterSecs: 300,
        progressDesc: null,
      },
      code: '333333',
      message:
        'Asynchronous execution in progress. Use provided query id to perform query monitoring and management.',
      success: true,
    },
  };
}
