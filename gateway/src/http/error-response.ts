// The HTTP side of the error mapper (errors/error-payload.ts): Hono's own exceptions mapped to
// the envelope too, and the envelope as a fetch Response.
import { HTTPException } from 'hono/http-exception';
import { ApiError } from '../errors/api-error.js';
import { asApiError, type ErrorLogger, errorPayload } from '../errors/error-payload.js';

/** Turns any thrown value, Hono's HTTPException included, into an ApiError (see asApiError). */
export function toApiError(error: unknown, logger: ErrorLogger): ApiError {
  if (error instanceof HTTPException) {
    if (error.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
    if (error.status === 401) return new ApiError('UNAUTHENTICATED', 'Authentication required.');
    if (error.status === 404) return new ApiError('NOT_FOUND', 'Not found.');
    if (error.status === 400) return new ApiError('INVALID_REQUEST', 'The request is malformed.');
  }
  return asApiError(error, logger);
}

/** The error envelope as a Response (see errorPayload). */
export function errorResponse(
  error: ApiError,
  requestId: string,
  extraHeaders?: Readonly<Record<string, string>>,
): Response {
  const { status, headers, body } = errorPayload(error, requestId, extraHeaders);
  return new Response(body, { status, headers });
}
