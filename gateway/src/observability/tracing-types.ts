// The tracing contract (tracing.ts chooses the implementation, otel-tracing.ts is the real one):
// a request's span and its stages' child spans, ended by whoever started them.

/** One span of a request's trace. */
export interface TraceSpan {
  /** 32 hex digits. */
  readonly traceId: string;
  /** This span as a W3C `traceparent` header value. */
  traceparent(): string;
  /** A span of a stage of this one (ended by the caller). */
  child(name: string): TraceSpan;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Renames the span (a request's span is named once its route is known). */
  rename(name: string): void;
  /** Records the error and marks the span failed (does not end it). */
  fail(error: unknown): void;
  end(): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /**
   * The server span of one request, a child of the caller's trace when `traceparent` is a valid
   * W3C header value; undefined when tracing is off.
   */
  startRequest(name: string, traceparent: string | undefined): TraceSpan | undefined;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** Where and how spans are exported (config.ts builds it from the OTEL_* variables). */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  readonly url: string;
  readonly serviceName: string;
  /** Most time a finished span waits before it is exported (OTEL_BSP_SCHEDULE_DELAY, default 5 s). */
  readonly exportDelayMs: number;
}
