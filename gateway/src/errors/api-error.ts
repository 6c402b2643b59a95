// The HTTP-facing domain error: a code from the table, a caller-safe message, and the optional
// retry hint and per-item details the envelope carries.
import type { ErrorCode } from './error-codes.js';

export interface ApiErrorDetail {
  readonly param?: string;
  readonly field?: string;
  /** A number the detail is about (QUOTA_EXCEEDED: `credits_needed`, `credits_left`). */
  readonly value?: number;
  readonly message: string;
}

export interface ApiErrorOptions {
  /** Seconds until a retry may succeed (fractional allowed). */
  readonly retryAfter?: number;
  readonly details?: readonly ApiErrorDetail[];
  readonly cause?: unknown;
  /** Extra response headers (e.g. WWW-Authenticate, Allow). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Why, for the operator's metrics and access line, never the caller's envelope: a 429's
   * `rate_limit` (the key's or account's rate, apart from the other allowances).
   */
  readonly reason?: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ErrorCode;
  readonly retryAfter: number | undefined;
  readonly details: readonly ApiErrorDetail[];
  readonly headers: Readonly<Record<string, string>>;
  readonly reason: string | undefined;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryAfter = options.retryAfter;
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
    this.reason = options.reason;
  }
}
