// The API's error codes and their HTTP statuses (docs/design.md §2). The map is exhaustive by type,
// so adding a code without a status does not compile.

export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_PARAMS'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'SOURCE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMIT_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'RESULT_TOO_LARGE'
  | 'UPSTREAM_ERROR'
  | 'SOURCE_UNAVAILABLE'
  | 'QUERY_TIMEOUT'
  | 'INTERNAL';

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | 504;

export const ERROR_STATUS: Readonly<Record<ErrorCode, ErrorStatus>> = {
  INVALID_REQUEST: 400,
  INVALID_PARAMS: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  SOURCE_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  RESULT_TOO_LARGE: 422,
  UPSTREAM_ERROR: 502,
  SOURCE_UNAVAILABLE: 503,
  QUERY_TIMEOUT: 504,
  INTERNAL: 500,
};

export const ERROR_CODES = Object.keys(ERROR_STATUS) as readonly ErrorCode[];
