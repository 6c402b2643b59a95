// Embed tokens and the account's embed secrets (docs/embedding.md): minting a token for a key's
// account, managing the HS256 secrets an account's backend mints tokens with offline (shown once,
// rotated with an overlap, revoked at once), the versions minted tokens pin, and the account's
// setting that lets its keys be used from other origins' pages.
import { LRUCache } from 'lru-cache';
import type { EmbedAnalytic, EmbedTokens } from '../auth/embed-tokens.js';
import type { Principal } from '../auth/principal.js';
import { parseSource } from '../query/pinned-version.js';
import type { NewVersionPin } from '../store/analytic-version-repository.js';
import type { EmbedRepository, EmbedSecret, IssuedEmbedSecret } from '../store/embed-repository.js';

/** What `POST /v1/embed-tokens` asks for. */
export interface MintRequest {
  readonly analytics: readonly EmbedAnalytic[];
  readonly origins: readonly string[];
  readonly rateLimit?: { readonly limit: number; readonly windowSeconds: number } | undefined;
  readonly ttlSeconds: number;
}

export interface MintedToken {
  readonly token: string;
  readonly tokenId: string;
  readonly expiresAt: Date;
}

export interface EmbedService {
  readonly tokens: EmbedTokens;
  /** The gateway's own origin: its pages are not cross-origin. */
  readonly publicOrigin: string;
  mint(principal: Principal, request: MintRequest): Promise<MintedToken>;
  createSecret(accountId: string, name: string): Promise<IssuedEmbedSecret>;
  listSecrets(accountId: string): Promise<readonly EmbedSecret[]>;
  rotateSecret(
    accountId: string,
    id: string,
    overlapSeconds: number,
  ): Promise<{ readonly issued: IssuedEmbedSecret; readonly previous: EmbedSecret }>;
  revokeSecret(accountId: string, id: string): Promise<EmbedSecret>;
  /** Cached for the key-cache bound: asked on every cross-origin call with a key. */
  keysFromBrowsers(accountId: string): boolean | Promise<boolean>;
  setKeysFromBrowsers(accountId: string, allow: boolean): Promise<boolean>;
}

export interface EmbedServiceOptions {
  readonly tokens: EmbedTokens;
  readonly store: EmbedRepository;
  readonly publicUrl: string;
  /** QUARRY_KEY_CACHE_MS. */
  readonly cacheMs: number;
  /**
   * Keeps a version a minted token names (`name@3`) until the token expires (docs/analytics.md,
   * "Versions"); NOT_FOUND when that version does not exist. Absent: nothing is kept for tokens.
   */
  readonly pinVersion?: (pin: NewVersionPin) => Promise<void>;
}

export function createEmbedService(options: EmbedServiceOptions): EmbedService {
  const { tokens, store } = options;
  const settings = new LRUCache<string, { readonly allow: boolean }>({
    max: 10_000,
    ttl: Math.max(1, options.cacheMs),
  });
  return {
    tokens,
    publicOrigin: new URL(options.publicUrl).origin,

    async mint(principal, request) {
      const minted = await tokens.sign({
        accountId: principal.accountId,
        keyId: principal.keyId,
        analytics: request.analytics,
        origins: request.origins,
        rateLimit: request.rateLimit,
        ttlSeconds: request.ttlSeconds,
      });
      // Versions it names are kept while it lives; a version that does not exist refuses the mint.
      for (const { name } of request.analytics) {
        const pin = parseSource(name);
        if (pin.version !== undefined && options.pinVersion !== undefined)
          await options.pinVersion({
            name: pin.name,
            version: pin.version,
            ref: minted.tokenId,
            accountId: principal.accountId,
            expiresAt: minted.expiresAt,
          });
      }
      return minted;
    },

    createSecret: (accountId, name) => store.createSecret(accountId, name),
    listSecrets: (accountId) => store.listSecrets(accountId),
    async rotateSecret(accountId, id, overlapSeconds) {
      const rotated = await store.rotateSecret(accountId, id, overlapSeconds);
      tokens.forgetSecret(id);
      return rotated;
    },
    async revokeSecret(accountId, id) {
      const revoked = await store.revokeSecret(accountId, id);
      tokens.forgetSecret(id);
      return revoked;
    },

    keysFromBrowsers(accountId) {
      const known = options.cacheMs > 0 ? settings.get(accountId) : undefined;
      if (known !== undefined) return known.allow;
      return store.keysFromBrowsers(accountId).then((allow) => {
        if (options.cacheMs > 0) settings.set(accountId, { allow });
        return allow;
      });
    },
    async setKeysFromBrowsers(accountId, allow) {
      const set = await store.setKeysFromBrowsers(accountId, allow);
      settings.delete(accountId);
      return set;
    },
  };
}
