// The gateway bench's options: shared by the bench and its report (kept apart so the two do not
// import each other).

export interface GatewayBenchOptions {
  /** Concurrent connections (a, b, d) and workers (c); at least 64 for the figures. */
  readonly connections: number;
  /** Seconds per measured window. */
  readonly seconds: number;
  /** Unmeasured seconds per side before the first pair. */
  readonly warmupSeconds: number;
  /** A/B pairs per comparison (the issue asks for at least 5). */
  readonly pairs: number;
  /** A pair with a window over this CPU steal fraction is dropped. */
  readonly maxSteal: number;
  /** Scenario e: concurrent identical misses. */
  readonly coalesceCalls: number;
  /** Scenario e: how long the warehouse query takes (longer than the calls take to arrive). */
  readonly coalesceQueryMs: number;
  /** Scenario f: distinct param combinations to send. */
  readonly memoryCalls: number;
  /** Scenario f stops here (and says so) if memoryCalls are not done yet. */
  readonly memoryBudgetSeconds: number;
  /** Scenario f: calls between RSS samples. */
  readonly memoryChunk: number;
  /** Pin servers to CPU 1 and this process (the load generator) to CPU 0. */
  readonly pin: boolean;
  /** QUARRY_LOG_LEVEL of the gateway (its per-request access line is at info). */
  readonly logLevel: string;
  readonly pgUrl: string;
}
