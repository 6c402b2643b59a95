// ETags for query answers. The tag covers only the data (results, columns, insights, analytic
// version), never the per-request meta (request id, timing), so the same data gets the same tag
// whether it came from the cache or the warehouse, and a client's If-None-Match keeps matching
// across refreshes that changed nothing.
import { createHash, hash } from 'node:crypto';

/** Up to this many UTF-16 units the data is hashed in one call (`crypto.hash`, no Hash object: about half the CPU); longer data streams through a Hash instead of being copied into one string. */
const ONE_SHOT_CHARS = 64 * 1024;

/**
 * A strong, quoted ETag (`"<base64url SHA-256>"`) of an answer's data: `json` is its data part as
 * the body carries it (source, results, insights, columns), so a miss serialises its rows once,
 * not once for the body and again for the tag. Equal data and version give equal tags.
 */
export function etagOfJson(version: number, json: string): string {
  const digest =
    json.length <= ONE_SHOT_CHARS
      ? hash('sha256', `${version}\n${json}`, 'base64url')
      : createHash('sha256').update(`${version}\n`).update(json).digest('base64url');
  return `"${digest}"`;
}

/**
 * Whether an `If-None-Match` header matches `etag`, i.e. the answer may be a 304. Uses the weak
 * comparison RFC 9110 §13.1.2 prescribes for If-None-Match (`W/"x"` matches `"x"`), accepts a
 * comma-separated list and `*`, and tolerates unquoted tags some clients send.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined || header.length === 0) return false;
  const wanted = opaqueTag(etag);
  if (header === etag) return true;
  let i = 0;
  while (i < header.length) {
    while (i < header.length && (header[i] === ' ' || header[i] === '\t' || header[i] === ',')) i++;
    if (i >= header.length) break;
    if (header[i] === '*') return true;
    let start = i;
    if (header.startsWith('W/', i)) start = i += 2;
    let end: number;
    if (header[i] === '"') {
      // A quoted tag may itself contain commas: it ends at the closing quote.
      const close = header.indexOf('"', i + 1);
      end = close === -1 ? header.length : close + 1;
    } else {
      const comma = header.indexOf(',', i);
      end = comma === -1 ? header.length : comma;
    }
    if (opaqueTag(header.slice(start, end).trim()) === wanted) return true;
    i = end;
  }
  return false;
}

// The tag without its W/ prefix, always quoted.
function opaqueTag(tag: string): string {
  const bare = tag.startsWith('W/') ? tag.slice(2) : tag;
  return bare.startsWith('"') ? bare : `"${bare}"`;
}
