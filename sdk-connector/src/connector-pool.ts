// Public shapes of the session pool every connector gets (implementation: session-pool.ts).

/** Pool settings; each has a sensible default, engines override via `plugin.defaultPool`. */
export interface PoolOptions {
  /** Sessions kept open even when idle (default 0). */
  readonly min: number;
  /** Most sessions open at once (default 10). */
  readonly max: number;
  /** How long `acquire` waits for a session before POOL_EXHAUSTED (default 5,000 ms). */
  readonly acquireTimeoutMs: number;
  /** Most callers waiting for a session; past it, POOL_EXHAUSTED at once (default 1,000). */
  readonly maxWaiting: number;
  /** An idle session older than this is closed (default 30,000 ms). */
  readonly idleTimeoutMs: number;
  /** Run `session.validate()` before handing out a session (default true). */
  readonly validateOnBorrow: boolean;
  /** First delay after a failed create; doubles up to `createRetryMaxMs` (default 100 ms). */
  readonly createRetryBaseMs: number;
  /** Longest delay between failed creates (default 5,000 ms). */
  readonly createRetryMaxMs: number;
  /**
   * How long opening one session (connect, TLS, authentication, startup) may take, whatever the
   * driver's own connect timeout says: past it the open fails with CONNECT_FAILED and a session
   * that still arrives is closed (default 10,000 ms).
   */
  readonly connectTimeoutMs: number;
}

/** Live pool counters, for /metrics and /readyz. */
export interface PoolStats {
  /** Sessions open (busy + idle). */
  readonly total: number;
  readonly idle: number;
  readonly busy: number;
  /** Callers waiting for a session. */
  readonly waiting: number;
  /** Sessions created and destroyed since start. */
  readonly created: number;
  readonly destroyed: number;
}
