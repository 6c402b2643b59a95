// Token endpoint errors (RFC 6749 §5.2): `{"error", "error_description"}` with the RFC's status,
// not the Quarry envelope, because OAuth client libraries parse this shape.
/** The error codes the token endpoint answers with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope';

export const OAUTH_ERROR_CODES: readonly OAuthErrorCode[] = [
  'invalid_request',
  'invalid_client',
  'unsupported_grant_type',
  'invalid_scope',
];

/** One refusal of a token request. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  readonly code: OAuthErrorCode;
  /** 401 for invalid_client, 400 otherwise; 429 while a client_id is locked out. */
  readonly status: 400 | 401 | 429;
  /** Seconds until a locked-out client may try again. */
  readonly retryAfter: number | undefined;

  constructor(code: OAuthErrorCode, description: string, options: { readonly retryAfter?: number } = {}) {
    super(description);
    this.code = code;
    this.retryAfter = options.retryAfter;
    this.status = options.retryAfter !== undefined ? 429 : code === 'invalid_client' ? 401 : 400;
  }
}

/** The response headers every token endpoint answer carries (RFC 6749 §5.1). */
export const NO_STORE_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** The RFC 6749 §5.2 body of an error. */
export function oauthErrorBody(error: OAuthError): { error: OAuthErrorCode; error_description: string } {
  return { error: error.code, error_description: error.message };
}

/**
 * The headers of an error answer. A 401 always challenges for Basic (RFC 6749 §5.2 requires it
 * when the client used the Authorization header; HTTP requires a challenge on every 401).
 */
export function oauthErrorHeaders(error: OAuthError): Record<string, string> {
  const headers: Record<string, string> = { ...NO_STORE_HEADERS };
  if (error.status === 401) headers['www-authenticate'] = 'Basic realm="quarry"';
  if (error.retryAfter !== undefined)
    headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfter)));
  return headers;
}
