// Turns a bearer access token into the caller's principal, the way services/authenticator.ts does
// for API keys: the signature and claims are checked in process (no I/O), then the client's
// verdict (live? which plan?) comes from an in-process cache or the store. Verdicts live at most
// `cacheMs` (≤ 5 s) and are dropped when the change feed reports the client revoked, so a revoked
// client's tokens stop working on every instance within the same bound as a revoked key.
//
// The principal: the token's account and scopes, the account's plan (quotas and rate limits as
// for a key), a rate-limit bucket per client (`oauth:<client_id>`), origin `api`; usage events
// record the client's record id (`ocl_…`) where a key's id would be.
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors/api-error.js';
import type { AccessTokens } from '../oauth/access-tokens.js';
import type { PlanPolicies } from '../rate-limit/plan-policies.js';
import type { OAuthClientRepository } from '../store/oauth-client-repository.js';
import type { Principal } from './principal.js';

export interface TokenAuthenticator {
  /** The principal of a valid access token of a live client; UNAUTHENTICATED otherwise. */
  authenticate(token: string): Promise<Principal>;
  /** Drops the cached verdict of this client (record id). */
  forgetClient(id: string): void;
  /** Drops every cached verdict (an account's plan changed). */
  forgetAll(): void;
}

export interface TokenAuthenticatorOptions {
  readonly tokens: AccessTokens;
  readonly clients: Pick<OAuthClientRepository, 'findLive'>;
  readonly policies: PlanPolicies;
  /** How long a client's verdict is trusted without asking the store (default 1,000 ms). */
  readonly cacheMs?: number;
  /** Most clients kept in the cache (default 10,000). */
  readonly maxEntries?: number;
}

interface ClientVerdict {
  /** null: revoked, unknown, or its account is closed. */
  readonly live: { readonly accountId: string; readonly clientId: string; readonly plan: string } | null;
}

const refused = () => new ApiError('UNAUTHENTICATED', 'The access token is invalid, expired or revoked.');

export function createTokenAuthenticator(options: TokenAuthenticatorOptions): TokenAuthenticator {
  const { tokens, clients, policies } = options;
  const cacheMs = options.cacheMs ?? 1_000;
  const cache = new LRUCache<string, ClientVerdict>({
    max: options.maxEntries ?? 10_000,
    ttl: Math.max(1, cacheMs),
  });

  async function verdictOf(id: string): Promise<ClientVerdict> {
    const cached = cacheMs > 0 ? cache.get(id) : undefined;
    if (cached !== undefined) return cached;
    const live = await clients.findLive(id);
    const verdict: ClientVerdict = {
      live:
        live === null
          ? null
          : { accountId: live.client.accountId, clientId: live.client.clientId, plan: live.plan },
    };
    if (cacheMs > 0) cache.set(id, verdict);
    return verdict;
  }

  return {
    async authenticate(token) {
      const claims = await tokens.verify(token);
      if (claims === null) throw refused();
      const { live } = await verdictOf(claims.client);
      // A signed token always matches its client; checked anyway, so a claim can never move a
      // call to another account.
      if (live === null || live.accountId !== claims.accountId || live.clientId !== claims.clientId) {
        throw refused();
      }
      return {
        accountId: claims.accountId,
        keyId: claims.client,
        scopes: claims.scopes,
        plan: live.plan,
        rateLimit: policies.resolve(live.plan, null),
        rateLimitBucket: `account:${claims.accountId}`,
        origin: 'api',
        credential: 'oauth',
      };
    },
    forgetClient(id) {
      cache.delete(id);
    },
    forgetAll() {
      cache.clear();
    },
  };
}
