// The access log's own setting (QUARRY_ACCESS_LOG), apart from QUARRY_LOG_LEVEL: request lines
// survive a gateway log kept at `warn`, health probes and scrapes are debug lines, `off` writes
// none; metrics are counted whatever the setting.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { type AccessLogSetting, createRequestRecorder } from './access-log.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics.js';

const BUILD = { version: '9.9.9', commit: 'abc123', node: process.versions.node };

function recorder(level: string, setting: AccessLogSetting) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      callback();
    },
  });
  const metrics = createMetrics({ defaultMetrics: false, build: BUILD });
  const logger = createLogger({ level, destination });
  return {
    lines,
    metrics,
    logger,
    requests: createRequestRecorder(metrics, logger, { setting, build: BUILD }),
  };
}

const query = {
  method: 'POST',
  route: '/v1/query',
  status: 200,
  seconds: 0.01,
  requestId: 'r1',
  accountId: 'a1',
};
const probe = { ...query, method: 'GET', route: '/readyz', requestId: 'r2', accountId: undefined };

describe('access lines', () => {
  it('have their own setting, QUARRY_ACCESS_LOG (info by default); a bad value refuses to start', () => {
    expect(loadConfig({ QUARRY_LOG_LEVEL: 'warn' }).accessLog).toBe('info');
    expect(loadConfig({ QUARRY_ACCESS_LOG: 'off' }).accessLog).toBe('off');
    expect(() => loadConfig({ QUARRY_ACCESS_LOG: 'loud' })).toThrow(/QUARRY_ACCESS_LOG/);
  });

  it('are written at QUARRY_LOG_LEVEL=warn, with the build, while the gateway log stays at warn', () => {
    const { lines, logger, requests } = recorder('warn', 'info');
    logger.info('not an access line');
    requests.record({ ...query, address: '203.0.113.9', userAgent: 'ua/1', bytes: 42, cache: 'HIT' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      log: 'access',
      build: '9.9.9+abc123',
      request_id: 'r1',
      client: '203.0.113.9',
      user_agent: 'ua/1',
      bytes: 42,
      cache: 'HIT',
      status: 200,
    });
  });

  it('leave health probes and scrapes out at info, and write them at debug', () => {
    const info = recorder('info', 'info');
    info.requests.record(probe);
    info.requests.record({ ...probe, route: '/metrics' });
    info.requests.record({ ...probe, route: '/healthz' });
    expect(info.lines).toEqual([]);
    const debug = recorder('warn', 'debug');
    debug.requests.record(probe);
    debug.requests.record(query);
    expect(debug.lines.map((l) => l.route)).toEqual(['/readyz', '/v1/query']);
  });

  it('are not written with QUARRY_ACCESS_LOG=off, and the metrics still count', async () => {
    const { lines, metrics, requests } = recorder('debug', 'off');
    requests.record(query);
    requests.record({ ...query, status: 429, errorCode: 'QUOTA_EXCEEDED' });
    expect(lines).toEqual([]);
    const text = await metrics.registry.metrics();
    expect(text).toContain('quarry_http_requests_total{method="POST",route="/v1/query",status="200"} 1');
    expect(text).toContain('quarry_rate_limited_total{reason="quota"} 1');
  });

  it('count a caller who hung up as 499 CLIENT_CLOSED, not as the 504 its reply would have been', async () => {
    const { lines, metrics, requests } = recorder('info', 'info');
    requests.record({ ...query, status: 504, errorCode: 'QUERY_TIMEOUT', aborted: true });
    expect(lines[0]).toMatchObject({ status: 499, reply_status: 504, error_code: 'CLIENT_CLOSED' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('quarry_http_requests_total{method="POST",route="/v1/query",status="499"} 1');
    expect(text).not.toContain('status="504"');
    expect(text).toContain('quarry_client_aborts_total{route="/v1/query"} 1');
    expect(text).toContain('quarry_http_errors_total{route="/v1/query",code="CLIENT_CLOSED"} 1');
  });

  it('export the build as quarry_build_info', async () => {
    const { metrics } = recorder('info', 'info');
    expect(await metrics.registry.metrics()).toContain(
      `quarry_build_info{version="9.9.9",commit="abc123",node="${process.versions.node}"} 1`,
    );
  });
});
