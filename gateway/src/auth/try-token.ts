// Marketplace try-it tokens: short-lived JWTs the gateway signs itself, bound to one account,
// one listed analytic and the API key that minted them. Calls made with one are previews: free,
// capped in rows, counted against the account's daily allowance of previews, recorded with
// origin `marketplace`, and refused once the minting key is revoked or expired. Only a token
// this gateway signed does that: nothing a caller can send (a header, a claim in an unsigned or
// foreign token, a query flag) makes a call free.
//
// Keys are derived (HKDF-SHA256) from the secret-key ring, so every instance with the same
// QUARRY_SECRET_KEY verifies every other's tokens, and rotation keeps old tokens valid until
// they expire (at most 5 minutes).
import { hkdfSync, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

export const TRY_TOKEN_MAX_TTL_S = 300;
const ISSUER = 'quarry';
const AUDIENCE = 'quarry:marketplace-try';
const INFO = 'quarry marketplace try-token v1';

export interface TryTokenClaims {
  readonly accountId: string;
  readonly tokenId: string;
  readonly expiresAt: Date;
  /** The one analytic the token may preview. */
  readonly source: string;
  /** The API key that minted it: the token is valid only while that key is. */
  readonly keyId: string;
}

/** What a try-token is minted for. */
export interface TryTokenGrant {
  readonly accountId: string;
  readonly source: string;
  readonly keyId: string;
  /** Seconds it is valid (capped at 5 minutes; default 5 minutes). */
  readonly ttlSeconds?: number;
}

export interface TryTokens {
  /** Signs a token for the grant. */
  sign(grant: TryTokenGrant): Promise<{ token: string; expiresAt: Date }>;
  /** The claims of a token this gateway signed and that has not expired; null otherwise. */
  verify(token: string): Promise<TryTokenClaims | null>;
}

function derive(key: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', key, 'quarry', INFO, 32));
}

/** A JWT has three base64url parts; API keys start with `qry_`. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export function createTryTokens(keyring: {
  keys: Readonly<Record<string, Uint8Array>>;
  current: string;
}): TryTokens {
  const keys = new Map(Object.entries(keyring.keys).map(([id, key]) => [id, derive(key)]));
  const current = keys.get(keyring.current);
  if (!current) throw new Error('the current secret key is not in the key ring');
  return {
    async sign(grant) {
      const ttlSeconds = grant.ttlSeconds ?? TRY_TOKEN_MAX_TTL_S;
      const ttl = Math.max(1, Math.min(TRY_TOKEN_MAX_TTL_S, Math.floor(ttlSeconds)));
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ src: grant.source, key: grant.keyId })
        .setProtectedHeader({ alg: 'HS256', kid: keyring.current, typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(grant.accountId)
        .setJti(randomUUID())
        .setIssuedAt(now)
        .setExpirationTime(now + ttl)
        .sign(current);
      return { token, expiresAt: new Date((now + ttl) * 1000) };
    },
    async verify(token) {
      if (!looksLikeJwt(token)) return null;
      try {
        const { payload } = await jwtVerify(
          token,
          (header) => {
            const key = header.kid === undefined ? undefined : keys.get(header.kid);
            if (!key) throw new errors.JWSSignatureVerificationFailed();
            return key;
          },
          { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], maxTokenAge: TRY_TOKEN_MAX_TTL_S + 5 },
        );
        const { sub, jti, exp, src, key } = payload;
        if (
          typeof sub !== 'string' ||
          typeof jti !== 'string' ||
          typeof exp !== 'number' ||
          typeof src !== 'string' ||
          typeof key !== 'string'
        ) {
          return null;
        }
        return { accountId: sub, tokenId: jti, expiresAt: new Date(exp * 1000), source: src, keyId: key };
      } catch {
        return null;
      }
    },
  };
}
