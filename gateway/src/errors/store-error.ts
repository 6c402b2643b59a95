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
