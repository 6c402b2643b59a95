// Base62 (0-9, A-Z, a-z) of unsigned integers at a fixed width: URL- and copy-paste-safe text
// for API keys, their checksums and record ids, with no separators a double-click would split.

/** The 62 digits, in value order. */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Encodes `bytes` (big-endian) as exactly `width` base62 digits, left-padded with zeros. */
export function encodeBase62(bytes: Uint8Array, width: number): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  while (value > 0n) {
    out = BASE62_ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  if (out.length > width) throw new RangeError(`value needs ${out.length} base62 digits, more than ${width}`);
  return out.padStart(width, '0');
}

/** Encodes a non-negative safe integer as exactly `width` base62 digits. */
export function encodeBase62Number(value: number, width: number): string {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value));
  return encodeBase62(bytes, width);
}

const DIGITS = /^[0-9A-Za-z]*$/;

/** True when `text` consists only of base62 digits. */
export function isBase62(text: string): boolean {
  return DIGITS.test(text);
}
