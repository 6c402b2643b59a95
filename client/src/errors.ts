// Typed errors of the client, mirroring the gateway's error envelope (docs/design.md §2):
// `{"error": {"code", "message", "retry_after"?, "request_id", "details"?}}`. One class per
// family so callers can `instanceof` them, plus the client's own failures (network, timeout)
// and the OAuth token endpoint's RFC 6749 §5.2 errors, which are not in the envelope.

/** One item of an error's `details` (a param or field and what is wrong with it). */
export interface QuarryErrorDetail {
  readonly param?: string;
  readonly field?: string;
  /** A number the error is about (QUOTA_EXCEEDED: the credits the call needs, those left). */
  readonly value?: number;
  readonly message: string;
}

/** What every Quarry error carries. */
export interface QuarryErrorInit {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly requestId?: string | undefined;
  /** Seconds until a retry may succeed (fractional allowed). */
  readonly retryAfter?: number | undefined;
  readonly details?: readonly QuarryErrorDetail[] | undefined;
  readonly cause?: unknown;
}

/** `CODE: reason (request req_…)`: what `message` says, so a logged error can be traced. */
function fullMessage(init: QuarryErrorInit): string {
  return `${init.code}: ${init.message}${init.requestId ? ` (request ${init.requestId})` : ''}`;
}

/**
 * Any failed call: an error answered by the gateway, or the client's own (network, timeout).
 * Its `message` is `CODE: reason (request req_…)`; `reason` is the gateway's words alone.
 */
export class QuarryError extends Error {
  override readonly name: string = 'QuarryError';
  /** What went wrong, in the gateway's (or the client's) words, without the code and request id. */
  readonly reason: string;
  /** The envelope's code (`RATE_LIMIT_EXCEEDED`…), or the client's own (`NETWORK_ERROR`, `TIMEOUT`). */
  readonly code: string;
  /** The HTTP status; 0 when no response arrived. */
  readonly status: number;
  /** The gateway's request id (quote it when reporting a problem). */
  readonly requestId: string | undefined;
  /** Seconds until a retry may succeed, from `retry_after` or the `Retry-After` header. */
  readonly retryAfter: number | undefined;
  readonly details: readonly QuarryErrorDetail[];

  constructor(init: QuarryErrorInit) {
    super(fullMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.reason = init.message;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
    this.details = init.details ?? [];
  }

  /** `Name: CODE: reason (request req_…)`: the code and request id are in `message` already. */
  override toString(): string {
    return `${this.name}: ${this.message}`;
  }
}

/** 400 `INVALID_REQUEST` (and 405/413/415): the request itself is malformed. */
export class InvalidRequestError extends QuarryError {
  override readonly name: string = 'InvalidRequestError';
}
/** 400 `INVALID_PARAMS`: `details` lists each param that is unknown, missing or wrong. */
export class InvalidParamsError extends QuarryError {
  override readonly name: string = 'InvalidParamsError';
}
/** 401 `UNAUTHENTICATED`: no, malformed, unknown, revoked or expired credential. */
export class UnauthenticatedError extends QuarryError {
  override readonly name: string = 'UnauthenticatedError';
}
/** 403 `FORBIDDEN`: the credential's scopes (or the analytic's visibility) forbid the call. */
export class ForbiddenError extends QuarryError {
  override readonly name: string = 'ForbiddenError';
}
/**
 * 404 `SOURCE_NOT_FOUND` / `NOT_FOUND`, and 410 `VERSION_SUNSET`: a pinned version (`name@3`)
 * its owner retired; the message and `details` name the current version.
 */
export class NotFoundError extends QuarryError {
  override readonly name: string = 'NotFoundError';
}
/** 409 `CONFLICT`: a duplicate name, or an Idempotency-Key still running. */
export class ConflictError extends QuarryError {
  override readonly name: string = 'ConflictError';
}
/**
 * 409 `PRICE_ABOVE_LIMIT`: the call would cost more than its `maxCredits`; nothing was run or
 * charged. `details` carry the price and the limit. Never retried (the same call costs the same).
 */
export class PriceAboveLimitError extends QuarryError {
  override readonly name: string = 'PriceAboveLimitError';
}
/** 429 `RATE_LIMIT_EXCEEDED`: retried automatically after `retryAfter` seconds. */
export class RateLimitError extends QuarryError {
  override readonly name: string = 'RateLimitError';
}
/** 429 `QUOTA_EXCEEDED`: the plan's monthly calls are used up; never retried (it resets monthly). */
export class QuotaExceededError extends QuarryError {
  override readonly name: string = 'QuotaExceededError';
}
/**
 * 429 `FAILED_CALLS_THROTTLED`: the account's failed calls (timeouts, results too large,
 * warehouse errors) used more than the gateway allows of owners' warehouse time; calls that
 * would run a query wait `retryAfter` seconds (cache hits are still served). Not retried
 * automatically: the wait can be minutes.
 */
export class FailedCallsThrottledError extends QuarryError {
  override readonly name: string = 'FailedCallsThrottledError';
}
/**
 * 422 `RESULT_TOO_LARGE`: the result for these params is larger than the gateway answers
 * (`QUARRY_MAX_RESULT_BYTES`); never retried: narrow the params.
 */
export class ResultTooLargeError extends QuarryError {
  override readonly name: string = 'ResultTooLargeError';
}
/** 502 `UPSTREAM_ERROR`: the warehouse rejected or failed the query. */
export class UpstreamError extends QuarryError {
  override readonly name: string = 'UpstreamError';
}
/** 503 `SOURCE_UNAVAILABLE`: the warehouse is unreachable or busy. */
export class SourceUnavailableError extends QuarryError {
  override readonly name: string = 'SourceUnavailableError';
}
/** 504 `QUERY_TIMEOUT`: the analytic's own time limit passed on the gateway. */
export class QueryTimeoutError extends QuarryError {
  override readonly name: string = 'QueryTimeoutError';
}
/** 500 `INTERNAL`: a bug in the gateway. */
export class InternalError extends QuarryError {
  override readonly name: string = 'InternalError';
}
/** No response: connection refused or reset, DNS failure, body cut off. */
export class NetworkError extends QuarryError {
  override readonly name: string = 'NetworkError';
}
/** The client's own `timeoutMs` passed before the call (with its retries) finished. */
export class TimeoutError extends QuarryError {
  override readonly name: string = 'TimeoutError';
}
/**
 * The OAuth token endpoint refused the client (RFC 6749 §5.2): `code` is the OAuth error
 * (`invalid_client`, `invalid_scope`, `invalid_request`, `unsupported_grant_type`…).
 */
export class OAuthError extends QuarryError {
  override readonly name: string = 'OAuthError';
}

type ErrorClass = new (init: QuarryErrorInit) => QuarryError;

const CLASS_BY_CODE: Readonly<Record<string, ErrorClass>> = {
  INVALID_REQUEST: InvalidRequestError,
  METHOD_NOT_ALLOWED: InvalidRequestError,
  PAYLOAD_TOO_LARGE: InvalidRequestError,
  UNSUPPORTED_MEDIA_TYPE: InvalidRequestError,
  INVALID_PARAMS: InvalidParamsError,
  UNAUTHENTICATED: UnauthenticatedError,
  FORBIDDEN: ForbiddenError,
  SOURCE_NOT_FOUND: NotFoundError,
  NOT_FOUND: NotFoundError,
  VERSION_SUNSET: NotFoundError,
  CONFLICT: ConflictError,
  PRICE_ABOVE_LIMIT: PriceAboveLimitError,
  RATE_LIMIT_EXCEEDED: RateLimitError,
  QUOTA_EXCEEDED: QuotaExceededError,
  FAILED_CALLS_THROTTLED: FailedCallsThrottledError,
  RESULT_TOO_LARGE: ResultTooLargeError,
  UPSTREAM_ERROR: UpstreamError,
  SOURCE_UNAVAILABLE: SourceUnavailableError,
  QUERY_TIMEOUT: QueryTimeoutError,
  INTERNAL: InternalError,
};

/** The family of a non-JSON answer of a proxy in front of the gateway. */
const CLASS_BY_PROXY_STATUS: Readonly<Record<number, ErrorClass>> = {
  502: UpstreamError,
  503: SourceUnavailableError,
  504: UpstreamError,
};

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date); undefined when absent or bad. */
export function parseRetryAfterHeader(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function detailsOf(value: unknown): QuarryErrorDetail[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((d) => ({
    message: typeof d.message === 'string' ? d.message : JSON.stringify(d),
    ...(typeof d.param === 'string' ? { param: d.param } : {}),
    ...(typeof d.field === 'string' ? { field: d.field } : {}),
    ...(typeof d.value === 'number' ? { value: d.value } : {}),
  }));
}

/**
 * The typed error for a failed response: the envelope's class when the body is one, an
 * OAuthError for an RFC 6749 error body, else a QuarryError named after the status.
 */
export function errorFromResponse(status: number, headers: Headers, bodyText: string): QuarryError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const headerRetryAfter = parseRetryAfterHeader(headers.get('retry-after'));
  const headerRequestId = headers.get('x-request-id') ?? undefined;
  if (isRecord(body) && isRecord(body.error) && typeof body.error.code === 'string') {
    const e = body.error;
    const code = e.code as string;
    const Class = CLASS_BY_CODE[code] ?? QuarryError;
    return new Class({
      code,
      status,
      message: typeof e.message === 'string' ? e.message : `${code} (HTTP ${status})`,
      requestId: typeof e.request_id === 'string' ? e.request_id : headerRequestId,
      retryAfter: typeof e.retry_after === 'number' ? e.retry_after : headerRetryAfter,
      details: detailsOf(e.details),
    });
  }
  if (isRecord(body) && typeof body.error === 'string') {
    return new OAuthError({
      code: body.error,
      status,
      message:
        typeof body.error_description === 'string' && body.error_description !== ''
          ? body.error_description
          : `The token endpoint answered ${body.error} (HTTP ${status}).`,
      requestId: headerRequestId,
      retryAfter: headerRetryAfter,
    });
  }
  // A proxy or load balancer in front of the gateway answers 502/503/504 with its own page: the
  // same family as the gateway's own upstream failure, so callers handle (and retry) it alike.
  const ProxyClass = CLASS_BY_PROXY_STATUS[status];
  const Class = ProxyClass ?? QuarryError;
  return new Class({
    code: 'HTTP_ERROR',
    status,
    message: `HTTP ${status} without a Quarry error body${ProxyClass ? ' (from a proxy in front of the gateway)' : ''}${bodyText ? `: ${bodyText.slice(0, 200)}` : ''}`,
    requestId: headerRequestId,
    retryAfter: headerRetryAfter,
  });
}

/** Why a fetch failed, with the underlying cause (`fetch failed` alone says nothing). */
export function describeFetchFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
