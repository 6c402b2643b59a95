// Assembles the OAuth 2.0 client-credentials services of one gateway instance: the shared key
// ring, access tokens, the client service (with its failed-authentication throttle) and the
// token authenticator the bearer authenticator delegates access tokens to.

import { createTokenAuthenticator, type TokenAuthenticator } from '../auth/access-token-authenticator.js';
import { EMBED_MAX_TTL_S } from '../auth/embed-tokens.js';
import type { PlanPolicies } from '../rate-limit/plan-policies.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import { type AccessTokens, CLOCK_LEEWAY_S, createAccessTokens } from './access-tokens.js';
import { createClientAuthThrottle } from './client-auth-throttle.js';
import { createOAuthClientService, type OAuthClientService } from './client-service.js';
import { createSigningKeyRing, type SigningKeyRing } from './signing-key-ring.js';

/** How often an instance reloads the signing keys even without a change-feed event. */
export const KEY_REFRESH_MS = 60_000;

export interface OAuthServices {
  /** `iss` of every token and the base of the metadata URLs. */
  readonly issuer: string;
  readonly keyRing: SigningKeyRing;
  readonly tokens: AccessTokens;
  readonly clients: OAuthClientService;
  readonly authenticator: TokenAuthenticator;
}

export interface OAuthServicesOptions {
  readonly store: Pick<ControlPlaneStore, 'oauthClients' | 'signingKeys'>;
  /** The gateway's public URL (config.publicUrl). */
  readonly issuer: string;
  readonly tokenTtlSeconds: number;
  readonly policies: PlanPolicies;
  /** Counts failed client authentications per client_id. */
  readonly rateLimiter: RateLimiter;
  /** How long a client's verdict is cached (QUARRY_KEY_CACHE_MS). */
  readonly cacheMs: number;
}

/**
 * How long a superseded key keeps verifying: its last token may have been signed just before the
 * rotation, or up to KEY_REFRESH_MS after it by an instance that missed the change feed.
 */
export function retireAfterMs(tokenTtlSeconds: number): number {
  return (tokenTtlSeconds + CLOCK_LEEWAY_S) * 1000 + KEY_REFRESH_MS;
}

export function createOAuthServices(options: OAuthServicesOptions): OAuthServices {
  const keyRing = createSigningKeyRing({
    keys: options.store.signingKeys,
    // The ring also signs embed tokens (auth/embed-tokens.ts), which live up to 24 h.
    retireAfterMs: retireAfterMs(Math.max(options.tokenTtlSeconds, EMBED_MAX_TTL_S)),
    refreshMs: KEY_REFRESH_MS,
  });
  const tokens = createAccessTokens({
    ring: keyRing,
    issuer: options.issuer,
    ttlSeconds: options.tokenTtlSeconds,
  });
  return {
    issuer: options.issuer,
    keyRing,
    tokens,
    clients: createOAuthClientService({
      clients: options.store.oauthClients,
      throttle: createClientAuthThrottle(options.rateLimiter),
    }),
    authenticator: createTokenAuthenticator({
      tokens,
      clients: options.store.oauthClients,
      policies: options.policies,
      cacheMs: options.cacheMs,
    }),
  };
}
