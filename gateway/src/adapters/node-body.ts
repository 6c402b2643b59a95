// What the node:http fast paths share: which requests they take (a POST to one path with a
// Content-Length body within the limit, so it can be read whole) and reading that body.
import type { IncomingMessage } from 'node:http';

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
