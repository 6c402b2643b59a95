// Tracing end to end: a gateway configured with the standard OTEL_EXPORTER_OTLP_ENDPOINT sends
// the trace of one query to an OTLP/HTTP receiver (in process here, decoding the JSON export):
// the server span continues the caller's W3C `traceparent`, its stages (admission, cache,
// warehouse, metering) are its children, and the answer carries the trace's `traceparent`.
// Without the variables, tracing is off and the SDK is never loaded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayListener } from '../adapters/node-listener.js';
import { loadConfig } from '../config.js';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';
import { NO_TRACING } from './tracing.js';

interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly attributes: Record<string, unknown>;
  readonly service: string | undefined;
}

/** OTLP JSON ids are hex (the spec's JSON mapping); base64 is accepted too. */
const hex = (id: unknown) =>
  typeof id !== 'string' || id === ''
    ? ''
    : /^[0-9a-f]+$/i.test(id)
      ? id.toLowerCase()
      : Buffer.from(id, 'base64').toString('hex');

/** One OTLP attribute as the JSON export writes it. */
interface OtlpAttribute {
  readonly key: string;
  readonly value?: {
    readonly stringValue?: string;
    readonly intValue?: number | string;
    readonly boolValue?: boolean;
    readonly doubleValue?: number;
  };
}

const attributes = (list: readonly OtlpAttribute[] | undefined) =>
  Object.fromEntries(
    (list ?? []).map((a) => [
      a.key,
      a.value?.stringValue ??
        (a.value?.intValue === undefined ? undefined : Number(a.value.intValue)) ??
        a.value?.boolValue ??
        a.value?.doubleValue,
    ]),
  );

/** An OTLP/HTTP traces receiver: every span of every export it was sent. */
async function startReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              attributes: attributes(s.attributes),
              service: resource['service.name'] as string | undefined,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, spans, contentTypes, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tg: TestGateway;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    tg = await createTestGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'quarry-test',
      // Exported within 100 ms rather than the SDK's 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    server = createServer(createGatewayListener(tg.gateway.app, tg.gateway.services));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await tg?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  it("sends a query's spans, in the caller's trace, to the OTLP receiver", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const res = await fetch(`${base}/v1/query`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tg.demoKey}`,
        'content-type': 'application/json',
        traceparent: `00-${callerTrace}-${callerSpan}-01`,
      },
      body: JSON.stringify({ source: 'sales-by-region', params: { year: 2023 } }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const answered = res.headers.get('traceparent');
    expect(answered).toMatch(new RegExp(`^00-${callerTrace}-[0-9a-f]{16}-01$`));
    const serverSpanId = (answered as string).split('-')[2];

    // Flushed by the batch processor within its delay; close() would flush it too.
    const deadline = Date.now() + 10_000;
    const mine = () => receiver.spans.filter((s) => s.traceId === callerTrace);
    while (mine().length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const spans = mine();
    const root = spans.find((s) => s.spanId === serverSpanId);
    expect(root, JSON.stringify(spans)).toMatchObject({
      name: 'POST /v1/query',
      parentSpanId: callerSpan,
      service: 'quarry-test',
    });
    expect(root?.attributes).toMatchObject({
      'http.route': '/v1/query',
      'http.response.status_code': 200,
      'quarry.cache': 'MISS',
      'quarry.analytic': 'sales-by-region',
    });
    // Each stage is a child of the request's span: the warehouse ran (a cache miss), and every
    // span of the query is in the caller's trace under that span, none orphaned.
    const children = spans.filter((s) => s.parentSpanId === serverSpanId).map((s) => s.name);
    expect(children).toEqual(
      expect.arrayContaining(['quarry.admission', 'quarry.cache', 'quarry.warehouse', 'quarry.metering']),
    );
    expect(spans.filter((s) => s !== root && s.parentSpanId !== serverSpanId)).toEqual([]);
    expect(receiver.contentTypes[0]).toBe('POST /v1/traces application/json');
  });

  it('starts a trace of its own without a traceparent, on Hono routes too', async () => {
    const res = await fetch(`${base}/v1/analytics/sales-by-region?year=2022`, {
      headers: { authorization: `Bearer ${tg.demoKey}` },
    });
    expect(res.status).toBe(200);
    await res.text();
    const answered = res.headers.get('traceparent') as string;
    expect(answered).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = answered.split('-');
    const deadline = Date.now() + 10_000;
    const root = () => receiver.spans.find((s) => s.traceId === traceId && s.spanId === spanId);
    while (root() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(root()).toMatchObject({ name: 'GET /v1/analytics/:name', parentSpanId: '' });
    const line = tg.logs.records().find((r) => r.msg === 'request' && r.trace_id === traceId);
    expect(line).toBeDefined();
  });
});

describe('tracing off', () => {
  it('is off without an OTLP endpoint, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    const url = 'http://collector:4318';
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: url }).tracing?.url).toBe(`${url}/v1/traces`);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${url}/custom`, OTEL_EXPORTER_OTLP_ENDPOINT: url })
        .tracing?.url,
    ).toBe(`${url}/custom`);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBeUndefined();
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_TRACES_EXPORTER: 'none' }).tracing,
    ).toBeUndefined();
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: only http\/json/);
  });

  it('answers without traceparent (the gateway runs NO_TRACING)', async () => {
    const tg = await createTestGateway();
    try {
      expect(tg.gateway.services.tracing).toBe(NO_TRACING);
      const res = await tg.call('POST', '/v1/query', {
        key: tg.demoKey,
        body: { source: 'sales-by-region', params: { year: 2023 } },
        headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('traceparent')).toBeNull();
    } finally {
      await tg.close();
    }
  });
});
