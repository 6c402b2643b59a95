// Who is calling: the principal every authenticator (API key, OAuth access token, marketplace
// try-token) turns a credential into, and the scopes a credential may carry.
import type { ResolvedRateLimit } from '../rate-limit/plan-policies.js';

/** What an API key (or OAuth token) may do. */
export type Scope = 'query' | 'keys' | 'owner' | 'account';
export const SCOPES: readonly Scope[] = ['query', 'keys', 'owner', 'account'];

/** The authenticated caller. */
export interface Principal {
  readonly accountId: string;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
  readonly plan: string;
  /** The key's rate limit: its override, else its plan's default. */
  readonly rateLimit: ResolvedRateLimit;
  /** The rate-limit bucket: per key, or per account for marketplace try-tokens. */
  readonly rateLimitBucket: string;
  /**
   * `marketplace` only for a try-token this gateway signed: such calls are free and never count
   * against a quota. Nothing else sets it.
   */
  readonly origin: 'api' | 'marketplace';
  /** The kind of credential presented. */
  readonly credential: 'api_key' | 'oauth' | 'try_token';
  /** For a try-token (origin `marketplace`): the one analytic it may preview. */
  readonly previewOf?: string;
}
