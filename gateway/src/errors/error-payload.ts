// The one error mapper below HTTP: every error from every layer becomes an ApiError, and an
// ApiError becomes the docs/design.md §2 envelope as plain data (status, headers, body), written alike
// by the Hono app and by the query module. Domain errors map by code; anything unknown is logged
// in full and answered as INTERNAL with nothing internal in the body.
import type { ConnectorError } from '@quarry/sdk-connector';
import { isConnectorError } from '@quarry/sdk-connector';
import { ApiError } from './api-error.js';
import { ERROR_STATUS, type ErrorCode, type ErrorStatus } from './error-codes.js';
import { isStoreError, isStoreUnavailable } from './store-error.js';

export interface ErrorEnvelope {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly request_id: string;
    readonly retry_after?: number;
    readonly details: readonly unknown[];
  };
}

export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Seconds a caller should wait after the warehouse was unreachable or its pool full. */
const SOURCE_RETRY_AFTER_S = 1;
/** Seconds a caller should wait after the control-plane store failed to answer. */
const STORE_RETRY_AFTER_S = 1;

function fromConnectorError(error: ConnectorError): ApiError {
  switch (error.code) {
    case 'QUERY_TIMEOUT':
      return new ApiError('QUERY_TIMEOUT', 'The query ran past its time limit and was cancelled.');
    case 'QUERY_ABORTED':
      return new ApiError('QUERY_TIMEOUT', 'The query was cancelled before it finished.');
    case 'CONNECT_FAILED':
      return new ApiError('SOURCE_UNAVAILABLE', 'The data source is unreachable right now.', {
        retryAfter: SOURCE_RETRY_AFTER_S,
      });
    case 'POOL_EXHAUSTED':
    case 'CLOSED':
      return new ApiError('SOURCE_UNAVAILABLE', 'The data source is busy; retry shortly.', {
        retryAfter: SOURCE_RETRY_AFTER_S,
      });
    case 'PARAM_INVALID':
      return new ApiError('INVALID_PARAMS', error.message, { details: error.details });
    case 'CONFIG_INVALID':
      return new ApiError('INVALID_REQUEST', error.message, { details: error.details });
    case 'QUERY_FAILED':
      // Refused by the SDK's read-only check before it reached the warehouse: the reason names
      // a construct (never the SQL), and says the analytic, not the caller, is at fault.
      if (error.driverCode === 'READ_ONLY') {
        return new ApiError(
          'UPSTREAM_ERROR',
          `The analytic was not run: ${error.message}. Only its owner can fix it.`,
        );
      }
      return new ApiError('UPSTREAM_ERROR', 'The data source failed to run the query.');
    case 'RESULT_TOO_LARGE':
      // The query service names the gateway's bound; this is for any other caller of a connector.
      return new ApiError(
        'RESULT_TOO_LARGE',
        "The analytic's result for these params is larger than this gateway answers. Narrow the params.",
      );
  }
}

/** Turns any thrown domain value into an ApiError, logging what callers must not see. */
export function asApiError(error: unknown, logger: ErrorLogger): ApiError {
  if (error instanceof ApiError) return error;
  if (isConnectorError(error)) {
    const mapped = fromConnectorError(error);
    if (mapped.code === 'UPSTREAM_ERROR' || mapped.code === 'SOURCE_UNAVAILABLE') {
      logger.warn({ err: error, driverCode: error.driverCode }, 'connector error');
    }
    return mapped;
  }
  // The gateway's own store failing is a 503 like a warehouse's: nothing was served or charged,
  // and retrying shortly is the right move (never a 500, which says "our bug").
  if (isStoreUnavailable(error)) {
    logger.warn({ err: error, inDoubt: error.inDoubt }, 'the control-plane store is unavailable');
    return new ApiError('SOURCE_UNAVAILABLE', 'The service is briefly unavailable; retry shortly.', {
      retryAfter: STORE_RETRY_AFTER_S,
    });
  }
  if (isStoreError(error)) {
    if (error.code === 'CONFLICT') return new ApiError('CONFLICT', error.message);
    if (error.code === 'NOT_FOUND') return new ApiError('NOT_FOUND', error.message);
    if (error.code === 'LIMIT') return new ApiError('CONFLICT', error.message, { details: error.details });
    if (error.code === 'INVALID') return new ApiError('INVALID_REQUEST', error.message);
  }
  logger.error({ err: error }, 'unhandled error');
  return new ApiError('INTERNAL', 'An internal error occurred. It has been logged.');
}

/** An error answer as plain data: written by the Hono app and by the query fast path alike. */
export interface ErrorPayload {
  readonly status: ErrorStatus;
  /** Lower-case header names. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Builds the envelope and headers for an ApiError. */
export function errorPayload(
  error: ApiError,
  requestId: string,
  extraHeaders?: Readonly<Record<string, string>>,
): ErrorPayload {
  const status: ErrorStatus = ERROR_STATUS[error.code];
  const body: ErrorEnvelope = {
    error: {
      code: error.code,
      message: error.message,
      request_id: requestId,
      ...(error.retryAfter === undefined ? {} : { retry_after: error.retryAfter }),
      details: error.details,
    },
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(error.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['x-request-id'] = requestId;
  if (error.retryAfter !== undefined)
    headers['retry-after'] = String(Math.max(0, Math.ceil(error.retryAfter)));
  if (status === 401 && headers['www-authenticate'] === undefined)
    headers['www-authenticate'] = 'Bearer realm="quarry"';
  return { status, headers, body: JSON.stringify(body) };
}
