// Credentials this instance has verified lately, remembered by fingerprint (a SHA-256 of the
// Authorization value, never the secret itself). When an address is refused for sending too many
// bad credentials, one of these is still authenticated as usual: an attacker sharing a NAT or a
// proxy with real callers cannot lock them out, and cannot forge an entry without the secret.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface KnownCredentials {
  /** Whether `authorization` verified on this instance within the memory's lifetime. */
  has(authorization: string | undefined): boolean;
  /** Remembers a credential that just verified. */
  add(authorization: string | undefined): void;
}

export interface KnownCredentialsOptions {
  /** Fingerprints kept at most (least recently used dropped first); default 50,000 (≈ 5 MB). */
  readonly max?: number;
  /** How long one is remembered after its last verification; default 24 h. */
  readonly ttlMs?: number;
}

const fingerprint = (authorization: string) => createHash('sha256').update(authorization).digest('base64');

export function createKnownCredentials(options: KnownCredentialsOptions = {}): KnownCredentials {
  const seen = new LRUCache<string, true>({
    max: options.max ?? 50_000,
    ttl: options.ttlMs ?? 24 * 3_600_000,
    updateAgeOnGet: false,
  });
  return {
    has: (authorization) => authorization !== undefined && seen.has(fingerprint(authorization)),
    add(authorization) {
      if (authorization !== undefined) seen.set(fingerprint(authorization), true);
    },
  };
}
