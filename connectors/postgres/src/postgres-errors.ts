// Maps pg's errors onto ConnectorError codes. Server errors are classified by SQLSTATE, socket
// and TLS errors by Node's error code. Messages are our own, never the driver's: a pg message can
// name the host, the database, the user or (in a syntax error) a fragment of the SQL.
import { ConnectorError, isConnectorError } from '@quarry/sdk-connector';

// SQLSTATEs and classes that mean "could not get (or keep) a usable connection".
const CONNECT_STATES = new Set(['3D000', '53300', '57P01', '57P02', '57P03', '28000', '28P01']);
const CONNECT_CLASSES = new Set(['08', '28']);

// Node's socket, DNS and TLS failures; pg wraps none of them.
const CONNECT_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT',
]);

// pg raises these as plain Errors, with no code, when the socket or its setup fails.
const CONNECT_MESSAGES = [
  'Connection terminated',
  'timeout expired',
  'The server does not support SSL connections',
  'There was an error establishing an SSL connection',
  'Client has encountered a connection error',
  'Client was closed',
];

const QUERY_MESSAGES: Readonly<Record<string, string>> = {
  '25006': 'the query tried to write, but Quarry sessions are read-only',
  '42601': 'the query has a syntax error (or holds more than one statement)',
  '42501': 'the warehouse user lacks a permission the query needs',
  '42P01': 'the query names a table or view that does not exist',
  '42703': 'the query names a column that does not exist',
  '42883': 'the query calls a function or operator that does not exist for these types',
};

const QUERY_CLASSES: Readonly<Record<string, string>> = {
  '22': 'the query failed on a data error (a value out of range, a bad cast, division by zero, …)',
  '23': 'the query violated a constraint',
  '42': 'the query is invalid for this database (syntax, names or types)',
  '53': 'the warehouse ran out of resources for the query',
  '40': 'the warehouse aborted the query (serialization failure or deadlock)',
};

interface ErrorFields {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly severity?: unknown;
}

function sqlState(error: ErrorFields): string | undefined {
  // DatabaseError always has a severity; a Node system error has a code but no severity.
  return typeof error.code === 'string' &&
    typeof error.severity === 'string' &&
    /^[0-9A-Z]{5}$/.test(error.code)
    ? error.code
    : undefined;
}

/**
 * Maps anything pg throws to a ConnectorError: connection refused, DNS, TLS, authentication,
 * a missing database or a dropped connection → CONNECT_FAILED; a cancelled statement (57014,
 * statement_timeout or a cancel request) → QUERY_TIMEOUT; anything else the server rejects →
 * QUERY_FAILED with the SQLSTATE in `driverCode`. ConnectorErrors pass through unchanged.
 */
export function mapPostgresError(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const fields: ErrorFields = typeof error === 'object' && error !== null ? error : {};
  const state = sqlState(fields);
  if (state !== undefined) {
    const cls = state.slice(0, 2);
    if (CONNECT_STATES.has(state) || CONNECT_CLASSES.has(cls)) {
      return new ConnectorError('CONNECT_FAILED', `could not connect to Postgres (SQLSTATE ${state})`, {
        cause: error,
        driverCode: state,
      });
    }
    if (state === '57014') {
      return new ConnectorError('QUERY_TIMEOUT', 'the query was cancelled on the server', {
        cause: error,
        driverCode: state,
      });
    }
    const message = QUERY_MESSAGES[state] ?? QUERY_CLASSES[cls] ?? 'the warehouse rejected the query';
    return new ConnectorError('QUERY_FAILED', `${message} (SQLSTATE ${state})`, {
      cause: error,
      driverCode: state,
      retryable: cls === '40' || cls === '53',
    });
  }
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const text = typeof fields.message === 'string' ? fields.message : '';
  const tls =
    code !== undefined && (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT/.test(code));
  if (
    (code !== undefined && CONNECT_ERRNOS.has(code)) ||
    tls ||
    CONNECT_MESSAGES.some((m) => text.startsWith(m))
  ) {
    return new ConnectorError('CONNECT_FAILED', 'could not connect to Postgres, or the connection was lost', {
      cause: error,
      driverCode: code,
    });
  }
  return new ConnectorError('QUERY_FAILED', 'the Postgres query failed', { cause: error, driverCode: code });
}
