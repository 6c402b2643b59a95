// A fixed body (a documentation asset, the OpenAPI document) served compressed: brotli or gzip as
// the client's Accept-Encoding allows, each variant compressed once, on first use, and kept.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Context } from 'hono';
import { matchesIfNoneMatch } from '../cache/etag.js';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Encoding = 'br' | 'gzip' | 'identity';

/** The encoding to send: brotli, else gzip, else none, as `Accept-Encoding` allows (q=0 refuses). */
export function pickEncoding(header: string | undefined): Encoding {
  if (header === undefined) return 'identity';
  const allowed = new Set<string>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    allowed.add(name.trim());
  }
  if (allowed.has('br')) return 'br';
  if (allowed.has('gzip') || allowed.has('*')) return 'gzip';
  return 'identity';
}

export interface CompressedBody {
  /** A strong, quoted ETag of the uncompressed bytes. */
  readonly etag: string;
  /** The response for `c`: its encoding, `Vary: Accept-Encoding` and the ETag (304 on a match). */
  respond(c: Context, headers: Readonly<Record<string, string>>): Promise<Response>;
  /** Compresses the brotli variant now (what browsers ask for), so a first reader need not wait. */
  warm(): Promise<void>;
}

export function compressedBody(body: Buffer): CompressedBody {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const variants = new Map<Encoding, Promise<Buffer>>([['identity', Promise.resolve(body)]]);
  const variant = (encoding: Encoding): Promise<Buffer> => {
    let bytes = variants.get(encoding);
    if (bytes === undefined) {
      bytes =
        encoding === 'br'
          ? brotli(body, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 9,
                [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
              },
            })
          : gzipAsync(body, { level: 9 });
      variants.set(encoding, bytes);
    }
    return bytes;
  };
  return {
    etag,
    async warm() {
      await variant('br');
    },
    async respond(c, headers) {
      const encoding = pickEncoding(c.req.header('accept-encoding'));
      const common: Record<string, string> = { ...headers, ETag: etag, Vary: 'Accept-Encoding' };
      if (matchesIfNoneMatch(c.req.header('if-none-match'), etag)) {
        return c.body(null, 304, common);
      }
      const bytes = await variant(encoding);
      if (encoding !== 'identity') common['Content-Encoding'] = encoding;
      return c.body(new Uint8Array(bytes), 200, common);
    },
  };
}
