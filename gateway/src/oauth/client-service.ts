// OAuth clients of an account: create (the secret is shown once, only its digest is stored; the
// client's scopes are a subset of the creator's), list (never a secret), revoke, and
// authenticate a client at the token endpoint (constant-time, failures rate limited per client_id).

import { grantableScopes, type Principal, type Scope } from '../auth/principal.js';
import type { OAuthClient, OAuthClientRepository } from '../store/oauth-client-repository.js';
import type { ClientAuthThrottle } from './client-auth-throttle.js';
import { generateClientCredentials, isClientIdShaped, secretMatches } from './client-credentials.js';
import { OAuthError } from './oauth-error.js';
import type { ClientCredentials } from './token-request.js';

export interface NewClientRequest {
  readonly name: string;
  /** Defaults to every scope of the creator. */
  readonly scopes?: readonly Scope[];
}

export interface IssuedClient {
  readonly client: OAuthClient;
  /** `qcs_…`: shown once. */
  readonly secret: string;
}

export interface OAuthClientService {
  /** Creates a client of the creator's account; FORBIDDEN for a scope the creator lacks. */
  create(creator: Principal, request: NewClientRequest): Promise<IssuedClient>;
  list(accountId: string): Promise<readonly OAuthClient[]>;
  /** Revokes a client of the account; NOT_FOUND for another account's. */
  revoke(accountId: string, id: string): Promise<OAuthClient>;
  /**
   * The live client these credentials, sent from `address`, authenticate; throws OAuthError
   * invalid_client otherwise (and while that address has failed too often for this client).
   */
  authenticate(credentials: ClientCredentials, address: string): Promise<OAuthClient>;
}

export interface OAuthClientServiceOptions {
  readonly clients: OAuthClientRepository;
  readonly throttle: ClientAuthThrottle;
}

const REFUSED = 'Client authentication failed: unknown client, wrong secret, or the client was revoked.';

export function createOAuthClientService(options: OAuthClientServiceOptions): OAuthClientService {
  const { clients, throttle } = options;
  return {
    async create(creator, request) {
      const scopes = grantableScopes(request.scopes, creator.scopes, 'client');
      const generated = generateClientCredentials();
      const client = await clients.create({
        id: generated.id,
        clientId: generated.clientId,
        accountId: creator.accountId,
        name: request.name,
        secretDigest: generated.secretDigest,
        scopes,
      });
      return { client, secret: generated.secret };
    },

    list: (accountId) => clients.listForAccount(accountId),
    revoke: (accountId, id) => clients.revoke(accountId, id),

    async authenticate(credentials, address) {
      // A client_id that cannot exist costs neither a lookup nor a rate-limit bucket.
      if (!isClientIdShaped(credentials.clientId)) {
        secretMatches(credentials.secret, null);
        throw new OAuthError('invalid_client', REFUSED);
      }
      const wait = await throttle.lockedFor(credentials.clientId, address);
      if (wait > 0) {
        throw new OAuthError(
          'invalid_client',
          `Too many failed authentications of this client from your address; retry in ${Math.ceil(wait)} s.`,
          { retryAfter: wait },
        );
      }
      const found = await clients.findCredentials(credentials.clientId);
      if (!secretMatches(credentials.secret, found?.secretDigest ?? null) || found === null) {
        await throttle.recordFailure(credentials.clientId, address);
        throw new OAuthError('invalid_client', REFUSED);
      }
      return found.client;
    },
  };
}
