// Console passwords: scrypt (node:crypto) with a random 16-byte salt per password, stored as
// `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>` so the cost can be raised later and old hashes
// still verify. A password is never stored or logged in clear; verification compares in constant
// time. scrypt runs on libuv's thread pool, so a login never blocks the event loop; the gateway
// hashes through createPasswordHasher, whose limiter keeps the pool's other threads for queries.
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { HashLimiter } from './hash-limiter.js';

/** Shortest and longest password accepted (bytes beyond the maximum only cost CPU). */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/** N = 2^15, r = 8, p = 1: OWASP's scrypt minimum; about 50–100 ms and 32 MiB a hash here. */
const DEFAULT_COST = { log2N: 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

const optionsOf = (log2N: number, r: number, p: number): ScryptOptions => ({
  N: 2 ** log2N,
  r,
  p,
  // Node's default maxmem (32 MiB) is exactly 128·N·r at N = 2^15: leave headroom.
  maxmem: 256 * 2 ** log2N * r + 1024 * 1024,
});

/** The stored form of `password`. */
export async function hashPassword(password: string, cost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, optionsOf(cost.log2N, cost.r, cost.p));
  return ['scrypt', cost.log2N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Whether `password` is the one `stored` was made from; false for a malformed `stored`. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [log2N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![log2N, r, p].every((n) => Number.isInteger(n) && n > 0) || log2N > 20) return false;
  const salt = Buffer.from(parts[4] as string, 'base64');
  const expected = Buffer.from(parts[5] as string, 'base64');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await scryptAsync(password, salt, optionsOf(log2N, r, p));
  return timingSafeEqual(key, expected);
}

/**
 * A hash of a random password, verified against when no account has the email, so a login for
 * an unknown address costs the same time as one with a wrong password (no account enumeration
 * by timing).
 */
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  // A failed attempt is not kept: the next login makes another.
  decoy.catch(() => {
    decoy = undefined;
  });
  return decoy;
}

/** Hashing and verifying through a limiter: what the gateway's routes and services use. */
export interface PasswordHasher {
  /** The stored form of `password`; RATE_LIMIT_EXCEEDED when the limiter's queue is full. */
  hash(password: string): Promise<string>;
  /**
   * Whether `password` matches `stored`; with `stored` null (no account, or none with a
   * password) it is checked against the decoy, through the same limiter, so an unknown email
   * waits in the same queue and costs the same hash. RATE_LIMIT_EXCEEDED when the queue is full.
   */
  verify(password: string, stored: string | null): Promise<boolean>;
  /** RATE_LIMIT_EXCEEDED now if a hash would be refused now (see HashLimiter.refuseIfFull). */
  refuseIfBusy(): void;
}

export function createPasswordHasher(limiter: HashLimiter): PasswordHasher {
  return {
    refuseIfBusy: () => limiter.refuseIfFull(),
    hash: (password) => limiter.run(() => hashPassword(password)),
    async verify(password, stored) {
      // One pass through the queue either way (two would make an unknown email slower under
      // load); the decoy's own hash, made once per process, runs inside the same slot.
      const ok = await limiter.run(async () =>
        verifyPassword(password, stored ?? (await decoyPasswordHash())),
      );
      return ok && stored !== null;
    },
  };
}
