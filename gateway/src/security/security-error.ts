// The security layer's domain error: a refused host, an unreadable secret. Carries a code the
// HTTP error mapper turns into a status, and a message that is safe to show (it never holds
// key material or plaintext).

/** Why a security check or operation failed. */
export type SecurityErrorCode =
  /** The host is, or resolves to, a private, loopback, link-local or metadata address. */
  | 'ADDRESS_NOT_ALLOWED'
  /** The host name does not resolve. */
  | 'HOST_UNRESOLVABLE'
  /** A sealed secret names a key id this gateway does not hold. */
  | 'SECRET_KEY_UNKNOWN'
  /** A sealed secret fails authentication: wrong key, or the bytes were altered. */
  | 'SECRET_UNREADABLE';

/** A refused security check; `message` is safe to show. */
export class SecurityError extends Error {
  override readonly name = 'SecurityError';
  readonly code: SecurityErrorCode;
  readonly retryable: boolean;

  constructor(code: SecurityErrorCode, message: string, options: { readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    // DNS can fail transiently; the others do not change on retry.
    this.retryable = code === 'HOST_UNRESOLVABLE';
  }
}

/** True when `value` is a {@link SecurityError}, optionally of the given code. */
export function isSecurityError(value: unknown, code?: SecurityErrorCode): value is SecurityError {
  return value instanceof SecurityError && (code === undefined || value.code === code);
}
