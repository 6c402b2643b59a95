// Verifies bearer credentials. The key's checksum is checked first (a mistyped key never costs a
// store lookup), then an in-process cache, then the store. Cached verdicts live at most
// `cacheMs` (≤ 5 s) and are dropped at once when the change feed reports the key changed, so a
// revoked key stops working on every instance within that bound. Other credentials are JWTs:
// OAuth access tokens (header `typ: at+jwt`) go to the token authenticator, anything else to the
// marketplace try-token verifier; each refuses what it did not sign. Console session tokens
// (`qss_…`, from the HttpOnly cookie) are looked up in the store on every call, so a logout
// ends them at once on every instance.
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors/api-error.js';
import { isAccessToken } from '../oauth/access-tokens.js';
import type { PlanPolicies } from '../rate-limit/plan-policies.js';
import { parseApiKey } from '../security/api-key.js';
import { digestSessionToken, isSessionToken } from '../security/session-token.js';
import type { ApiKeyRepository } from '../store/api-key-repository.js';
import type { SessionRepository } from '../store/session-repository.js';
import type { TokenAuthenticator } from './access-token-authenticator.js';
import { type EmbedTokens, isEmbedToken } from './embed-tokens.js';
import { type Principal, SCOPES, type Scope } from './principal.js';
import type { TryTokens } from './try-token.js';

export interface Authenticator {
  /** The principal for an `Authorization` header; UNAUTHENTICATED otherwise. */
  authenticate(header: string | undefined): Promise<Principal>;
  /**
   * The principal of an API key whose verdict is cached and valid right now, synchronously;
   * undefined in every other case (no cached verdict, a token, an unknown, revoked or expired
   * key), which `authenticate` then decides. For the query fast path.
   */
  peek(header: string | undefined): Principal | undefined;
  /** Drops any cached verdict for this key id (change feed). */
  forgetKey(keyId: string): void;
  /** Drops the cached verdict of this OAuth client (record id; change feed). */
  forgetClient(clientId: string): void;
  /** Drops every cached verdict (an account's plan changed, tests). */
  forgetAll(): void;
}

export interface AuthenticatorOptions {
  readonly keys: Pick<ApiKeyRepository, 'findByDigest' | 'get'>;
  /** Resolves each key's rate limit (plan default or the key's override) once per cache fill. */
  readonly policies: PlanPolicies;
  /** Verifies marketplace try-tokens (JWTs this gateway signed). */
  readonly tryTokens?: TryTokens;
  /** Console sessions (session tokens, and whether a session that minted a try-token is live). */
  readonly sessions?: Pick<SessionRepository, 'findLive' | 'isLive'>;
  /** Verifies embed tokens (ES256 minted here, HS256 minted with an account's embed secret). */
  readonly embedTokens?: EmbedTokens;
  /** Verifies OAuth access tokens and caches their clients' verdicts. */
  readonly accessTokens?: TokenAuthenticator;
  /** How long a verdict is trusted without asking the store (default 1,000 ms). */
  readonly cacheMs?: number;
  /** Most keys kept in the cache (default 10,000). */
  readonly maxEntries?: number;
  /** Told of every call an API key authenticates (its `last_used_at`: auth/key-usage.ts). */
  readonly onKeyUsed?: (keyId: string) => void;
}

interface CachedVerdict {
  /** null: no live key has this digest. */
  readonly principal: Principal | null;
  readonly keyId: string | null;
  readonly expiresAt: number | null;
}

/**
 * A console session's management calls: a person clicking through pages (each page makes a few
 * calls), in a bucket of its own so a plan's API rate limit (Free: 10 a minute) never locks its
 * owner out of the console. Sessions cannot query (the query routes read no cookie), so this
 * spends no credits; try-tokens keep their own daily allowance.
 */
export const SESSION_RATE_LIMIT = {
  unlimited: false,
  policy: { limit: 240, windowSeconds: 60, burst: 120 },
} as const;

const unauthenticated = (message: string) => new ApiError('UNAUTHENTICATED', message);

function toScopes(scopes: readonly string[]): Scope[] {
  return scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const cacheMs = options.cacheMs ?? 1_000;
  const digestsByKey = new Map<string, string>();
  // The presented key's text → its digest (base64), for well-formed keys only: parsing is a pure
  // function of the text (a regex, a CRC32 and a SHA-256; bench/README.md has its cost), and every call presents one of
  // the same few keys. Verdicts still come from `cache`, so revocation is unaffected. Bounded;
  // cleared when full.
  const digestOfText = new Map<string, string>();
  const maxParsed = options.maxEntries ?? 10_000;
  const digestOf = (text: string): string | undefined => {
    const known = digestOfText.get(text);
    if (known !== undefined) return known;
    const parsed = parseApiKey(text);
    if (!parsed.ok) return undefined;
    const digest = parsed.digest.toString('base64');
    if (digestOfText.size >= maxParsed) digestOfText.clear();
    digestOfText.set(text, digest);
    return digest;
  };
  const cache = new LRUCache<string, CachedVerdict>({
    max: options.maxEntries ?? 10_000,
    ttl: Math.max(1, cacheMs),
    dispose: (verdict, digest) => {
      if (verdict.keyId !== null && digestsByKey.get(verdict.keyId) === digest)
        digestsByKey.delete(verdict.keyId);
    },
  });

  // Whether a key that minted a try-token is still live, by key id: trusted `cacheMs` like a
  // verdict, and dropped with it by forgetKey (a revocation here, or the change feed).
  const liveKeys = new LRUCache<string, { readonly live: boolean; readonly expiresAt: number | null }>({
    max: options.maxEntries ?? 10_000,
    ttl: Math.max(1, cacheMs),
  });
  async function keyIsLive(accountId: string, keyId: string): Promise<boolean> {
    let known = cacheMs > 0 ? liveKeys.get(keyId) : undefined;
    if (known === undefined) {
      if (keyId.startsWith('ses_')) {
        const live = options.sessions !== undefined && (await options.sessions.isLive(accountId, keyId));
        known = { live, expiresAt: null };
      } else {
        const key = await options.keys.get(accountId, keyId);
        known = {
          live: key !== null && key.revokedAt === null,
          expiresAt: key?.expiresAt?.getTime() ?? null,
        };
      }
      if (cacheMs > 0) liveKeys.set(keyId, known);
    }
    return known.live && (known.expiresAt === null || known.expiresAt > Date.now());
  }

  return {
    async authenticate(header) {
      if (header === undefined || header === '') {
        throw unauthenticated('Send an API key as "Authorization: Bearer <key>".');
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) throw unauthenticated('The Authorization header must be "Bearer <key>".');
      const credential = match[1] as string;
      if (credential.startsWith('qss_')) {
        const live =
          options.sessions !== undefined && isSessionToken(credential)
            ? await options.sessions.findLive(digestSessionToken(credential))
            : null;
        if (live === null) throw unauthenticated('The session has ended or expired; log in again.');
        return {
          accountId: live.session.accountId,
          keyId: live.session.id,
          // The account holder: every scope, as on the account's first key.
          scopes: SCOPES,
          plan: live.plan,
          rateLimit: SESSION_RATE_LIMIT,
          rateLimitBucket: `session:${live.session.accountId}`,
          origin: 'api',
          credential: 'session',
        };
      }
      if (!credential.startsWith('qry_') && options.embedTokens && isEmbedToken(credential)) {
        const claims = await options.embedTokens.verify(credential);
        if (claims === null) {
          throw unauthenticated('The embed token is invalid or expired, or its secret was revoked.');
        }
        if (claims.mintedByKey !== undefined && !(await keyIsLive(claims.accountId, claims.mintedByKey))) {
          throw unauthenticated('The key that minted this embed token is revoked or expired.');
        }
        return {
          accountId: claims.accountId,
          keyId: claims.signedBy,
          scopes: ['query'],
          plan: claims.plan,
          // The account pays and its plan's limit applies; a token's own limit is spent besides
          // (query/query-call.ts).
          rateLimit: options.policies.resolve(claims.plan, null),
          rateLimitBucket: `account:${claims.accountId}`,
          origin: 'api',
          credential: 'embed_token',
          embed: {
            tokenId: claims.tokenId,
            analytics: claims.analytics,
            origins: claims.origins,
            rateLimit: claims.rateLimit,
            expiresAt: claims.expiresAt,
          },
        };
      }
      if (!credential.startsWith('qry_') && options.accessTokens && isAccessToken(credential)) {
        return options.accessTokens.authenticate(credential);
      }
      if (!credential.startsWith('qry_') && options.tryTokens) {
        const claims = await options.tryTokens.verify(credential);
        if (claims === null) throw unauthenticated('The token is invalid or has expired.');
        if (!(await keyIsLive(claims.accountId, claims.keyId))) {
          throw unauthenticated(
            'The key or session that minted this try-token is revoked, expired or ended.',
          );
        }
        return {
          accountId: claims.accountId,
          keyId: `try_${claims.tokenId}`,
          scopes: ['query'],
          plan: 'marketplace',
          // Previews are limited by the account's allowance a day (query/admission.ts spendPreview).
          rateLimit: { unlimited: true },
          rateLimitBucket: `try:${claims.accountId}`,
          origin: 'marketplace',
          credential: 'try_token',
          previewOf: claims.source,
        };
      }
      const digest = digestOf(credential);
      if (digest === undefined) throw unauthenticated('The API key is malformed (check for a typo).');
      let verdict = cacheMs > 0 ? cache.get(digest) : undefined;
      if (verdict === undefined) {
        const found = await options.keys.findByDigest(Buffer.from(digest, 'base64'));
        verdict =
          found === null
            ? { principal: null, keyId: null, expiresAt: null }
            : {
                principal: {
                  accountId: found.account.id,
                  keyId: found.key.id,
                  scopes: toScopes(found.key.scopes),
                  plan: found.account.plan,
                  rateLimit: options.policies.resolve(found.account.plan, found.key.rateLimit),
                  rateLimitBucket: `account:${found.account.id}`,
                  origin: 'api',
                  credential: 'api_key',
                },
                keyId: found.key.id,
                expiresAt: found.key.expiresAt?.getTime() ?? null,
              };
        if (cacheMs > 0) {
          cache.set(digest, verdict);
          if (verdict.keyId !== null) digestsByKey.set(verdict.keyId, digest);
        }
      }
      if (verdict.principal === null) throw unauthenticated('The API key is unknown, revoked or expired.');
      if (verdict.expiresAt !== null && verdict.expiresAt <= Date.now()) {
        throw unauthenticated('The API key is unknown, revoked or expired.');
      }
      options.onKeyUsed?.(verdict.principal.keyId);
      return verdict.principal;
    },
    peek(header) {
      if (header === undefined || cacheMs <= 0) return undefined;
      const match = /^Bearer\s+(qry_\S+)\s*$/i.exec(header);
      if (!match) return undefined;
      const digest = digestOf(match[1] as string);
      if (digest === undefined) return undefined;
      const verdict = cache.get(digest);
      if (verdict === undefined || verdict.principal === null) return undefined;
      if (verdict.expiresAt !== null && verdict.expiresAt <= Date.now()) return undefined;
      options.onKeyUsed?.(verdict.principal.keyId);
      return verdict.principal;
    },
    forgetKey(keyId) {
      liveKeys.delete(keyId);
      const digest = digestsByKey.get(keyId);
      if (digest !== undefined) {
        cache.delete(digest);
        digestsByKey.delete(keyId);
      }
    },
    forgetClient(clientId) {
      options.accessTokens?.forgetClient(clientId);
    },
    forgetAll() {
      cache.clear();
      digestsByKey.clear();
      liveKeys.clear();
      options.accessTokens?.forgetAll();
    },
  };
}
