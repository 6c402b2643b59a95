// Who is calling: the principal every authenticator (API key, OAuth access token, marketplace
// try-token, console session) turns a credential into, and the scopes a credential may carry.
import { ApiError } from '../errors/api-error.js';
import type { ResolvedRateLimit } from '../rate-limit/plan-policies.js';
import type { EmbedGrant } from './embed-tokens.js';

/** What an API key (or OAuth token) may do. */
export type Scope = 'query' | 'keys' | 'owner' | 'account';
export const SCOPES: readonly Scope[] = ['query', 'keys', 'owner', 'account'];

/** The authenticated caller. */
export interface Principal {
  readonly accountId: string;
  /** The key's id; for a console session, the session's (`ses_…`); for a try-token, `try_…`. */
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
  /**
   * The kind of credential presented. `session`: the web console's sign-in cookie (the account
   * holder, every scope), accepted on management routes only, after the CSRF check
   * (http/middleware/session-credential.ts). `embed_token`: a browser-safe token
   * (auth/embed-tokens.ts), accepted by the query routes only.
   */
  readonly credential: 'api_key' | 'oauth' | 'try_token' | 'session' | 'embed_token';
  /** For a try-token (origin `marketplace`): the one analytic it may preview. */
  readonly previewOf?: string;
  /** For an embed token: the analytics, fixed params, origins and rate limit it allows. */
  readonly embed?: EmbedGrant;
}

/**
 * The scopes a new credential (a key, an OAuth client) gets: those asked for, or by default its
 * creator's own; FORBIDDEN when it asks for one its creator lacks, or a key holding only `keys`
 * could mint itself every other scope.
 */
export function grantableScopes(
  requested: readonly Scope[] | undefined,
  creator: readonly Scope[],
  what: 'key' | 'client',
): Scope[] {
  const scopes = SCOPES.filter((s) => (requested ?? creator).includes(s));
  const lacking = scopes.filter((s) => !creator.includes(s));
  if (lacking.length > 0) {
    throw new ApiError(
      'FORBIDDEN',
      `A ${what} cannot get scopes its creator lacks: ${lacking.join(', ')}. Create it with a key that holds them.`,
      { details: lacking.map((s) => ({ field: 'scope', message: `the creator lacks the "${s}" scope` })) },
    );
  }
  return scopes;
}

/**
 * Whose answers a call's results are: the account's, or for an embed token that token's alone
 * (its fixed params make its rows its own). Binds page cursors and Idempotency-Key replays.
 */
export function answerHolder(principal: Principal): string {
  return principal.embed === undefined
    ? principal.accountId
    : `${principal.accountId} embed ${principal.embed.tokenId}`;
}
