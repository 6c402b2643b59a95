// Maps snowflake-sdk errors onto ConnectorError codes. The driver's errors carry a kind (`name`:
// NetworkError, RequestFailedError, OperationFailedError, ClientError, …) and a code: the
// driver's own number (401001 …) or the service's code as text ('002003', '390112', …). Only the
// code is kept, in `driverCode`; the service's message is never copied, because it can quote the
// statement, object names, the user and the account.
import { ConnectorError } from '@quarry/sdk-connector';

/** The fields of a snowflake-sdk error this mapping reads. */
interface SnowflakeErrorLike {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly sqlState?: unknown;
}

/** Service codes meaning the session is gone or its tokens are no longer accepted. */
const SESSION_GONE_CODES: ReadonlySet<string> = new Set([
  '390104', // SESSION_TOKEN_INVALID
  '390111', // GONE_SESSION
  '390112', // SESSION_TOKEN_EXPIRED (reaches us only when renewal failed)
  '390114', // MASTER_TOKEN_EXPIRED
]);

/** Driver codes meaning there is no usable connection to the service. */
const CONNECTION_DRIVER_CODES: ReadonlySet<string> = new Set([
  '401001', // ERR_SF_NETWORK_COULD_NOT_CONNECT
  '401002', // ERR_SF_RESPONSE_FAILURE (HTTP error status after retries)
  '401003', // ERR_SF_RESPONSE_NOT_JSON
  '401004', // ERR_SF_RESPONSE_INVALID_TOKEN
  '402001', // ERR_LARGE_RESULT_SET_NETWORK_COULD_NOT_CONNECT
  '405503', // ERR_CONN_CONNECT_STATUS_DISCONNECTED
  '407001', // ERR_CONN_REQUEST_STATUS_PRISTINE
  '407002', // ERR_CONN_REQUEST_STATUS_DISCONNECTED
]);

/** The service's statement timeout (STATEMENT_TIMEOUT_IN_SECONDS or the warehouse's). */
const STATEMENT_TIMEOUT = '000630';
/** "SQL execution canceled": our own cancel, or an operator's. */
const STATEMENT_CANCELED = '000604';

const QUERY_FAILURES: Readonly<Record<string, string>> = {
  '000008': 'the warehouse refused more than one statement',
  '001003': 'the warehouse rejected the query: SQL syntax error',
  '002003': 'the query refers to an object that does not exist or is not authorized',
  '003001': 'the warehouse denied permission for this query',
};

/** The code of a snowflake-sdk error as text, when it has one. */
export function snowflakeErrorCode(error: unknown): string | undefined {
  const code = (error as SnowflakeErrorLike | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

/** True when `error` means the session (or the network to the service) is gone. */
export function isSessionGone(error: unknown): boolean {
  if (error instanceof ConnectorError) return error.code === 'CONNECT_FAILED';
  const code = snowflakeErrorCode(error);
  if (code !== undefined && (SESSION_GONE_CODES.has(code) || CONNECTION_DRIVER_CODES.has(code))) return true;
  const name = (error as SnowflakeErrorLike | null)?.name;
  return name === 'NetworkError' || name === 'RequestFailedError';
}

/** Maps any error from snowflake-sdk (or this connector) to a caller-safe ConnectorError. */
export function mapSnowflakeError(error: unknown): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const code = snowflakeErrorCode(error);
  const options = { cause: error, ...(code === undefined ? {} : { driverCode: code }) };
  if (isSessionGone(error)) {
    return new ConnectorError(
      'CONNECT_FAILED',
      'the Snowflake session or the connection to it was lost',
      options,
    );
  }
  if (code === STATEMENT_TIMEOUT) {
    return new ConnectorError('QUERY_TIMEOUT', 'the query ran past its time limit and was stopped', options);
  }
  if (code === STATEMENT_CANCELED) {
    return new ConnectorError('QUERY_ABORTED', 'the query was cancelled', options);
  }
  const known = code === undefined ? undefined : QUERY_FAILURES[code];
  return new ConnectorError('QUERY_FAILED', known ?? 'the warehouse rejected the query', options);
}

/** Whatever goes wrong while opening a session, the caller sees CONNECT_FAILED. */
export function connectFailure(error: unknown): ConnectorError {
  if (error instanceof ConnectorError && error.code === 'CONNECT_FAILED') return error;
  const code = snowflakeErrorCode(error);
  return new ConnectorError(
    'CONNECT_FAILED',
    'could not open a Snowflake session (unreachable or login refused)',
    {
      cause: error,
      ...(code === undefined ? {} : { driverCode: code }),
    },
  );
}
