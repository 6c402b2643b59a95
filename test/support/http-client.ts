// A small HTTP client for the end-to-end tests that remembers every response body it saw, so the
// secrets scan can check all of them at the end.
export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
  readonly body: any;
}

export interface RequestOptions {
  /** An API key sent as `Authorization: Bearer …`. */
  readonly key?: string;
  /** A value sent as JSON (with Content-Type: application/json). */
  readonly json?: unknown;
  /** A raw body (no Content-Type unless given in headers). */
  readonly raw?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpClient {
  request(base: string, method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
  /** Every response body seen so far, in order. */
  readonly bodies: readonly string[];
}

export function createHttpClient(): HttpClient {
  const bodies: string[] = [];
  return {
    bodies,
    async request(base, method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
      let body: string | undefined = options.raw;
      if (options.json !== undefined) {
        body = JSON.stringify(options.json);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.text();
      bodies.push(text);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, text, body: parsed };
    },
  };
}
