// The rate limiter contract shared by the in-memory and Redis implementations. The gateway asks
// it once per request, keyed by API key, with the key's resolved policy (plan-policies.ts), and
// turns the decision into headers (rate-limit-headers.ts) and, when denied, a 429.

/** How fast one key may call: `limit` requests per `windowSeconds`, plus `burst` at once. */
export interface RateLimitPolicy {
  /** Requests per window (the sustained rate); at least 1. */
  readonly limit: number;
  /** The window in seconds; the emission interval is `windowSeconds / limit`. */
  readonly windowSeconds: number;
  /** Extra requests allowed at once on top of `limit` (the GCRA tolerance, in requests). */
  readonly burst: number;
}

/** The answer for one check. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** The policy's `limit` (what `RateLimit-Policy` advertises as `q`). */
  readonly limit: number;
  /** Requests that could be made right now after this one (0 when denied). */
  readonly remaining: number;
  /**
   * Seconds (fractional) until the bucket is full again when allowed; when denied, seconds until
   * the next request would be admitted. (The `RateLimit` header's `t` is derived differently:
   * see rate-limit-headers.ts.)
   */
  readonly resetSeconds: number;
  /** Seconds (fractional) until a request of the same cost would be admitted; 0 when allowed. */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Spends `cost` (default 1) requests of `key`'s allowance under `policy` if it is there.
   * Never throws for an unreachable backend: implementations degrade, they do not fail a request.
   */
  check(key: string, policy: RateLimitPolicy, cost?: number): Promise<RateLimitDecision> | RateLimitDecision;
  /** Releases timers and connections; the limiter is unusable afterwards. */
  close(): Promise<void>;
  /** Which store answers now (for /metrics and /readyz); limiters that have one backend may omit it. */
  state?(): RateLimiterState;
}

/** A limiter's backend: the shared Redis one, or memory (alone, or as Redis's fallback). */
export interface RateLimiterState {
  readonly backend: 'memory' | 'redis';
  /** A Redis limiter answering from memory now: each instance limits on its own. */
  readonly fallback: boolean;
  /** Times it fell back to memory since it started. */
  readonly fallbacks: number;
}

/** The two log levels the limiters use (pino-compatible). */
export interface RateLimitLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/** Milliseconds on a monotonic scale (defaults to `performance.now`); injectable for tests. */
export type Clock = () => number;
