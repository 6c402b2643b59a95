// OAuth client identifiers and secrets. A client has a record id (`ocl_…`, how the management API
// names it), a public `client_id` (`qci_…`, what it authenticates with) and a secret (`qcs_…`,
// 256 random bits, shown once). Only the secret's SHA-256 digest is stored; a presented secret is
// checked by comparing digests in constant time, and an unknown client costs the same work, so
// timing tells an attacker neither which client ids exist nor how much of a secret was right.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { digestKey } from '../security/api-key.js';
import { encodeBase62 } from '../security/base62.js';

/** A client's identifiers and its secret, as generated at creation. */
export interface GeneratedClientCredentials {
  /** The record id, `ocl_` + 22 base62 digits. */
  readonly id: string;
  /** The public client identifier, `qci_` + 22 base62 digits. */
  readonly clientId: string;
  /** `qcs_` + 43 base62 digits: shown to the owner once, never stored. */
  readonly secret: string;
  /** SHA-256 of the secret: what the store keeps. */
  readonly secretDigest: Buffer;
}

const CLIENT_ID_SHAPE = /^qci_[0-9A-Za-z]{22}$/;
// Compared against when the client is unknown, so that path does the same work as a real one.
const DECOY_DIGEST = digestKey('qcs_decoy');

/** Makes a new client's identifiers and secret. */
export function generateClientCredentials(): GeneratedClientCredentials {
  const secret = `qcs_${encodeBase62(randomBytes(32), 43)}`;
  return {
    id: `ocl_${encodeBase62(randomBytes(16), 22)}`,
    clientId: `qci_${encodeBase62(randomBytes(16), 22)}`,
    secret,
    secretDigest: digestKey(secret),
  };
}

/** True when `text` has the shape of a client_id (no store lookup is worth making otherwise). */
export function isClientIdShaped(text: string): boolean {
  return CLIENT_ID_SHAPE.test(text);
}

/**
 * Whether `presented` is the secret whose digest is `storedDigest` (null: the client is unknown,
 * which is checked against a decoy so it takes as long and always fails).
 */
export function secretMatches(presented: string, storedDigest: Uint8Array | null): boolean {
  const digest = digestKey(presented);
  const expected = storedDigest === null ? DECOY_DIGEST : Buffer.from(storedDigest);
  const equal = expected.length === digest.length && timingSafeEqual(digest, expected);
  return equal && storedDigest !== null;
}
