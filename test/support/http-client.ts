// A small HTTP client for the end-to-end tests that remembers every response body it saw, so the
// secrets scan can check all of them at the end. With `localAddress` its connections leave from
// that address (any of 127.0.0.0/8 on Linux), so a test can be several clients to a proxy; fetch
// cannot choose its source address, so that client speaks node:http instead.
import { Agent, request as httpRequest } from 'node:http';

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

export interface HttpClientOptions {
  /** The source address of every connection (http:// only), e.g. `127.0.0.2`. */
  readonly localAddress?: string;
}

interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

type Send = (
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<RawResponse>;

async function sendWithFetch(url: string, method: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function sendFrom(localAddress: string): Send {
  const agent = new Agent({ keepAlive: true, localAddress });
  return (url, method, headers, body) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(url, { method, headers, agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const received = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : [value ?? '']) received.append(name, v);
          }
          resolve({ status: res.statusCode ?? 0, headers: received, text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
}

export function createHttpClient(clientOptions: HttpClientOptions = {}): HttpClient {
  const bodies: string[] = [];
  const { localAddress } = clientOptions;
  const send = localAddress === undefined ? sendWithFetch : sendFrom(localAddress);
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
      const response = await send(`${base}${path}`, method, headers, body);
      bodies.push(response.text);
      let parsed: unknown;
      try {
        parsed = JSON.parse(response.text);
      } catch {
        parsed = undefined;
      }
      return { ...response, body: parsed };
    },
  };
}
