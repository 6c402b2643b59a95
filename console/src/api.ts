// The console's calls to the gateway's own API: same origin, authenticated by the HttpOnly session
// cookie the browser sends by itself, with the session's CSRF token on every state change. Every
// refusal arrives as the API's error envelope and is thrown as an ApiFailure carrying it.

export interface ErrorDetail {
  readonly field?: string;
  readonly message: string;
}

export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;

/** The session's CSRF token (from `GET /v1/session` or a login), sent as X-CSRF-Token. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

async function failureOf(response: Response): Promise<ApiFailure> {
  try {
    const body = (await response.json()) as {
      error?: { code?: string; message?: string; details?: ErrorDetail[]; retry_after?: number };
    };
    const error = body.error ?? {};
    return new ApiFailure(
      response.status,
      error.code ?? 'INTERNAL',
      error.message ?? `The gateway answered ${response.status}.`,
      error.details ?? [],
      error.retry_after,
    );
  } catch {
    return new ApiFailure(response.status, 'INTERNAL', `The gateway answered ${response.status}.`);
  }
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await failureOf(response);
  return response;
}

/** A JSON call; resolves with the parsed body (undefined for 204). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** `?a=1&b=2` of the defined values. */
export function queryString(values: Readonly<Record<string, string | number | undefined>>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values))
    if (value !== undefined && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** What to show of any error. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure) {
    // A detail the message already says (e.g. "… reached: X" and "config: X") is not repeated.
    const details = error.details
      .filter((d) => !error.message.includes(d.message))
      .map((d) => (d.field ? `${d.field}: ${d.message}` : d.message));
    return [`${error.message}`, ...details].join(' · ');
  }
  return error instanceof Error ? error.message : String(error);
}
