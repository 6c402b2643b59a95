// An HTTP proxy on loopback that forwards every request to one gateway and records it: method,
// path, the Idempotency-Key sent, the status and body answered, and when the request arrived and
// its answer left. Tests use it to count what a client really sent (retries included) and to
// check how long a client waited between attempts.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  /** `performance.now()` when the request arrived at the proxy. */
  readonly receivedAt: number;
  status: number;
  body: string;
  /** `performance.now()` when the answer had been passed back to the client. */
  respondedAt: number;
}

export interface CountingProxy {
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly ProxiedRequest[];
  close(): Promise<void>;
}

/** Starts a proxy to `target` (an http://127.0.0.1:port URL). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    const key = req.headers['idempotency-key'];
    const record: ProxiedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: typeof key === 'string' ? key : undefined,
      receivedAt: performance.now(),
      status: 0,
      body: '',
      respondedAt: 0,
    };
    requests.push(record);
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          record.status = answer.statusCode ?? 0;
          record.body = body.toString('utf8');
          res.writeHead(record.status, answer.headers);
          res.end(body, () => {
            record.respondedAt = performance.now();
          });
        });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
