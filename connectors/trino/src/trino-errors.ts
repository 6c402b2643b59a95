// Maps Trino's failures onto ConnectorError codes. A failed query arrives as a result page with
// `error` set ({message, errorCode, errorName, errorType, failureInfo}), classified here by
// errorName/errorType; transport failures come from axios (inside trino-client) and are
// classified by socket error code or HTTP status. Messages are our own, never Trino's (a Trino
// message can quote the SQL and its values), and an axios error is never kept as the cause: it
// carries the request config, Authorization header and password included.
import { ConnectorError, isConnectorError } from '@quarry/sdk-connector';
import type { QueryError } from 'trino-client';

/** Trino errorNames that mean the cluster cannot take queries right now. */
const UNAVAILABLE = new Set(['SERVER_STARTING_UP', 'SERVER_SHUTTING_DOWN', 'NO_NODES_AVAILABLE']);

const QUERY_MESSAGES: Readonly<Record<string, string>> = {
  SYNTAX_ERROR: 'the query has a syntax error (or holds more than one statement)',
  PERMISSION_DENIED: 'the Trino user lacks a permission the query needs',
  CATALOG_NOT_FOUND: 'the query names a catalog that does not exist',
  SCHEMA_NOT_FOUND: 'the query names a schema that does not exist',
  TABLE_NOT_FOUND: 'the query names a table or view that does not exist',
  COLUMN_NOT_FOUND: 'the query names a column that does not exist',
  FUNCTION_NOT_FOUND: 'the query calls a function that does not exist for these types',
  MISSING_CATALOG_NAME: 'the query names a table without a catalog, and the connection sets none',
  MISSING_SCHEMA_NAME: 'the query names a table without a schema, and the connection sets none',
  TYPE_MISMATCH: 'the query compares or combines values of incompatible types',
  INVALID_CAST_ARGUMENT: 'the query failed to cast a value',
  DIVISION_BY_ZERO: 'the query divided by zero',
  NUMERIC_VALUE_OUT_OF_RANGE: 'the query produced a number out of range',
  INVALID_PARAMETER_USAGE: 'the query uses a parameter where Trino does not allow one',
  NOT_SUPPORTED: 'the query uses something this Trino cluster does not support',
};

const TYPE_MESSAGES: Readonly<Record<string, string>> = {
  USER_ERROR: 'Trino rejected the query',
  INSUFFICIENT_RESOURCES: 'the Trino cluster ran out of resources for the query',
  INTERNAL_ERROR: 'the Trino cluster failed the query',
  EXTERNAL: 'a data source behind Trino failed the query',
};

/** Keeps Trino's own error text for logs, as a cause that never reaches API callers. */
function trinoCause(error: QueryError): Error {
  return new Error(`Trino ${error.errorName ?? 'error'}: ${error.message ?? ''}`);
}

/**
 * The ConnectorError for a Trino result page's `error`: EXCEEDED_TIME_LIMIT (the per-query
 * `query_max_execution_time`) → QUERY_TIMEOUT, USER_CANCELED → QUERY_ABORTED, a cluster that is
 * starting or has no workers → CONNECT_FAILED (retryable), anything else → QUERY_FAILED with
 * the errorName as `driverCode`; resource and internal failures are retryable.
 */
export function trinoQueryError(error: QueryError): ConnectorError {
  const name = typeof error.errorName === 'string' ? error.errorName : 'UNKNOWN';
  const type = typeof error.errorType === 'string' ? error.errorType : 'UNKNOWN';
  const options = { cause: trinoCause(error), driverCode: name };
  if (name === 'EXCEEDED_TIME_LIMIT') {
    return new ConnectorError(
      'QUERY_TIMEOUT',
      'the query ran past its time limit on the Trino server',
      options,
    );
  }
  if (name === 'USER_CANCELED' || name === 'ADMINISTRATIVELY_KILLED') {
    return new ConnectorError('QUERY_ABORTED', 'the query was cancelled on the Trino server', options);
  }
  if (UNAVAILABLE.has(name)) {
    return new ConnectorError(
      'CONNECT_FAILED',
      `the Trino cluster cannot take queries now (${name})`,
      options,
    );
  }
  const message = QUERY_MESSAGES[name] ?? TYPE_MESSAGES[type] ?? 'Trino failed the query';
  return new ConnectorError('QUERY_FAILED', `${message} (Trino ${name})`, {
    ...options,
    retryable: type === 'INSUFFICIENT_RESOURCES' || type === 'INTERNAL_ERROR' || type === 'EXTERNAL',
  });
}

/** Socket, DNS and TLS failures: the coordinator could not be reached. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

interface TransportFields {
  readonly code?: unknown;
  readonly response?: { readonly status?: unknown };
}

/**
 * Maps anything thrown while talking to Trino: ConnectorErrors pass through; HTTP 401/403 →
 * CONNECT_FAILED (credentials refused, not retryable); 502/503/504 and socket, DNS or TLS errors
 * → CONNECT_FAILED (retryable); other HTTP statuses and anything else → QUERY_FAILED.
 */
export function mapTrinoError(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const fields: TransportFields & { readonly cause?: unknown; readonly message?: unknown } =
    typeof error === 'object' && error !== null ? error : {};
  // A guarded agent's refusal or response bound, wrapped by axios: it already says what happened.
  if (isConnectorError(fields.cause)) return fields.cause;
  if (typeof fields.message === 'string' && fields.message.startsWith('maxContentLength')) {
    return new ConnectorError(
      'QUERY_FAILED',
      'the Trino server sent a response larger than the gateway accepts',
      {
        driverCode: 'RESPONSE_TOO_LARGE',
      },
    );
  }
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const status = typeof fields.response?.status === 'number' ? fields.response.status : undefined;
  if (status === 401 || status === 403) {
    return new ConnectorError('CONNECT_FAILED', `Trino refused the credentials (HTTP ${status})`, {
      driverCode: `HTTP_${status}`,
      retryable: false,
    });
  }
  if (status === 502 || status === 503 || status === 504) {
    return new ConnectorError('CONNECT_FAILED', `the Trino coordinator is unavailable (HTTP ${status})`, {
      driverCode: `HTTP_${status}`,
    });
  }
  if (status !== undefined) {
    return new ConnectorError('QUERY_FAILED', `Trino answered HTTP ${status}`, {
      driverCode: `HTTP_${status}`,
    });
  }
  const tls =
    code !== undefined && (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT/.test(code));
  if ((code !== undefined && CONNECT_CODES.has(code)) || tls) {
    return new ConnectorError('CONNECT_FAILED', 'could not reach the Trino coordinator', {
      ...(code === undefined ? {} : { driverCode: code }),
    });
  }
  if (error instanceof SyntaxError) {
    return new ConnectorError('QUERY_FAILED', 'Trino sent a response that is not JSON', {
      driverCode: 'BAD_RESPONSE',
    });
  }
  return new ConnectorError('QUERY_FAILED', 'the Trino request failed', {
    ...(code === undefined ? {} : { driverCode: code }),
  });
}
