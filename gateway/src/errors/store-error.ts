// The control-plane store's domain error. Repositories translate database failures that mean
// something to a caller (a duplicate name, a missing row) into these codes, so the HTTP error
// mapper can answer 409/404 without knowing any SQL.

import type { ApiErrorDetail } from './api-error.js';

/**
 * Why a store operation was refused. LIMIT: the account already holds as many of something as
 * the operator allows. INVALID: a value the database cannot hold (text with a NUL character).
 */
export type StoreErrorCode = 'CONFLICT' | 'NOT_FOUND' | 'LIMIT' | 'INVALID';

/** A refused store operation; `message` is safe to show to the caller. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;
  /** Store refusals are about the request, never transient. */
  readonly retryable = false;
  /** Machine-readable specifics for the envelope's `details`. */
  readonly details: readonly ApiErrorDetail[];

  constructor(
    code: StoreErrorCode,
    message: string,
    options: { readonly cause?: unknown; readonly details?: readonly ApiErrorDetail[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? [];
  }
}

/** True when `value` is a {@link StoreError}, optionally of the given code. */
export function isStoreError(value: unknown, code?: StoreErrorCode): value is StoreError {
  return value instanceof StoreError && (code === undefined || value.code === code);
}

/** True for a PostgreSQL unique violation (SQLSTATE 23505), from pg or PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === '23505';
}

function sqlState(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

/** Caller-facing messages for the constraint failures a write may hit. */
export interface ConstraintMessages {
  /** For a unique violation (23505): CONFLICT. */
  readonly conflict: string;
  /** For a foreign-key violation (23503), i.e. a referenced account is missing: NOT_FOUND. */
  readonly missing?: string;
}

/** Runs `fn`, turning unique and foreign-key violations into StoreErrors with these messages. */
export async function withConstraintErrors<T>(
  messages: ConstraintMessages,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isUniqueViolation(error)) throw new StoreError('CONFLICT', messages.conflict, { cause: error });
    if (messages.missing !== undefined && sqlState(error) === '23503') {
      throw new StoreError('NOT_FOUND', messages.missing, { cause: error });
    }
    throw error;
  }
}

/**
 * PostgreSQL's refusals of a caller's text: a NUL byte in text (22021) or a `\u0000` escape in
 * jsonb (22P05). Both backends raise them before anything is written.
 */
export function asInvalidText(error: unknown): StoreError | undefined {
  const state = sqlState(error);
  if (state !== '22021' && state !== '22P05') return undefined;
  return new StoreError('INVALID', 'Text may not contain the NUL character (\\u0000).', { cause: error });
}

/**
 * The control-plane store could not be reached or stopped answering (refused, reset, timed out).
 * `inDoubt`: the statement had been sent when the connection failed, so a write may have been
 * committed without our hearing of it; false when it failed before anything was sent.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly inDoubt: boolean;
  readonly retryable = true;

  constructor(message: string, options: { readonly inDoubt: boolean; readonly cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.inDoubt = options.inDoubt;
  }
}

/** True when `value` is a {@link StoreUnavailableError}. */
export function isStoreUnavailable(value: unknown): value is StoreUnavailableError {
  return value instanceof StoreUnavailableError;
}

/** Socket errors of a connection that failed or never opened. */
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * True when a PostgreSQL client error means the connection, not the statement, failed: a socket
 * error, a connection or query timeout, the server shutting down or refusing connections
 * (SQLSTATE classes 08 and 57P, 53300).
 */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_ERRNOS.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code))
      return code.startsWith('08') || code.startsWith('57P') || code === '53300';
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Connection lost/i.test(
    message,
  );
}
