// Every request of one driver client goes through the connection's pinned HTTP (bigquery-http.ts)
// instead of the driver's own stack. @google-cloud/bigquery sends everything (jobs.insert,
// getQueryResults, jobs.get, cancel, …) through its client's `makeAuthenticatedRequest`, an
// instance property: this replaces it on that one client — never a module or a global, other
// connections share the process — with a function that does what @google-cloud/common's did
// (authorize with the client's own auth client, send, retry 408/429/5xx and unanswered requests,
// answer `(error, body, response)` with BigQuery's `{error: {code, errors}}` as an ApiError-shaped
// error) over gaxios and the guarded agents. Streaming requests (uploads) are not supported: the
// connector makes none.
import type { BigQuery } from '@google-cloud/bigquery';
import { isDestinationRefusal } from '@quarry/sdk-connector';
import type { BigqueryHttp } from './bigquery-http.js';

/** A request as the driver hands it over (the `request` library's options, as teeny-request reads them). */
interface DriverRequest {
  readonly uri: string;
  readonly method?: string;
  readonly qs?: Readonly<Record<string, unknown>>;
  readonly json?: unknown;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeout?: number;
  readonly maxRetries?: number;
}

/** The response the driver's callbacks get as their third argument. */
interface DriverResponse {
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

type DriverCallback = (error: Error | null, body?: unknown, response?: DriverResponse) => void;

/** One of BigQuery's error entries (`{reason, message}`). */
interface ErrorEntry {
  readonly reason?: string;
  readonly message?: string;
}

/**
 * A failed API request as @google-cloud/common's ApiError has it: `code` the HTTP status (or
 * BigQuery's), `errors` BigQuery's entries, `response` the answer. The driver reads `code`
 * (409 on a re-sent insert), the connector's error mapping reads both.
 */
export class BigqueryApiError extends Error {
  readonly code: number;
  readonly errors: readonly ErrorEntry[];
  readonly response: DriverResponse;

  constructor(code: number, message: string, errors: readonly ErrorEntry[], response: DriverResponse) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.errors = errors;
    this.response = response;
  }
}

/** How requests are retried (the connection's `maxRetries`, and retry-request's pacing). */
export interface RetrySettings {
  readonly maxRetries: number;
  /** The longest pause between two attempts. */
  readonly maxRetryDelayMs: number;
}

/** Statuses @google-cloud/common retries. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);
/** Time limit of one request (teeny-request's default in the driver); long-polls ask ≤ 10 s. */
const REQUEST_TIMEOUT_MS = 60_000;
/** Paging fields the driver's callers leave in requests, which it strips before sending. */
const DRIVER_ONLY_FIELDS: ReadonlySet<string> = new Set(['autoPaginate', 'autoPaginateVal']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function withoutDriverFields(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !DRIVER_ONLY_FIELDS.has(key)));
}

/** The request's URL with its query string (`undefined` values left out, arrays repeated). */
function urlOf(request: DriverRequest): URL {
  const url = new URL(request.uri);
  for (const [key, value] of Object.entries(withoutDriverFields(request.qs ?? {}) as object)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) url.searchParams.append(key, String(item));
    }
  }
  return url;
}

/** The body as text, or undefined when JSON does not parse (a proxy's HTML page). */
function parsedBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The driver's view of an answer: the body, and an ApiError-shaped error for a failed one. */
function answerOf(status: number, statusText: string, headers: Headers, text: string) {
  const body = parsedBody(text);
  // forEach, not entries(): the same in every typing of Headers (Node's and the DOM's).
  const headerValues: Record<string, string> = {};
  headers.forEach((value, name) => {
    headerValues[name] = value;
  });
  const response: DriverResponse = {
    statusCode: status,
    statusMessage: statusText,
    headers: headerValues,
    body,
  };
  const failure = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (failure === undefined && status >= 200 && status <= 299) return { error: null, body, response };
  const errors = Array.isArray(failure?.errors) ? (failure.errors as ErrorEntry[]) : [];
  const code = typeof failure?.code === 'number' ? failure.code : status;
  const message =
    typeof failure?.message === 'string' ? failure.message : statusText || `HTTP ${String(status)}`;
  return { error: new BigqueryApiError(code, message, errors, response), body, response };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Makes `client` send every request through `http`: after this, no request of the client (or
 * of the jobs and datasets it hands out) uses the driver's own HTTP stack.
 */
export function sendThrough(client: BigQuery, http: BigqueryHttp, retry: RetrySettings): void {
  const original = client.makeAuthenticatedRequest;
  const auth = original.authClient;

  async function exchange(request: DriverRequest): Promise<ReturnType<typeof answerOf>> {
    const url = urlOf(request);
    const headers = new Headers(request.headers);
    let data: string | undefined;
    if (request.json !== undefined && typeof request.json === 'object') {
      headers.set('content-type', 'application/json');
      data = JSON.stringify(withoutDriverFields(request.json));
    } else if (typeof request.body === 'string') {
      data = request.body;
    }
    // The client's own auth client adds the bearer token (getting one first when it has none).
    const authorized = await auth.authorizeRequest({ url: url.href, headers });
    const retries = request.maxRetries ?? retry.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let answered: Awaited<ReturnType<BigqueryHttp['send']>>;
      try {
        answered = await http.send({
          url: url.href,
          method: (request.method ?? 'GET').toUpperCase() as 'GET',
          headers: authorized.headers,
          ...(data === undefined ? {} : { data }),
          responseType: 'text',
          validateStatus: () => true,
          timeout: request.timeout ?? REQUEST_TIMEOUT_MS,
        });
      } catch (error) {
        // Unanswered (refused connection, reset, timeout): retried, unless the guard refused it.
        if (isDestinationRefusal(error) || attempt >= retries) throw error;
        await pause(Math.min(2 ** attempt * 1000 + Math.random() * 1000, retry.maxRetryDelayMs));
        continue;
      }
      if (RETRIED_STATUSES.has(answered.status) && attempt < retries) {
        await pause(Math.min(2 ** attempt * 1000 + Math.random() * 1000, retry.maxRetryDelayMs));
        continue;
      }
      return answerOf(answered.status, answered.statusText, answered.headers, String(answered.data ?? ''));
    }
  }

  function makeAuthenticatedRequest(request: DriverRequest, optionsOrCallback?: unknown): undefined {
    if (typeof optionsOrCallback !== 'function') {
      throw new Error('the BigQuery connector sends no streaming or pre-authenticated requests');
    }
    const callback = optionsOrCallback as DriverCallback;
    // As the driver's own stack does, a callback that throws is not called a second time.
    exchange(request).then(
      (answer) => callback(answer.error, answer.body, answer.response),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
    return undefined;
  }

  // The driver types this as an overloaded function with properties; only the callback form is
  // ever called on this client, so the one implementation stands for all of them.
  client.makeAuthenticatedRequest = Object.assign(makeAuthenticatedRequest, {
    getCredentials: original.getCredentials,
    authClient: auth,
  }) as unknown as BigQuery['makeAuthenticatedRequest'];
}
