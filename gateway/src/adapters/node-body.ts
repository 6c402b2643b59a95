// What the node:http fast paths share: which requests they take (a POST to one path with a
// Content-Length body within the limit, so it can be read whole), reading that body, the
// caller's address, and the request's abort signal.
import { getEventListeners } from 'node:events';
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

/** Most unaborted AbortControllers kept for later requests (see lazyAbortSignal). */
const MAX_SPARE_CONTROLLERS = 64;
const spareControllers: AbortController[] = [];

/**
 * The request's abort signal, made on the first ask only (a warehouse query; a cache hit never
 * asks): aborted when the caller goes away before its answer was written. Making an
 * AbortController costs a few µs, a noticeable share of a cheap call, so a controller whose
 * answer was written whole, unaborted and with no listener left on it, serves a later request.
 */
export function lazyAbortSignal(res: ServerResponse): () => AbortSignal {
  let controller: AbortController | undefined;
  return () => {
    if (controller === undefined) {
      const aborter = spareControllers.pop() ?? new AbortController();
      controller = aborter;
      res.once('close', () => {
        if (!res.writableFinished) aborter.abort();
        else if (
          spareControllers.length < MAX_SPARE_CONTROLLERS &&
          getEventListeners(aborter.signal, 'abort').length === 0
        )
          spareControllers.push(aborter);
      });
    }
    return controller.signal;
  };
}
