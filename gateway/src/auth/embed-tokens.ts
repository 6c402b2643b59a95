// Embed tokens (docs/embedding.md): short-lived JWTs a web page may hold. Each names the account
// that pays, the analytics it may call (`name` or `name@version`), fixed params per analytic,
// the browser origins it may be used from, an optional rate limit of its own, and an expiry of
// at most 24 h. Two kinds, told apart by their header before anything is trusted:
//
// - minted by the gateway (`POST /v1/embed-tokens`): ES256 with the shared signing key ring
//   (oauth/signing-key-ring.ts), header `typ: embed+jwt`, `iss` this gateway, claim `key` the API
//   key that minted it (the token ends with that key);
// - minted offline by the account's backend: HS256 with one of the account's embed secrets,
//   header `kid` the secret's id (`qes_…`). The secret is looked up in the account the token
//   names only, so a token signed with another account's secret never verifies.
//
// Each path accepts its one algorithm (so `alg: none`, HS256 keyed with a public key, or ES256
// under a secret's kid are refused before any key is used), the audience `quarry-embed`, `exp`
// and `iat` with at most EMBED_CLOCK_LEEWAY_S of skew, and `exp - iat` of at most 24 h. Anything
// else is null: callers answer every refusal the same way.
import { createHash, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { SIGNING_ALG, type SigningKeyRing } from '../oauth/signing-key-ring.js';
import type { EmbedRepository } from '../store/embed-repository.js';

/** The `aud` of every embed token. */
export const EMBED_AUDIENCE = 'quarry-embed';
/** The JOSE header `typ` of tokens the gateway mints. */
export const EMBED_TOKEN_TYPE = 'embed+jwt';
/** The longest an embed token may live (`exp - iat`), in seconds. */
export const EMBED_MAX_TTL_S = 86_400;
/** Clock skew tolerated on `exp` and `iat`, in seconds. */
export const EMBED_CLOCK_LEEWAY_S = 30;
/** The `kid` prefix of an account's embed secret. */
const SECRET_KID = 'qes_';

/** An analytic name, or a name pinned to a version (`sales-by-region@3`). */
export const EMBED_ANALYTIC = /^[a-z0-9][a-z0-9-]{0,62}[a-z0-9](@[1-9][0-9]{0,8})?$/;

/** `scheme://host[:port]`, exactly as a browser sends it in `Origin`. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

export const EmbedAnalyticSchema = z
  .object({
    name: z.string().regex(EMBED_ANALYTIC, 'an analytic name, or name@version'),
    fixed_params: z.record(z.string().min(1).max(64), z.unknown()).optional(),
  })
  .strict();

export const EmbedOriginsSchema = z
  .array(z.string().max(255).refine(isOrigin, 'an origin: scheme://host[:port], no path or trailing slash'))
  .max(20);

export const EmbedRateLimitSchema = z
  .object({
    limit: z.number().int().min(1).max(1_000_000),
    window_seconds: z.number().int().min(1).max(86_400),
  })
  .strict();

/** The claims an embed token carries besides the registered ones. */
const GrantClaims = z.object({
  account: z.string().min(1).max(64),
  analytics: z.array(EmbedAnalyticSchema).min(1).max(50),
  origins: EmbedOriginsSchema.optional(),
  rate_limit: EmbedRateLimitSchema.optional(),
});

/** One analytic a token may call, and the params it fixes. */
export interface EmbedAnalytic {
  readonly name: string;
  readonly fixedParams: Readonly<Record<string, unknown>>;
}

/** What a verified embed token allows. */
export interface EmbedGrant {
  /** `jti`, or a digest of the token when an offline token has none. */
  readonly tokenId: string;
  readonly analytics: readonly EmbedAnalytic[];
  /** Browser origins it may be used from; none: only without an `Origin` (a server). */
  readonly origins: readonly string[];
  readonly rateLimit?: { readonly limit: number; readonly windowSeconds: number } | undefined;
  readonly expiresAt: Date;
}

/** A verified token: its grant, its account and plan, and what signed it. */
export interface EmbedClaims extends EmbedGrant {
  readonly accountId: string;
  readonly plan: string;
  /** The embed secret (`qes_…`) or the API key (`key_…`) that signed or minted it. */
  readonly signedBy: string;
  /** For a token the gateway minted: the API key it ends with. */
  readonly mintedByKey?: string;
}

/** What `POST /v1/embed-tokens` signs. */
export interface EmbedTokenRequest {
  readonly accountId: string;
  readonly keyId: string;
  readonly analytics: readonly EmbedAnalytic[];
  readonly origins: readonly string[];
  readonly rateLimit?: { readonly limit: number; readonly windowSeconds: number } | undefined;
  readonly ttlSeconds: number;
}

export interface EmbedTokens {
  sign(request: EmbedTokenRequest): Promise<{ token: string; tokenId: string; expiresAt: Date }>;
  /** The claims of a valid embed token; null for anything else. */
  verify(token: string): Promise<EmbedClaims | null>;
  /** Drops the cached verdict of an embed secret (revoked or rotated here). */
  forgetSecret(id: string): void;
}

export interface EmbedTokensOptions {
  readonly ring: SigningKeyRing;
  /** `iss` of the tokens the gateway mints (its public URL). */
  readonly issuer: string;
  readonly store: Pick<EmbedRepository, 'findLiveSecret' | 'livePlan'>;
  /** How long a secret's or an account's verdict is trusted without the store (default 1,000 ms). */
  readonly cacheMs?: number;
  readonly now?: () => number;
}

/** Whether `token` is an embed token by its header (nothing is trusted yet). */
export function isEmbedToken(token: string): boolean {
  try {
    const header = decodeProtectedHeader(token);
    return (
      header.typ === EMBED_TOKEN_TYPE || (typeof header.kid === 'string' && header.kid.startsWith(SECRET_KID))
    );
  } catch {
    return false;
  }
}

interface SecretVerdict {
  readonly key: Uint8Array | null;
  readonly plan: string | null;
}

export function createEmbedTokens(options: EmbedTokensOptions): EmbedTokens {
  const { ring, issuer, store } = options;
  const now = options.now ?? Date.now;
  const cacheMs = options.cacheMs ?? 1_000;
  const secrets = new LRUCache<string, SecretVerdict>({ max: 10_000, ttl: Math.max(1, cacheMs) });
  const plans = new LRUCache<string, { readonly plan: string | null }>({
    max: 10_000,
    ttl: Math.max(1, cacheMs),
  });

  async function secretOf(accountId: string, kid: string): Promise<SecretVerdict> {
    const id = `${kid}\n${accountId}`;
    const cached = cacheMs > 0 ? secrets.get(id) : undefined;
    if (cached !== undefined) return cached;
    const live = await store.findLiveSecret(accountId, kid);
    const verdict: SecretVerdict =
      live === null
        ? { key: null, plan: null }
        : { key: new TextEncoder().encode(live.secret), plan: live.plan };
    // A secret rotated away stops verifying at its expiry even while cached.
    const ttl =
      live?.expiresAt === null || live === null
        ? cacheMs
        : Math.min(cacheMs, live.expiresAt.getTime() - now());
    if (cacheMs > 0 && ttl > 0) secrets.set(id, verdict, { ttl });
    return verdict;
  }

  async function planOf(accountId: string): Promise<string | null> {
    const cached = cacheMs > 0 ? plans.get(accountId) : undefined;
    if (cached !== undefined) return cached.plan;
    const plan = await store.livePlan(accountId);
    if (cacheMs > 0) plans.set(accountId, { plan });
    return plan;
  }

  const verifyOptions = {
    audience: EMBED_AUDIENCE,
    clockTolerance: EMBED_CLOCK_LEEWAY_S,
    // Also refuses an `iat` in the future beyond the leeway.
    maxTokenAge: EMBED_MAX_TTL_S + EMBED_CLOCK_LEEWAY_S,
    requiredClaims: ['exp', 'iat'],
  };

  /** The verified payload and who signed it, or null. */
  async function verified(token: string): Promise<{
    payload: Record<string, unknown>;
    plan: string;
    signedBy: string;
    mintedByKey?: string;
  } | null> {
    const header = decodeProtectedHeader(token);
    const kid = header.kid;
    if (typeof kid !== 'string') return null;
    if (kid.startsWith(SECRET_KID)) {
      // The account comes from the unverified payload only to choose where to look the secret
      // up: a secret of another account is not found there, so the signature cannot verify.
      const account = decodeJwt(token).account;
      if (typeof account !== 'string' || account.length > 64) return null;
      const { key, plan } = await secretOf(account, kid);
      if (key === null || plan === null) return null;
      const { payload } = await jwtVerify(token, key, {
        ...verifyOptions,
        algorithms: ['HS256'],
        currentDate: new Date(now()),
      });
      if (payload.account !== account) return null;
      return { payload, plan, signedBy: kid };
    }
    if (header.typ !== EMBED_TOKEN_TYPE) return null;
    const { payload } = await jwtVerify(
      token,
      async () => {
        const key = await ring.verificationKey(kid);
        if (key === null) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      {
        ...verifyOptions,
        algorithms: [SIGNING_ALG],
        typ: EMBED_TOKEN_TYPE,
        issuer,
        requiredClaims: ['exp', 'iat', 'jti', 'key'],
        currentDate: new Date(now()),
      },
    );
    if (typeof payload.key !== 'string' || typeof payload.account !== 'string') return null;
    const plan = await planOf(payload.account);
    if (plan === null) return null;
    return { payload, plan, signedBy: payload.key, mintedByKey: payload.key };
  }

  return {
    async sign(request) {
      const { kid, key } = await ring.signingKey();
      const issuedAt = Math.floor(now() / 1000);
      const ttl = Math.max(1, Math.min(EMBED_MAX_TTL_S, Math.floor(request.ttlSeconds)));
      const tokenId = randomUUID();
      const token = await new SignJWT({
        account: request.accountId,
        key: request.keyId,
        analytics: request.analytics.map((a) =>
          Object.keys(a.fixedParams).length === 0
            ? { name: a.name }
            : { name: a.name, fixed_params: a.fixedParams },
        ),
        ...(request.origins.length > 0 ? { origins: request.origins } : {}),
        ...(request.rateLimit === undefined
          ? {}
          : {
              rate_limit: { limit: request.rateLimit.limit, window_seconds: request.rateLimit.windowSeconds },
            }),
      })
        .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: EMBED_TOKEN_TYPE })
        .setIssuer(issuer)
        .setAudience(EMBED_AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttl)
        .setJti(tokenId)
        .sign(key);
      return { token, tokenId, expiresAt: new Date((issuedAt + ttl) * 1000) };
    },

    async verify(token) {
      try {
        const found = await verified(token);
        if (found === null) return null;
        const { payload } = found;
        const { exp, iat, jti } = payload;
        if (typeof exp !== 'number' || typeof iat !== 'number' || exp - iat > EMBED_MAX_TTL_S) return null;
        const grant = GrantClaims.safeParse(payload);
        if (!grant.success) return null;
        const claims = grant.data;
        return {
          accountId: claims.account,
          plan: found.plan,
          signedBy: found.signedBy,
          ...(found.mintedByKey === undefined ? {} : { mintedByKey: found.mintedByKey }),
          tokenId:
            typeof jti === 'string' && jti.length > 0 && jti.length <= 64
              ? jti
              : createHash('sha256').update(token).digest('base64url').slice(0, 22),
          analytics: claims.analytics.map((a) => ({ name: a.name, fixedParams: a.fixed_params ?? {} })),
          origins: claims.origins ?? [],
          rateLimit:
            claims.rate_limit === undefined
              ? undefined
              : { limit: claims.rate_limit.limit, windowSeconds: claims.rate_limit.window_seconds },
          expiresAt: new Date(exp * 1000),
        };
      } catch (error) {
        // Every refusal of the token itself is a JOSE error; a failing store is not, and must
        // not pass for a bad credential.
        if (error instanceof errors.JOSEError || error instanceof TypeError) return null;
        throw error;
      }
    },

    forgetSecret(id) {
      for (const key of secrets.keys()) if (key.startsWith(`${id}\n`)) secrets.delete(key);
    },
  };
}
