// Maps BigQuery's errors onto ConnectorErrors. The API answers `{"error": {"code", "message",
// "errors": [{"reason", "message"}]}}` (the driver turns it into an ApiError with `code` and
// `errors`), and a failed job carries the same `{reason, message}` objects in its status. The
// `reason` (`invalidQuery`, `notFound`, `bytesBilledLimitExceeded`, …) decides the code and
// becomes `driverCode`; BigQuery's message is never copied (it quotes SQL, names and values).
import { ConnectorError, type ConnectorErrorCode, isConnectorError } from '@quarry/sdk-connector';

interface ReasonRule {
  readonly code: ConnectorErrorCode;
  readonly message: string;
  readonly retryable?: boolean;
}

const REASONS: Readonly<Record<string, ReasonRule>> = {
  invalidQuery: { code: 'QUERY_FAILED', message: 'BigQuery rejected the query as invalid' },
  invalid: { code: 'QUERY_FAILED', message: 'BigQuery rejected the query or a parameter as invalid' },
  notFound: { code: 'QUERY_FAILED', message: 'the query names a table, dataset or job BigQuery cannot find' },
  accessDenied: {
    code: 'QUERY_FAILED',
    message: 'the service account lacks a permission the query needs',
  },
  bytesBilledLimitExceeded: {
    code: 'QUERY_FAILED',
    message:
      "the query would bill more bytes than its maximumBytesBilled (the analytic's or the connection's) allows",
  },
  billingTierLimitExceeded: {
    code: 'QUERY_FAILED',
    message: 'the query needs more compute than on-demand billing allows for the bytes it reads',
  },
  resourcesExceeded: { code: 'QUERY_FAILED', message: 'the query ran out of BigQuery resources' },
  responseTooLarge: { code: 'QUERY_FAILED', message: 'the query result is too large for BigQuery to return' },
  stopped: { code: 'QUERY_FAILED', message: 'the BigQuery job was cancelled' },
  quotaExceeded: { code: 'QUERY_FAILED', message: 'a BigQuery quota was exceeded', retryable: true },
  rateLimitExceeded: { code: 'QUERY_FAILED', message: 'BigQuery rate-limited the request', retryable: true },
  timeout: { code: 'QUERY_TIMEOUT', message: 'the BigQuery job ran past its time limit' },
  authError: { code: 'CONNECT_FAILED', message: 'BigQuery refused the credentials' },
  unauthorized: { code: 'CONNECT_FAILED', message: 'BigQuery refused the credentials' },
  required: { code: 'CONNECT_FAILED', message: 'BigQuery refused the request without credentials' },
  backendError: { code: 'CONNECT_FAILED', message: 'BigQuery is temporarily unavailable' },
  internalError: { code: 'CONNECT_FAILED', message: 'BigQuery failed internally' },
};

// Node's socket, DNS and TLS failures, and node-fetch's own error types.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const SAFE_CODE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

interface ErrorShape {
  readonly code?: unknown;
  readonly type?: unknown;
  readonly reason?: unknown;
  readonly errors?: unknown;
}

/** A token fit to be a `driverCode`: BigQuery reasons and errno names, never free text. */
function safeCode(value: unknown): string | undefined {
  return typeof value === 'string' && SAFE_CODE.test(value) ? value : undefined;
}

/** The first recognised reason of an API error or a failed job's errors (else the first at all). */
export function reasonOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const list = (error as ErrorShape).errors;
  const reasons = Array.isArray(list)
    ? list.map((entry) => safeCode((entry as ErrorShape | null)?.reason)).filter((r) => r !== undefined)
    : [];
  return reasons.find((reason) => reason in REASONS) ?? reasons[0];
}

function fromStatus(status: number): ReasonRule & { readonly driverCode: string } {
  const driverCode = `HTTP_${status}`;
  if (status === 401) return { ...REASONS.authError!, driverCode };
  if (status === 403) return { ...REASONS.accessDenied!, driverCode };
  if (status === 404) return { ...REASONS.notFound!, driverCode };
  if (status === 429) return { ...REASONS.rateLimitExceeded!, driverCode };
  if (status >= 500) return { ...REASONS.backendError!, driverCode };
  return { code: 'QUERY_FAILED', message: 'BigQuery rejected the request', driverCode };
}

/**
 * Maps anything the driver, the token client or the session threw to a ConnectorError with a
 * caller-safe message: BigQuery reasons by table (unknown ones QUERY_FAILED), HTTP 401 and 5xx to
 * CONNECT_FAILED, socket and TLS failures to CONNECT_FAILED.
 */
export function mapBigqueryError(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const shape = (error !== null && typeof error === 'object' ? error : {}) as ErrorShape;
  const reason = reasonOf(error);
  const rule = reason === undefined ? undefined : REASONS[reason];
  // A 401 is the credentials whatever the reason says (BigQuery answers `authError` or `required`).
  if (rule !== undefined && !(shape.code === 401 && rule.code !== 'CONNECT_FAILED')) {
    return new ConnectorError(rule.code, rule.message, {
      cause: error,
      driverCode: reason,
      ...(rule.retryable === undefined ? {} : { retryable: rule.retryable }),
    });
  }
  if (typeof shape.code === 'number' && shape.code >= 400) {
    const byStatus = fromStatus(shape.code);
    return new ConnectorError(byStatus.code, byStatus.message, {
      cause: error,
      driverCode: reason ?? byStatus.driverCode,
      ...(byStatus.retryable === undefined ? {} : { retryable: byStatus.retryable }),
    });
  }
  const code = safeCode(shape.code);
  if ((code !== undefined && NETWORK_CODES.has(code)) || shape.type === 'request-timeout') {
    return new ConnectorError('CONNECT_FAILED', 'could not reach BigQuery', {
      cause: error,
      driverCode: code ?? 'request-timeout',
    });
  }
  if (reason !== undefined) {
    return new ConnectorError('QUERY_FAILED', `BigQuery rejected the query (${reason})`, {
      cause: error,
      driverCode: reason,
    });
  }
  return new ConnectorError('QUERY_FAILED', 'the BigQuery request failed', {
    cause: error,
    ...(code === undefined ? {} : { driverCode: code }),
  });
}
