// The operator's key ring: the AES-256 keys that seal connection secrets and OAuth signing keys
// and sign try-tokens. One key is current (it seals and signs); the others are only readable
// (they open what they sealed before a rotation). Parsed once, by the config loader, from
// QUARRY_SECRET_KEY (`id:base64[,id:base64…]`, the first current, or one bare base64 key with
// the id `k1`) and QUARRY_SECRET_KEYS_READABLE (`id:base64[,…]`, never current), so a rotation
// is three restarts: add the new key as readable, make it current, drop the old one
// (docs/deploy.md).

/** Keys by id; `current` seals and signs, the others only open what they sealed before a rotation. */
export interface Keyring {
  readonly keys: Readonly<Record<string, Buffer>>;
  readonly current: string;
}

/** The id a bare base64 key (no `id:`) gets. */
export const DEFAULT_KEY_ID = 'k1';

/** `id:base64,…` (or one bare key) as `[id, key]` pairs in order; throws naming the problem. */
function parseKeyList(variable: string, text: string): [string, Buffer][] {
  const entries: [string, Buffer][] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    const [id, b64] = colon > 0 ? [part.slice(0, colon), part.slice(colon + 1)] : [DEFAULT_KEY_ID, part];
    if (Buffer.byteLength(id) > 255)
      throw new Error(`${variable}: key id "${id.slice(0, 20)}…" is over 255 bytes`);
    const key = Buffer.from(b64, 'base64');
    if (key.length !== 32) throw new Error(`${variable}: key "${id}" must be 32 bytes of base64`);
    if (entries.some(([known]) => known === id)) throw new Error(`${variable}: key id "${id}" appears twice`);
    entries.push([id, key]);
  }
  return entries;
}

/**
 * Parses QUARRY_SECRET_KEY (first key current, any others readable) and the optional
 * QUARRY_SECRET_KEYS_READABLE; throws naming the problem.
 */
export function parseKeyring(text: string, readableText?: string): Keyring {
  const sealing = parseKeyList('QUARRY_SECRET_KEY', text);
  const readable =
    readableText === undefined ? [] : parseKeyList('QUARRY_SECRET_KEYS_READABLE', readableText);
  const [first] = sealing;
  if (first === undefined) throw new Error('QUARRY_SECRET_KEY is empty');
  const keys: Record<string, Buffer> = Object.fromEntries(sealing);
  for (const [id, key] of readable) {
    // The same id with two keys would open a row with whichever came last: refuse it.
    if (keys[id] !== undefined && !keys[id].equals(key)) {
      throw new Error(
        `QUARRY_SECRET_KEYS_READABLE: key id "${id}" is also in QUARRY_SECRET_KEY with another key`,
      );
    }
    keys[id] = key;
  }
  return { keys, current: first[0] };
}
