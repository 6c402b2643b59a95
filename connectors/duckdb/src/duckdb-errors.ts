// Maps DuckDB errors onto ConnectorErrors. DuckDB errors carry no code, only a message that
// starts with the error class ("Binder Error: …", "IO Error: …"); that class becomes the
// `driverCode`. The message itself is never copied: it can hold file paths and data values.
import { ConnectorError, isConnectorError } from '@quarry/sdk-connector';

const ERROR_CLASS = /^([A-Za-z][A-Za-z ]{0,40}?) Error:/;

/** The DuckDB error class of `error` ("Binder", "Catalog", "IO", "INTERRUPT", …), if any. */
export function duckdbErrorClass(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : undefined;
  return message === undefined ? undefined : ERROR_CLASS.exec(message)?.[1];
}

/** An error raised while opening the database file or creating a connection to it. */
export function connectFailed(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const driverCode = duckdbErrorClass(error);
  return new ConnectorError('CONNECT_FAILED', 'could not open the DuckDB database', {
    cause: error,
    driverCode,
  });
}

/** Maps any error from a DuckDB query to a ConnectorError with a generic, caller-safe message. */
export function mapDuckdbError(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const driverCode = duckdbErrorClass(error);
  if (driverCode === 'Connection') return connectFailed(error);
  const message =
    driverCode === 'INTERRUPT'
      ? 'DuckDB query was interrupted'
      : driverCode === undefined
        ? 'DuckDB query failed'
        : `DuckDB rejected the query (${driverCode} Error)`;
  return new ConnectorError('QUERY_FAILED', message, { cause: error, driverCode });
}
