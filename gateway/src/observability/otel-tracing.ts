// Tracing on the OpenTelemetry SDK: loaded only when tracing is configured (tracing.ts). Spans are
// parented explicitly (no context manager, no async hooks), batched, and exported as OTLP/HTTP
// JSON to the configured URL. The SDK reads the other standard variables itself:
// OTEL_EXPORTER_OTLP_HEADERS / _TRACES_HEADERS, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*.
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TraceSpan, Tracing, TracingConfig } from './tracing-types.js';

const propagator = new W3CTraceContextPropagator();
const getter = {
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
  get: (carrier: Record<string, string>, key: string) => carrier[key],
};

export function createOtelTracing(
  config: TracingConfig,
  build: { readonly version: string; readonly commit: string },
): Tracing {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      'service.version': build.version,
      'vcs.ref.head.revision': build.commit,
    }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url }), {
        scheduledDelayMillis: config.exportDelayMs,
      }),
    ],
  });
  const tracer = provider.getTracer('quarry-gateway', build.version);

  const wrap = (span: Span): TraceSpan => {
    const ids = span.spanContext();
    return {
      traceId: ids.traceId,
      traceparent: () => `00-${ids.traceId}-${ids.spanId}-0${ids.traceFlags & 1}`,
      child: (name) =>
        wrap(tracer.startSpan(name, { kind: SpanKind.INTERNAL }, trace.setSpan(ROOT_CONTEXT, span))),
      setAttribute: (key, value) => {
        span.setAttribute(key, value);
      },
      rename: (name) => {
        span.updateName(name);
      },
      fail: (error) => {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        const code = (error as { code?: unknown } | undefined)?.code;
        if (typeof code === 'string') span.setAttribute('quarry.error_code', code);
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      },
      end: () => span.end(),
    };
  };

  return {
    enabled: true,
    startRequest(name, traceparent) {
      const parent: Context =
        traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, { traceparent }, getter);
      return wrap(tracer.startSpan(name, { kind: SpanKind.SERVER }, parent));
    },
    shutdown: () => provider.shutdown(),
  };
}
