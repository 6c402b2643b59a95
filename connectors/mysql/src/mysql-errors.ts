// Maps mysql2 errors (server errors with an errno/SQLSTATE, and Node network errors) onto
// ConnectorError codes. Messages are generic on purpose: a MySQL error text can carry the user
// name and host (`Access denied for user 'x'@'h'`), so only the error's symbolic code is kept,
// in `driverCode`, and the original error as the (never shown) cause.
import { ConnectorError } from '@quarry/sdk-connector';

/** The fields of a mysql2 error this mapping reads. */
interface MysqlErrorLike {
  readonly code?: unknown;
  readonly errno?: unknown;
  readonly sqlState?: unknown;
  readonly fatal?: unknown;
}

/** Network-level failures: the server cannot be reached or the connection dropped. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'HANDSHAKE_NO_SSL_SUPPORT',
  'HANDSHAKE_SSL_ERROR',
]);

/** Server errors that mean "you cannot have a working session" (auth, host, capacity, shutdown). */
const CONNECT_ERRNOS: ReadonlySet<number> = new Set([
  1040, // ER_CON_COUNT_ERROR: too many connections
  1044, // ER_DBACCESS_DENIED_ERROR
  1045, // ER_ACCESS_DENIED_ERROR
  1049, // ER_BAD_DB_ERROR: unknown database
  1053, // ER_SERVER_SHUTDOWN
  1129, // ER_HOST_IS_BLOCKED
  1130, // ER_HOST_NOT_PRIVILEGED
  1203, // ER_TOO_MANY_USER_CONNECTIONS
  1226, // ER_USER_LIMIT_REACHED
  1251, // ER_NOT_SUPPORTED_AUTH_MODE
  1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR (MariaDB: unknown user / unix_socket user over TCP)
  1927, // ER_CONNECTION_KILLED (MariaDB)
  2006, // CR_SERVER_GONE_ERROR
  2013, // CR_SERVER_LOST
]);

const TIMEOUT_ERRNOS: ReadonlySet<number> = new Set([
  1969, // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
  3024, // ER_QUERY_TIMEOUT (MySQL max_execution_time)
]);

const PERMISSION_ERRNOS: ReadonlySet<number> = new Set([
  1142, // ER_TABLEACCESS_DENIED_ERROR
  1143, // ER_COLUMNACCESS_DENIED_ERROR
  1227, // ER_SPECIFIC_ACCESS_DENIED_ERROR
  1370, // ER_PROCACCESS_DENIED_ERROR
]);

const READ_ONLY_ERRNOS: ReadonlySet<number> = new Set([
  1792, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  1290, // ER_OPTION_PREVENTS_STATEMENT (--read-only server)
  1836, // ER_READ_ONLY_MODE
]);

const UNKNOWN_OBJECT_ERRNOS: ReadonlySet<number> = new Set([
  1054, // ER_BAD_FIELD_ERROR
  1146, // ER_NO_SUCH_TABLE
  1305, // ER_SP_DOES_NOT_EXIST
]);

function driverCodeOf(error: MysqlErrorLike): string | undefined {
  if (typeof error.code === 'string' && error.code !== '') return error.code;
  if (typeof error.errno === 'number') return String(error.errno);
  return undefined;
}

/** Maps any error thrown by mysql2 (or by this connector) to a caller-safe ConnectorError. */
export function mapMysqlError(error: unknown): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e: MysqlErrorLike = typeof error === 'object' && error !== null ? error : {};
  const driverCode = driverCodeOf(e);
  const errno = typeof e.errno === 'number' ? e.errno : undefined;
  const options = { cause: error, driverCode };

  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) {
    return new ConnectorError(
      'CONNECT_FAILED',
      'could not reach the MySQL server or the connection was lost',
      options,
    );
  }
  if (errno !== undefined) {
    if (CONNECT_ERRNOS.has(errno)) {
      return new ConnectorError(
        'CONNECT_FAILED',
        'the MySQL server refused or dropped the connection',
        options,
      );
    }
    if (TIMEOUT_ERRNOS.has(errno)) {
      return new ConnectorError(
        'QUERY_TIMEOUT',
        'the query ran past its time limit and was stopped',
        options,
      );
    }
    if (errno === 1317) {
      // ER_QUERY_INTERRUPTED: our own KILL QUERY (a cancel) or an operator's.
      return new ConnectorError('QUERY_ABORTED', 'the query was cancelled', options);
    }
    if (READ_ONLY_ERRNOS.has(errno)) {
      return new ConnectorError(
        'QUERY_FAILED',
        'the query tried to write, but sessions are read-only',
        options,
      );
    }
    if (PERMISSION_ERRNOS.has(errno)) {
      return new ConnectorError('QUERY_FAILED', 'the warehouse denied permission for this query', options);
    }
    if (errno === 1064) {
      return new ConnectorError(
        'QUERY_FAILED',
        'the warehouse rejected the query: SQL syntax error',
        options,
      );
    }
    if (UNKNOWN_OBJECT_ERRNOS.has(errno)) {
      return new ConnectorError(
        'QUERY_FAILED',
        'the query refers to an unknown table, column or routine',
        options,
      );
    }
  }
  // SQLSTATE class 28: invalid authorization specification.
  if (typeof e.sqlState === 'string' && e.sqlState.startsWith('28')) {
    return new ConnectorError('CONNECT_FAILED', 'the MySQL server refused the login', options);
  }
  if (e.fatal === true) {
    return new ConnectorError('CONNECT_FAILED', 'the connection to the MySQL server was lost', options);
  }
  return new ConnectorError('QUERY_FAILED', 'the warehouse rejected the query', options);
}
