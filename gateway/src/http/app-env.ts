// Typed context for every route and middleware: the request id, the authenticated principal and
// the injected services (STYLE.md: services reach handlers through typed context, not globals).
import type { ResolvedRateLimit } from '../rate-limit/plan-policies.js';
import type { GatewayServices } from '../services/gateway-services.js';

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
}

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    services: GatewayServices;
    /** Rate-limit headers of this request, added to every response (errors included). */
    rateLimitHeaders: Readonly<Record<string, string>> | undefined;
  };
}
