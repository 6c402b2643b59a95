// A small HTTP server on loopback for the client's tests: it records every request (method,
// path, headers, body, when it arrived) and answers with whatever the test's handler returns.
// A handler may also hang (never answer) or cut the connection, to play a broken gateway.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query string. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `performance.now()` when the request had been read. */
  readonly receivedAt: number;
}

/** What the handler answers: a response, `hang` (never answer), or `reset` (destroy the socket). */
export type TestAnswer =
  | {
      readonly status: number;
      /** Sent as JSON unless it is a string. */
      readonly body?: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | 'hang'
  | 'reset';

export type TestHandler = (request: RecordedRequest, index: number) => TestAnswer | Promise<TestAnswer>;

export interface TestServer {
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Requests to paths starting with `prefix`. */
  requestsTo(prefix: string): readonly RecordedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once a hung request's connection was closed by the client, `count` in all. */
  waitForClosedHangs(count: number): Promise<void>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /**
   * Answer CORS preflights (not recorded) and allow every origin: for a browser-like fetch
   * such as happy-dom's, which enforces CORS like a browser.
   */
  readonly cors?: boolean;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type, idempotency-key, cache-control',
  'access-control-allow-methods': 'GET, POST, PUT, DELETE',
};

/** Starts a server on 127.0.0.1 (a free port) answering with `handler`. */
export async function startTestServer(
  handler: TestHandler,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const closeWaiters: { count: number; resolve: () => void }[] = [];
  let closedHangs = 0;
  const notify = () => {
    for (const w of waiters.splice(0)) {
      if (requests.length >= w.count) w.resolve();
      else waiters.push(w);
    }
    for (const w of closeWaiters.splice(0)) {
      if (closedHangs >= w.count) w.resolve();
      else closeWaiters.push(w);
    }
  };
  const server = createServer((req, res) => {
    if (options.cors && req.method === 'OPTIONS') {
      res.writeHead(204, CORS_HEADERS).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: performance.now(),
      };
      requests.push(recorded);
      notify();
      let answer: TestAnswer;
      try {
        answer = await handler(recorded, requests.length - 1);
      } catch (error) {
        answer = { status: 599, body: `test handler failed: ${(error as Error).message}` };
      }
      if (answer === 'hang') {
        res.on('close', () => {
          closedHangs++;
          notify();
        });
        return;
      }
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      const text =
        answer.body === undefined
          ? ''
          : typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        ...(typeof answer.body === 'string' || answer.body === undefined
          ? {}
          : { 'content-type': 'application/json' }),
        ...(options.cors ? CORS_HEADERS : {}),
        ...answer.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo: (prefix) => requests.filter((r) => r.url.startsWith(prefix)),
    waitForRequests: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    waitForClosedHangs: (count) =>
      closedHangs >= count
        ? Promise.resolve()
        : new Promise((resolve) => closeWaiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Quarry error envelope answer. */
export function envelope(
  status: number,
  code: string,
  extra: { retry_after?: number; details?: unknown[]; headers?: Record<string, string> } = {},
): TestAnswer {
  const { headers, ...rest } = extra;
  return {
    status,
    body: {
      error: { code, message: `${code} from the test server`, request_id: 'req_test', details: [], ...rest },
    },
    headers: { 'x-request-id': 'req_test', ...headers },
  };
}

/** A minimal successful query answer. */
export function queryAnswer(
  rows: readonly Record<string, unknown>[] = [{ region: 'EU', revenue: 1 }],
): TestAnswer {
  return {
    status: 200,
    body: {
      source: 'sales-by-region',
      results: rows,
      columns: [
        { name: 'region', type: 'string' },
        { name: 'revenue', type: 'number' },
      ],
      meta: {
        request_id: 'req_ok',
        cached: false,
        duration_ms: 1,
        row_count: rows.length,
        truncated: false,
        credits: 1,
        version: 1,
      },
    },
  };
}
