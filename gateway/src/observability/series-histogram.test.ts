import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createSeriesHistogram } from './series-histogram.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The same observations through prom-client's own Histogram and Counter, and through ours. */
async function bothWays(observations: readonly (readonly [string, string, string, number])[]) {
  const theirs = new Registry();
  const histogram = new Histogram({
    name: 'quarry_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BUCKETS,
    registers: [theirs],
  });
  const counter = new Counter({
    name: 'quarry_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [theirs],
  });
  const ours = new Registry();
  const series = createSeriesHistogram({
    name: 'quarry_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: BUCKETS,
    counter: {
      name: 'quarry_http_requests_total',
      help: 'HTTP requests by route template, method and status',
    },
    registers: [ours],
  });
  for (const [method, route, status, seconds] of observations) {
    const labels = { method, route, status };
    histogram.observe(labels, seconds);
    counter.inc(labels);
    series.series(method, route, status).observe(seconds);
  }
  return { theirs: await theirs.metrics(), ours: await ours.metrics() };
}

describe('createSeriesHistogram', () => {
  it("writes exactly what prom-client's Histogram and Counter write", async () => {
    const { theirs, ours } = await bothWays([
      ['POST', '/v1/query', '200', 0.0004],
      ['POST', '/v1/query', '200', 0.001], // on a bound: counted in it
      ['POST', '/v1/query', '200', 0.0011],
      ['POST', '/v1/query', '200', 10],
      ['POST', '/v1/query', '200', 42], // above every bound: +Inf only
      ['GET', '/v1/analytics/:name', '429', 0.003],
      ['POST', '/v1/query', '499', 0.2],
      // A label value that must be escaped in the text format.
      ['GET', 'un"matched\\\n', '404', 0.01],
    ]);
    expect(ours).toBe(theirs);
    expect(ours).toContain('quarry_http_requests_total{method="POST",route="/v1/query",status="200"} 5');
    expect(ours).toContain(
      'quarry_http_request_duration_seconds_bucket{le="0.001",method="POST",route="/v1/query",status="200"} 2',
    );
  });

  it('agrees with prom-client on any observations', async () => {
    const label = fc.constantFrom('POST', 'GET', '/v1/query', '/healthz', '200', '503');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(label, label, label, fc.double({ min: 0, max: 100, noNaN: true })), {
          maxLength: 40,
        }),
        async (observations) => {
          const { theirs, ours } = await bothWays(observations);
          expect(ours).toBe(theirs);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('writes nothing but its help and type before the first observation', async () => {
    const { theirs, ours } = await bothWays([]);
    expect(ours).toBe(theirs);
  });

  it('refuses bounds that do not ascend, and the wrong number of label values', () => {
    const registers: Registry[] = [];
    expect(() =>
      createSeriesHistogram({ name: 'x', help: 'x', labelNames: ['a'], buckets: [1, 1], registers }),
    ).toThrow(RangeError);
    const h = createSeriesHistogram({
      name: 'y',
      help: 'y',
      labelNames: ['a', 'b'],
      buckets: [1],
      registers,
    });
    expect(() => h.series('only one')).toThrow(RangeError);
  });
});
