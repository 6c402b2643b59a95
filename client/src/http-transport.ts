// One HTTP call to the gateway with everything around it: the credential (API key or OAuth
// token, fetched again once when the API answers 401), typed errors, bounded retries with
// backoff, one deadline for the whole call (retries and waits included), and the caller's
// AbortSignal, which stops the in-flight fetch and any wait between attempts.
import { sleep } from './abort.js';
import {
  describeFetchFailure,
  errorFromResponse,
  NetworkError,
  QuarryError,
  TimeoutError,
} from './errors.js';
import type { TokenSource } from './oauth-token-source.js';
import { type RetryOptions, retryDelayMs } from './retry-policy.js';
import type { QueryStringParams } from './types.js';

/** How calls are authenticated. */
export type Credential =
  | { readonly kind: 'api-key'; readonly apiKey: string }
  | { readonly kind: 'oauth'; readonly tokens: TokenSource }
  /** Embed tokens from the page's own backend (embed-token-source.ts); a page holds no key. */
  | { readonly kind: 'embed'; readonly tokens: TokenSource }
  /** No credential: the public operations (sign-up, the marketplace). */
  | { readonly kind: 'none' };

export interface TransportOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8787` (a path prefix is kept). */
  readonly baseUrl: string;
  readonly credential: Credential;
  readonly fetch: typeof fetch;
  /** Bound on a whole call, retries included; undefined: none. */
  readonly timeoutMs: number | undefined;
  readonly retry: RetryOptions;
  readonly userAgent: string;
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** From the API root, e.g. `/v1/keys`; segments already encoded. */
  readonly path: string;
  readonly query?: QueryStringParams;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Safe to send more than once (GET, PUT, DELETE, a query with its Idempotency-Key). */
  readonly idempotent: boolean;
  /**
   * `json` (default) parses the answer; `text` returns it as sent (CSV); `response` returns the
   * successful Response unread, to stream its body (exports); errors are thrown as usual.
   */
  readonly responseType?: 'json' | 'text' | 'response';
  readonly signal?: AbortSignal | undefined;
}

export interface Transport {
  /** Sends `request`; resolves with the parsed body (undefined for 204), or throws a QuarryError. */
  send<T>(request: ApiRequest): Promise<T>;
}

function urlOf(baseUrl: string, request: ApiRequest): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value === null || value === undefined) continue;
    const values: readonly (string | number | boolean)[] = Array.isArray(value) ? value : [value];
    for (const v of values) url.searchParams.append(name, String(v));
  }
  return url.toString();
}

export function createTransport(options: TransportOptions): Transport {
  const { credential, retry } = options;

  /** One attempt; a 401 on an OAuth token gets one fresh token per call (`state.reauthorized`). */
  async function attempt<T>(
    request: ApiRequest,
    url: string,
    signal: AbortSignal,
    state: { reauthorized: boolean },
  ): Promise<T> {
    const headers: Record<string, string> = {
      accept: request.responseType === 'text' ? 'text/csv' : 'application/json',
      'user-agent': options.userAgent,
      ...request.headers,
    };
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (;;) {
      const token =
        credential.kind === 'api-key'
          ? credential.apiKey
          : credential.kind === 'oauth' || credential.kind === 'embed'
            ? await credential.tokens.token(signal)
            : undefined;
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      let response: Response;
      let text: string;
      try {
        response = await options.fetch(url, {
          method: request.method,
          headers,
          signal,
          ...(body === undefined ? {} : { body }),
        });
        if (request.responseType === 'response' && response.ok) return response as T;
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw new NetworkError({
          code: 'NETWORK_ERROR',
          status: 0,
          message: `No answer from ${options.baseUrl} (${request.method} ${request.path}): ${describeFetchFailure(error)}`,
          cause: error,
        });
      }
      if (
        response.status === 401 &&
        (credential.kind === 'oauth' || credential.kind === 'embed') &&
        !state.reauthorized
      ) {
        // The token may have been revoked or rotated early: one fresh token, then the API decides.
        state.reauthorized = true;
        credential.tokens.invalidate(token ?? '');
        continue;
      }
      if (!response.ok) throw errorFromResponse(response.status, response.headers, text);
      if (request.responseType === 'text') return text as T;
      if (response.status === 204 || text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw new QuarryError({
          code: 'INVALID_RESPONSE',
          status: response.status,
          message: `The gateway answered ${request.method} ${request.path} with a body that is not JSON; check the base URL.`,
          requestId: response.headers.get('x-request-id') ?? undefined,
          cause: error,
        });
      }
    }
  }

  return {
    async send<T>(request: ApiRequest): Promise<T> {
      const caller = request.signal;
      if (caller?.aborted) throw caller.reason;
      const url = urlOf(options.baseUrl, request);
      const controller = new AbortController();
      const onCallerAbort = () => controller.abort(caller?.reason);
      caller?.addEventListener('abort', onCallerAbort, { once: true });
      const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
      let lastError: QuarryError | undefined;
      const timer =
        options.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              controller.abort(
                new TimeoutError({
                  code: 'TIMEOUT',
                  status: 0,
                  message: `${request.method} ${request.path} did not finish within ${options.timeoutMs} ms${lastError ? ` (last error: ${lastError.code})` : ''}.`,
                  cause: lastError,
                }),
              );
            }, options.timeoutMs);
      const state = { reauthorized: false };
      try {
        for (let retries = 0; ; retries++) {
          try {
            return await attempt<T>(request, url, controller.signal, state);
          } catch (error) {
            if (controller.signal.aborted) throw controller.signal.reason;
            if (!(error instanceof QuarryError)) throw error;
            lastError = error;
            const delay = retryDelayMs(error, retries, request.idempotent, retry);
            // A retry that could only start after the deadline would be wasted: fail now.
            if (delay === undefined || Date.now() + delay >= deadline) throw error;
            await sleep(delay, controller.signal);
          }
        }
      } finally {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onCallerAbort);
      }
    },
  };
}
