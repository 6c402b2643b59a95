// What the node:http fast paths share: which requests they take (a POST to one path with a
// Content-Length body within the limit, so it can be read whole), reading that body, the
// caller's address, and the request's abort signal.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress } from '../security/client-address.js';

/** A POST to `path` whose body is declared, not chunked, and within `bodyLimit`. */
export function isBoundedPost(req: IncomingMessage, path: string, bodyLimit: number): boolean {
  const length = req.headers['content-length'];
  return (
    req.method === 'POST' &&
    req.url === path &&
    length !== undefined &&
    req.headers['transfer-encoding'] === undefined &&
    Number(length) <= bodyLimit
  );
}

/** Reads the whole (bounded) body, then calls `then` with it. */
export function readBody(req: IncomingMessage, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.once('end', () => then(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
}

/** The address per-address limits count against (node:http joins repeated X-Forwarded-For). */
export function requestAddress(req: IncomingMessage, trustProxyHops: number): string {
  return clientAddress(
    req.socket.remoteAddress,
    req.headers['x-forwarded-for'] as string | undefined,
    trustProxyHops,
  );
}

/**
 * The request's abort signal, made on the first ask only (a warehouse query; a cache hit never
 * asks): aborted when the caller goes away before its answer was written.
 */
export function lazyAbortSignal(res: ServerResponse): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller === undefined) {
      const aborter = new AbortController();
      controller = aborter;
      res.once('close', () => {
        if (!res.writableFinished) aborter.abort();
      });
    }
    return controller.signal;
  };
}
