// Console session tokens: `qss_` and 256 random bits in base62. Only the SHA-256 digest is
// stored (a leaked database holds no usable session); the token travels only in the HttpOnly
// cookie. The CSRF token of a session is a one-way hash of its token under its own label: it
// needs no storage, differs per session, and cannot be computed by a page that cannot read the
// cookie (HttpOnly: no page can).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { encodeBase62, isBase62 } from './base62.js';

const PREFIX = 'qss_';
const BODY_DIGITS = 43;

export interface GeneratedSessionToken {
  readonly token: string;
  readonly digest: Buffer;
}

/** SHA-256 of a session token's text: what the store keeps and looks sessions up by. */
export function digestSessionToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function generateSessionToken(): GeneratedSessionToken {
  const token = PREFIX + encodeBase62(randomBytes(32), BODY_DIGITS);
  return { token, digest: digestSessionToken(token) };
}

/** Whether `text` has a session token's shape (checked before any store lookup). */
export function isSessionToken(text: string): boolean {
  return text.length === PREFIX.length + BODY_DIGITS && text.startsWith(PREFIX) && isBase62(text.slice(4));
}

/** The CSRF token a page of this session must send with every state change. */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`quarry console csrf v1\u0000${sessionToken}`).digest('base64url');
}

/** Constant-time check of a presented CSRF token against the session's. */
export function csrfTokenMatches(sessionToken: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
