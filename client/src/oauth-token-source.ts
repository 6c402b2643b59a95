// Access tokens for an OAuth client (client-credentials grant, docs: oauth-contract): fetched
// from `POST /oauth/token` with client_secret_basic, cached, refreshed shortly before they
// expire, dropped when the API refuses one, and shared: concurrent calls wait on one request.
import { raceAbort } from './abort.js';
import { describeFetchFailure, errorFromResponse, NetworkError, OAuthError, TimeoutError } from './errors.js';

/** The OAuth client's credentials (`POST /v1/oauth/clients` shows the secret once). */
export interface OAuthCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Scopes to ask for (space-separated or a list); default every scope of the client. */
  readonly scope?: string | readonly string[];
}

export interface OAuthTokenSourceOptions {
  /** The token endpoint, e.g. `https://quarry.example.com/oauth/token`. */
  readonly tokenUrl: string;
  readonly credentials: OAuthCredentials;
  readonly fetch: typeof fetch;
  /** Bound on one token request, so a hung endpoint cannot stall every later call. */
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** The clock (ms since the epoch); tests move it. */
  readonly now?: () => number;
}

/** Where a client's bearer tokens come from. */
export interface TokenSource {
  /** A token valid for a while yet: the cached one, or one fetched now (shared by concurrent callers). */
  token(signal: AbortSignal): Promise<string>;
  /** Forgets `token` (the API refused it), so the next `token()` fetches a new one. */
  invalidate(token: string): void;
}

/** Longest head start for a refresh before a token expires (a tenth of its life when shorter). */
const MAX_REFRESH_MARGIN_MS = 60_000;
/** How long to keep a token whose response did not say (`expires_in` is optional in RFC 6749). */
const DEFAULT_LIFETIME_S = 300;

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined for HTTP Basic. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

interface CachedToken {
  readonly value: string;
  readonly refreshAt: number;
}

export function createOAuthTokenSource(options: OAuthTokenSourceOptions): TokenSource {
  const { credentials } = options;
  const now = options.now ?? Date.now;
  const basic = btoa(`${formEncode(credentials.clientId)}:${formEncode(credentials.clientSecret)}`);
  const scope =
    credentials.scope === undefined
      ? undefined
      : typeof credentials.scope === 'string'
        ? credentials.scope
        : credentials.scope.join(' ');
  let cached: CachedToken | undefined;
  let inFlight: Promise<string> | undefined;

  async function request(): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope !== undefined && scope !== '') form.set('scope', scope);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    let status: number;
    let headers: Headers;
    let text: string;
    try {
      const response = await options.fetch(options.tokenUrl, {
        method: 'POST',
        headers: {
          ...options.headers,
          accept: 'application/json',
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form.toString(),
        signal: controller.signal,
      });
      status = response.status;
      headers = response.headers;
      text = await response.text();
    } catch (error) {
      if (controller.signal.aborted) {
        throw new TimeoutError({
          code: 'TIMEOUT',
          status: 0,
          message: `The token endpoint ${options.tokenUrl} did not answer within ${options.timeoutMs} ms.`,
        });
      }
      throw new NetworkError({
        code: 'NETWORK_ERROR',
        status: 0,
        message: `Could not reach the token endpoint ${options.tokenUrl}: ${describeFetchFailure(error)}`,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
    if (status < 200 || status >= 300) throw errorFromResponse(status, headers, text);
    return remember(text, status);
  }

  function remember(text: string, status: number): string {
    let body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown } | undefined;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = undefined;
    }
    if (
      typeof body?.access_token !== 'string' ||
      body.access_token === '' ||
      typeof body.token_type !== 'string' ||
      body.token_type.toLowerCase() !== 'bearer'
    ) {
      throw new OAuthError({
        code: 'invalid_token_response',
        status,
        message: 'The token endpoint answered without a bearer access_token; check the gateway URL.',
      });
    }
    const lifetimeMs =
      (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S) *
      1000;
    const margin = Math.min(MAX_REFRESH_MARGIN_MS, lifetimeMs / 10);
    cached = { value: body.access_token, refreshAt: now() + lifetimeMs - margin };
    return body.access_token;
  }

  return {
    token(signal) {
      if (cached !== undefined && now() < cached.refreshAt) return Promise.resolve(cached.value);
      if (inFlight === undefined) {
        inFlight = request().finally(() => {
          inFlight = undefined;
        });
        // Waiters that all abort leave the shared request settling unobserved: not an unhandled rejection.
        inFlight.catch(() => undefined);
      }
      return raceAbort(inFlight, signal);
    },
    invalidate(token) {
      if (cached?.value === token) cached = undefined;
    },
  };
}
