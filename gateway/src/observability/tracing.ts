// Tracing, off unless configured (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT: config.ts).
// Off, `startRequest` answers undefined and every stage asks `trace?.child(…)`: no span object,
// no clock read, and the OpenTelemetry SDK is never loaded (observability/otel-tracing.ts is
// imported only when tracing is on). On, each request is one server span that continues the
// caller's W3C `traceparent`, with child spans for the query's stages (admission, cache,
// warehouse, metering), exported in batches over OTLP/HTTP; the answer carries `traceparent`.

import type { TraceSpan, Tracing, TracingConfig } from './tracing-types.js';

export type { TraceSpan, Tracing, TracingConfig } from './tracing-types.js';

export const NO_TRACING: Tracing = {
  enabled: false,
  startRequest: () => undefined,
  shutdown: async () => {},
};

/** The tracing of a gateway: NO_TRACING without a config, else the OpenTelemetry SDK, loaded now. */
export async function createTracing(
  config: TracingConfig | undefined,
  build: { readonly version: string; readonly commit: string },
): Promise<Tracing> {
  if (config === undefined) return NO_TRACING;
  const { createOtelTracing } = await import('./otel-tracing.js');
  return createOtelTracing(config, build);
}

/** Ends `span` as failed with `error` (a no-op without a span). */
export function failSpan(span: TraceSpan | undefined, error: unknown): void {
  if (span === undefined) return;
  span.fail(error);
  span.end();
}
