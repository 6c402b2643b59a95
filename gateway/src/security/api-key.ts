// API keys: `qry_<env>_<body><checksum>`, e.g. `qry_live_1bV3…Zq9xK2`.
// - body: 128 random bits (crypto.randomBytes) as 22 base62 digits;
// - checksum: CRC32 of everything before it, as 6 base62 digits, so a mistyped or truncated
//   key is refused before any store lookup (CRC32 catches every single-character change);
// - only the SHA-256 digest is stored; the secret is shown once. Lookup is by digest, so the
//   database never compares secrets; comparisons in code use constant-time equality.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { encodeBase62, encodeBase62Number, isBase62 } from './base62.js';

/** `live` keys are for production traffic, `test` keys for development. */
export type ApiKeyEnvironment = 'live' | 'test';

/** A newly generated key. `secret` is shown to its owner once and never stored. */
export interface GeneratedApiKey {
  readonly secret: string;
  /** The visible start of the key (12 characters), stored and listed to tell keys apart. */
  readonly prefix: string;
  /** SHA-256 of the whole secret: what the store keeps and looks keys up by. */
  readonly digest: Buffer;
  readonly environment: ApiKeyEnvironment;
}

/** The outcome of {@link parseApiKey}. */
export type ParsedApiKey =
  | {
      readonly ok: true;
      readonly digest: Buffer;
      readonly prefix: string;
      readonly environment: ApiKeyEnvironment;
    }
  | { readonly ok: false; readonly reason: string };

const BODY_DIGITS = 22;
const CHECKSUM_DIGITS = 6;
/** Characters of a key shown in listings. */
export const API_KEY_PREFIX_LENGTH = 12;
const SHAPE = /^qry_(live|test)_([0-9A-Za-z]+)$/;
const KEY_LENGTH = 'qry_live_'.length + BODY_DIGITS + CHECKSUM_DIGITS;

function checksumOf(head: string): string {
  return encodeBase62Number(crc32(head), CHECKSUM_DIGITS);
}

/** SHA-256 of a key's full text. */
export function digestKey(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Makes a new random key. */
export function generateApiKey(environment: ApiKeyEnvironment = 'live'): GeneratedApiKey {
  const head = `qry_${environment}_${encodeBase62(randomBytes(16), BODY_DIGITS)}`;
  const secret = head + checksumOf(head);
  return { secret, prefix: secret.slice(0, API_KEY_PREFIX_LENGTH), digest: digestKey(secret), environment };
}

/**
 * Checks a presented key's shape and checksum without any I/O. A refused key gets a reason
 * fit for logs; callers answer every refusal with the same UNAUTHENTICATED.
 */
export function parseApiKey(text: string): ParsedApiKey {
  if (text.length !== KEY_LENGTH) return { ok: false, reason: 'wrong length for a Quarry API key' };
  const match = SHAPE.exec(text);
  if (match === null || !isBase62(match[2] ?? '')) return { ok: false, reason: 'not a Quarry API key' };
  const head = text.slice(0, -CHECKSUM_DIGITS);
  const expected = Buffer.from(checksumOf(head));
  if (!timingSafeEqual(expected, Buffer.from(text.slice(-CHECKSUM_DIGITS)))) {
    return { ok: false, reason: 'checksum mismatch (mistyped or truncated key)' };
  }
  return {
    ok: true,
    digest: digestKey(text),
    prefix: text.slice(0, API_KEY_PREFIX_LENGTH),
    environment: match[1] as ApiKeyEnvironment,
  };
}

/**
 * Constant-time string equality (for admin tokens and the like): both sides are hashed first,
 * so neither the content nor the length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digestKey(a), digestKey(b));
}
