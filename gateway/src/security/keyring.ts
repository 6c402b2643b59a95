// The operator's key ring (QUARRY_SECRET_KEY): the AES-256 keys that seal connection secrets and
// sign try-tokens, the first one current. Parsed once, by the config loader.

/** Keys by id; `current` seals and signs, the others only open what they sealed before a rotation. */
export interface Keyring {
  readonly keys: Readonly<Record<string, Buffer>>;
  readonly current: string;
}

/** Parses `id:base64,id:base64` (first is current) or one bare base64 key; throws naming the problem. */
export function parseKeyring(text: string): Keyring {
  const keys: Record<string, Buffer> = {};
  let current: string | undefined;
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(':');
    const [id, b64] = colon > 0 ? [part.slice(0, colon), part.slice(colon + 1)] : ['k1', part];
    const key = Buffer.from(b64, 'base64');
    if (key.length !== 32) throw new Error(`QUARRY_SECRET_KEY: key "${id}" must be 32 bytes of base64`);
    keys[id] = key;
    current ??= id;
  }
  if (current === undefined) throw new Error('QUARRY_SECRET_KEY is empty');
  return { keys, current };
}
