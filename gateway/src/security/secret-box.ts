// Encryption at rest for connection credentials: AES-256-GCM with a random 96-bit IV per seal.
// The sealed bytes are a versioned envelope naming the key id, so keys can rotate: new seals
// use the current key while older ids stay in the key ring to open what they sealed.
//
// Envelope: [version 0x01][key id length][key id, UTF-8][IV, 12 bytes][GCM tag, 16][ciphertext]
// The header (version + key id) is authenticated as additional data, so swapping the key id or
// any other byte makes open() fail instead of returning garbage.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SecurityError } from './security-error.js';

/** Options for {@link createSecretBox}. */
export interface SecretBoxOptions {
  /** Every key that may have sealed stored data, by id; each exactly 32 bytes. */
  readonly keys: Readonly<Record<string, Uint8Array>>;
  /** The id of the key new seals use; must be in `keys`. */
  readonly current: string;
}

/** Seals and opens secrets. */
export interface SecretBox {
  /** The key id new seals are made with. */
  readonly currentKeyId: string;
  /** Encrypts `plaintext` (UTF-8) under the current key. */
  seal(plaintext: string): Buffer;
  /** Decrypts a sealed envelope; SecurityError when the key is unknown or the bytes were altered. */
  open(sealed: Uint8Array): string;
  /** The key id a sealed envelope names (to find rows to re-seal after a rotation). */
  keyIdOf(sealed: Uint8Array): string;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

interface Envelope {
  readonly header: Buffer;
  readonly keyId: string;
  readonly iv: Buffer;
  readonly tag: Buffer;
  readonly ciphertext: Buffer;
}

function parseEnvelope(sealed: Uint8Array): Envelope {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const idLength = bytes[1] ?? 0;
  const headerLength = 2 + idLength;
  if (bytes[0] !== VERSION || idLength === 0 || bytes.length < headerLength + IV_BYTES + TAG_BYTES) {
    throw new SecretUnreadable('not a sealed secret of a known version');
  }
  const ivEnd = headerLength + IV_BYTES;
  return {
    header: bytes.subarray(0, headerLength),
    keyId: bytes.subarray(2, headerLength).toString('utf8'),
    iv: bytes.subarray(headerLength, ivEnd),
    tag: bytes.subarray(ivEnd, ivEnd + TAG_BYTES),
    ciphertext: bytes.subarray(ivEnd + TAG_BYTES),
  };
}

class SecretUnreadable extends SecurityError {
  constructor(why: string, cause?: unknown) {
    super('SECRET_UNREADABLE', `cannot open sealed secret: ${why}`, { cause });
  }
}

/** Builds a secret box over a key ring; throws at once on a malformed ring. */
export function createSecretBox(options: SecretBoxOptions): SecretBox {
  const keys = new Map<string, Buffer>();
  for (const [id, key] of Object.entries(options.keys)) {
    const idBytes = Buffer.byteLength(id, 'utf8');
    if (idBytes === 0 || idBytes > 255) throw new RangeError(`secret key id "${id}" must be 1-255 bytes`);
    if (key.byteLength !== KEY_BYTES)
      throw new RangeError(`secret key "${id}" must be 32 bytes, not ${key.byteLength}`);
    keys.set(id, Buffer.from(key));
  }
  const currentKey = keys.get(options.current);
  if (currentKey === undefined)
    throw new RangeError(`current secret key "${options.current}" is not in the key ring`);
  const currentId = Buffer.from(options.current, 'utf8');

  return {
    currentKeyId: options.current,
    seal(plaintext) {
      const header = Buffer.concat([Buffer.from([VERSION, currentId.length]), currentId]);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(header);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
    },
    open(sealed) {
      const envelope = parseEnvelope(sealed);
      const key = keys.get(envelope.keyId);
      if (key === undefined) {
        throw new SecurityError(
          'SECRET_KEY_UNKNOWN',
          `cannot open sealed secret: it was sealed with key "${envelope.keyId}", which is not configured`,
        );
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, envelope.iv);
        decipher.setAAD(envelope.header);
        decipher.setAuthTag(envelope.tag);
        return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8');
      } catch (error) {
        throw new SecretUnreadable(
          `authentication failed (wrong key "${envelope.keyId}" or altered data)`,
          error,
        );
      }
    },
    keyIdOf: (sealed) => parseEnvelope(sealed).keyId,
  };
}
