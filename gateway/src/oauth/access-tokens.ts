// OAuth access tokens (RFC 9068 JWT profile): ES256 JWTs signed with the shared key ring, header
// `typ: at+jwt` and `kid`. Claims: iss (this gateway's public URL), aud `quarry-api`, sub (the
// client_id), account, scope, client (the client's record id), iat, exp, jti.
//
// Verification accepts ES256 only (so `alg: none`, and HS256 keyed with our public key, are
// refused before any key is looked up), a kid the key ring still holds, the exact issuer and
// audience, and an unexpired token with at most CLOCK_LEEWAY_S of clock skew. Anything else is
// null: callers answer every refusal the same way.
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { SCOPES, type Scope } from '../auth/principal.js';
import { SIGNING_ALG, type SigningKeyRing } from './signing-key-ring.js';

/** The `aud` of every access token. */
export const ACCESS_TOKEN_AUDIENCE = 'quarry-api';
/** The JOSE header `typ` of access tokens (RFC 9068 §2.1); try-tokens carry `JWT`. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';
/** Clock skew tolerated on `exp` and `iat`, in seconds. */
export const CLOCK_LEEWAY_S = 30;
/** The longest lifetime a token may be configured with (QUARRY_OAUTH_TOKEN_TTL). */
export const MAX_TOKEN_TTL_S = 86_400;

/** What a verified access token says. */
export interface AccessTokenClaims {
  /** The public client identifier (`sub`). */
  readonly clientId: string;
  /** The client's record id (`client`). */
  readonly client: string;
  readonly accountId: string;
  readonly scopes: readonly Scope[];
  readonly tokenId: string;
  readonly expiresAt: Date;
}

/** Who a token is issued to. */
export interface TokenSubject {
  readonly clientId: string;
  readonly client: string;
  readonly accountId: string;
  readonly scopes: readonly Scope[];
}

export interface IssuedAccessToken {
  readonly token: string;
  /** Seconds until it expires. */
  readonly expiresIn: number;
  /** The granted scopes, space-separated. */
  readonly scope: string;
}

export interface AccessTokens {
  issue(subject: TokenSubject): Promise<IssuedAccessToken>;
  /** The claims of a valid token; null for anything else. */
  verify(token: string): Promise<AccessTokenClaims | null>;
}

export interface AccessTokensOptions {
  readonly ring: SigningKeyRing;
  /** The `iss` of tokens issued and required of tokens verified. */
  readonly issuer: string;
  readonly ttlSeconds: number;
  /** Milliseconds since the epoch (tests move it). */
  readonly now?: () => number;
}

/** Scopes in their canonical order, space-separated (`query keys`). */
export function formatScopes(scopes: readonly Scope[]): string {
  return SCOPES.filter((s) => scopes.includes(s)).join(' ');
}

/** True when `token` is a JWT whose header says it is an access token (not a try-token). */
export function isAccessToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ === ACCESS_TOKEN_TYPE;
  } catch {
    return false;
  }
}

function parseScopes(value: unknown): Scope[] | null {
  if (typeof value !== 'string') return null;
  const names = value.split(' ').filter((s) => s !== '');
  const scopes = names.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  return scopes.length === names.length ? scopes : null;
}

export function createAccessTokens(options: AccessTokensOptions): AccessTokens {
  const { ring, issuer, ttlSeconds } = options;
  const now = options.now ?? Date.now;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TOKEN_TTL_S) {
    throw new RangeError(`the token lifetime must be 1-${MAX_TOKEN_TTL_S} s, not ${ttlSeconds}`);
  }

  return {
    async issue(subject) {
      const { kid, key } = await ring.signingKey();
      const issuedAt = Math.floor(now() / 1000);
      const scope = formatScopes(subject.scopes);
      const token = await new SignJWT({ account: subject.accountId, scope, client: subject.client })
        .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: ACCESS_TOKEN_TYPE })
        .setIssuer(issuer)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setSubject(subject.clientId)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttlSeconds)
        .setJti(randomUUID())
        .sign(key);
      return { token, expiresIn: ttlSeconds, scope };
    },

    async verify(token) {
      try {
        const { payload } = await jwtVerify(
          token,
          async (header) => {
            const key = header.kid === undefined ? null : await ring.verificationKey(header.kid);
            if (key === null) throw new errors.JWKSNoMatchingKey();
            return key;
          },
          {
            algorithms: [SIGNING_ALG],
            typ: ACCESS_TOKEN_TYPE,
            issuer,
            audience: ACCESS_TOKEN_AUDIENCE,
            clockTolerance: CLOCK_LEEWAY_S,
            // Also refuses an `iat` in the future (beyond the leeway).
            maxTokenAge: MAX_TOKEN_TTL_S + CLOCK_LEEWAY_S,
            requiredClaims: ['exp', 'iat', 'jti', 'sub'],
            currentDate: new Date(now()),
          },
        );
        const scopes = parseScopes(payload.scope);
        const { sub, jti, exp, account, client } = payload;
        if (
          scopes === null ||
          typeof sub !== 'string' ||
          typeof jti !== 'string' ||
          typeof exp !== 'number' ||
          typeof account !== 'string' ||
          typeof client !== 'string'
        ) {
          return null;
        }
        return {
          clientId: sub,
          client,
          accountId: account,
          scopes,
          tokenId: jti,
          expiresAt: new Date(exp * 1000),
        };
      } catch (error) {
        // Every refusal of the token itself is a JOSE error; a failing store is not, and must
        // not pass for a bad credential.
        if (error instanceof errors.JOSEError) return null;
        throw error;
      }
    },
  };
}
