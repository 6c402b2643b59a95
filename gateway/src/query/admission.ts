// Admission of a request: its credential becomes a principal (Authenticator: API key, OAuth
// access token or marketplace try-token), the principal must hold the scope, and one request of
// its rate limit is spent. The query module admits its calls here; the HTTP layer's requireScope
// middleware admits every other authenticated route here too, so there is one implementation.
// Two steps, so a caller refused by its rate limit is still known (access line, quota headers).
//
// When the credential's verdict is cached and the limiter is in-process, admission is
// synchronous: a cache hit spends no await (and no microtask) on it.
import type { Authenticator } from '../auth/authenticator.js';
import type { KnownCredentials } from '../auth/known-credentials.js';
import type { Principal, Scope } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import type { FailureThrottle } from '../rate-limit/failure-throttle.js';
import { rateLimitHeaders } from '../rate-limit/rate-limit-headers.js';
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from '../rate-limit/rate-limiter.js';

/** The IETF rate-limit headers of a request; undefined when its principal is unlimited. */
export type LimitHeaders = Record<string, string> | undefined;

export interface AdmissionDeps {
  readonly auth: Pick<Authenticator, 'authenticate' | 'peek'>;
  readonly rateLimiter: RateLimiter;
  /** Failed credentials counted per client address (credentialFailures in create-gateway.ts). */
  readonly credentialFailures: FailureThrottle;
  /** Credentials verified lately: still authenticated from an address refused for failures. */
  readonly knownCredentials?: KnownCredentials;
}

/** The headers of a decision; throws RATE_LIMIT_EXCEEDED (carrying them) when it is a refusal. */
function limitHeadersOf(policy: RateLimitPolicy, decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = { ...rateLimitHeaders(policy, decision) };
  if (!decision.allowed) {
    throw new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${policy.limit} requests per ${policy.windowSeconds} s exceeded; retry in ${decision.retryAfterSeconds.toFixed(1)} s.`,
      { retryAfter: decision.retryAfterSeconds, headers, reason: 'rate_limit' },
    );
  }
  return headers;
}

/**
 * The bucket of an account's management calls (every scope but `query`): apart from its query
 * calls, so a caller who spent its query burst can still read its usage and manage its keys.
 */
export const manageBucket = (principal: Principal) =>
  // A console session's calls are all management: they have their own bucket (auth/authenticator.ts).
  principal.credential === 'session' ? principal.rateLimitBucket : `manage:${principal.accountId}`;

/**
 * A try-token's preview spends one of its account's previews of the day (a rolling allowance of
 * `perDay`, refilled one every 24 h / perDay, shared by every key and instance); throws
 * RATE_LIMIT_EXCEEDED when they are used up.
 */
export async function spendPreview(
  rateLimiter: RateLimiter,
  principal: Principal,
  perDay: number,
): Promise<void> {
  const policy = { limit: Math.max(1, perDay), windowSeconds: 86_400, burst: Math.max(1, perDay) };
  const decision =
    perDay <= 0 ? undefined : await rateLimiter.check(`previews:${principal.accountId}`, policy);
  if (decision?.allowed) return;
  const retryAfter = decision?.retryAfterSeconds ?? 86_400;
  throw new ApiError(
    'RATE_LIMIT_EXCEEDED',
    `This account's ${perDay} free previews a day are used up; the next one is available in ${Math.ceil(retryAfter / 60)} min. Calls with an API key are not affected.`,
    { retryAfter },
  );
}

/**
 * Spends one request of the principal's rate limit (in its bucket): the headers to send, or
 * undefined when the principal is unlimited; throws RATE_LIMIT_EXCEEDED (carrying the headers)
 * when it is spent. Synchronous when the limiter is.
 */
export function spendRateLimit(
  rateLimiter: RateLimiter,
  principal: Principal,
  bucket = principal.rateLimitBucket,
): LimitHeaders | Promise<LimitHeaders> {
  const limit = principal.rateLimit;
  if (limit.unlimited) return undefined;
  const decision = rateLimiter.check(bucket, limit.policy);
  return decision instanceof Promise
    ? decision.then((d) => limitHeadersOf(limit.policy, d))
    : limitHeadersOf(limit.policy, decision);
}

function withScope(principal: Principal, scope: Scope): Principal {
  if (!principal.scopes.includes(scope)) {
    // The detail's `field: "scope"` is what clients key on (the CLI's "the key lacks a scope"
    // hint); other 403s (network policy, embed tokens) carry none.
    throw new ApiError('FORBIDDEN', `This key lacks the "${scope}" scope.`, {
      details: [{ field: 'scope', message: `this route needs the "${scope}" scope` }],
    });
  }
  return principal;
}

/**
 * The principal of `authorization`, which must hold `scope`: UNAUTHENTICATED or FORBIDDEN
 * otherwise. Synchronous when the credential's verdict is cached. Then spend its rate limit
 * with `spendRateLimit(rateLimiter, principal)`.
 */
export function authorize(
  deps: Pick<AdmissionDeps, 'auth' | 'credentialFailures' | 'knownCredentials'>,
  authorization: string | undefined,
  scope: Scope,
  address: string,
): Principal | Promise<Principal> {
  const cached = deps.auth.peek(authorization);
  if (cached !== undefined) return withScope(cached, scope);
  return authenticate(deps, authorization, address).then((principal) => withScope(principal, scope));
}

/**
 * A credential that is not a cached verdict, authenticated under its address's failure
 * allowance: an address that has sent too many bad credentials is refused (429) before any store
 * lookup, so a flood of guesses costs the store nothing. A credential verified lately (on this
 * instance, within a day) is still authenticated as usual: whoever shares the address with the
 * guesser is not locked out.
 */
async function authenticate(
  deps: Pick<AdmissionDeps, 'auth' | 'credentialFailures' | 'knownCredentials'>,
  authorization: string | undefined,
  address: string,
): Promise<Principal> {
  const bucket = `credential-failures:${address}`;
  const wait = await deps.credentialFailures.lockedFor(bucket);
  if (wait > 0 && deps.knownCredentials?.has(authorization) !== true) {
    throw new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `Too many failed credentials from your address; retry in ${Math.ceil(wait)} s.`,
      { retryAfter: wait },
    );
  }
  try {
    const principal = await deps.auth.authenticate(authorization);
    deps.knownCredentials?.add(authorization);
    return principal;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'UNAUTHENTICATED')
      await deps.credentialFailures.recordFailure(bucket);
    throw error;
  }
}
