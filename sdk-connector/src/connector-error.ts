// The one error type connectors throw. Drivers' own errors are mapped onto these codes so the
// gateway can answer with the right HTTP status without knowing any driver, and so no driver
// message (which may carry a host, a user or a password) ever reaches a caller.

/** Every reason a connector can fail, independent of the warehouse behind it. */
export type ConnectorErrorCode =
  /** The warehouse could not be reached or refused the credentials. */
  | 'CONNECT_FAILED'
  /** No session became free within the pool's acquire timeout, or the wait queue is full. */
  | 'POOL_EXHAUSTED'
  /** The query ran past its time limit; it has been cancelled on the server where the engine allows. */
  | 'QUERY_TIMEOUT'
  /** The caller aborted the query (AbortSignal); it has been cancelled on the server where possible. */
  | 'QUERY_ABORTED'
  /** The warehouse rejected or failed the query (syntax, permissions, read-only violation, …). */
  | 'QUERY_FAILED'
  /** A parameter value is not acceptable (wrong type, out of bounds, NUL byte, unknown name). */
  | 'PARAM_INVALID'
  /** The connector's configuration is invalid. */
  | 'CONFIG_INVALID'
  /** The rows passed the query's size bound (QueryRequest.maxResultBytes); none are returned. */
  | 'RESULT_TOO_LARGE'
  /** The connector (or its pool) has been closed. */
  | 'CLOSED';

const RETRYABLE: Readonly<Record<ConnectorErrorCode, boolean>> = {
  CONNECT_FAILED: true,
  POOL_EXHAUSTED: true,
  QUERY_TIMEOUT: false,
  QUERY_ABORTED: false,
  QUERY_FAILED: false,
  PARAM_INVALID: false,
  CONFIG_INVALID: false,
  RESULT_TOO_LARGE: false,
  CLOSED: false,
};

/** Options for {@link ConnectorError}. */
export interface ConnectorErrorOptions {
  /** Whether retrying the same call later may succeed; defaults by code. */
  readonly retryable?: boolean;
  /** The underlying error, kept for logs only: it is never shown to API callers. */
  readonly cause?: unknown;
  /** Structured detail safe to show to callers (e.g. which param failed and why). */
  readonly details?: readonly ConnectorErrorDetail[];
  /** The warehouse's own error code (SQLSTATE, errno, …), safe to log. */
  readonly driverCode?: string;
  /**
   * The warehouse's own message, with secrets removed (see {@link redactSecrets}): for the
   * analytic's owner, who needs it to fix their SQL; never shown to other callers.
   */
  readonly warehouseMessage?: string;
}

/** One caller-safe detail of an error, e.g. one failing parameter. */
export interface ConnectorErrorDetail {
  readonly param?: string;
  readonly message: string;
}

/**
 * The error every connector throws. `message` must be safe to log and must never contain a
 * password or a connection string; use {@link redactSecrets} on any driver text you copy in.
 */
export class ConnectorError extends Error {
  override readonly name = 'ConnectorError';
  readonly code: ConnectorErrorCode;
  readonly retryable: boolean;
  readonly details: readonly ConnectorErrorDetail[];
  readonly driverCode: string | undefined;
  /** The warehouse's own message, secrets removed: for the owner only (see the option). */
  readonly warehouseMessage: string | undefined;

  constructor(code: ConnectorErrorCode, message: string, options: ConnectorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE[code];
    this.details = options.details ?? [];
    this.driverCode = options.driverCode;
    this.warehouseMessage = options.warehouseMessage;
  }
}

/** True when `value` is a {@link ConnectorError}, optionally of the given code. */
export function isConnectorError(value: unknown, code?: ConnectorErrorCode): value is ConnectorError {
  return value instanceof ConnectorError && (code === undefined || value.code === code);
}

const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)([^/\s:@]*)(:[^@\s/]*)?@/gi;
const KEY_VALUE_SECRET =
  /\b(password|passwd|pwd|secret|token|private_?key|apikey|api_key)\s*[=:]\s*("[^"]*"|'[^']*'|[^\s;,&]+)/gi;

/**
 * Removes credentials from free text: the user-info part of URLs (`postgres://u:p@h` →
 * `postgres://***@h`), `password=…`-style pairs, and every literal string in `secrets`.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(URL_CREDENTIALS, '$1***@').replace(KEY_VALUE_SECRET, '$1=***');
  for (const secret of secrets) {
    if (secret.length >= 3) out = out.split(secret).join('***');
  }
  return out;
}
