// OWASP API8:2023 Security Misconfiguration. What the gateway tells and allows by default: every
// answer is nosniff and typed; HTML pages carry a CSP that forbids framing and inline script; no
// answer names the software or leaks a stack trace or a path; no cross-origin reads are granted;
// readiness details and metrics are for the operator token only; an unknown method is a 405 with
// Allow (never echoed, as TRACE would); a client dripping its headers is cut off.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;

beforeAll(async () => {
  w = await createAttackWorld({ label: 'misconf', env: { QUARRY_HEADERS_TIMEOUT_MS: '2000' } });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const LEAKS = [/\bat [\w.<>]+ \(/, /node_modules/, /\/work\//, /\.ts:\d+/, /Error: /, /stack/i];

describe('API8 security misconfiguration', () => {
  it('types every answer, sends nosniff, and names no software', async () => {
    const answers = [
      await w.call('GET', '/healthz'),
      await w.call('GET', '/v1/openapi.json'),
      await w.call('GET', '/docs'),
      await w.call('POST', '/v1/query', { key: w.attacker.key, json: { source: w.names.listed } }),
      await w.call('GET', '/nowhere'),
    ];
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-type')).toBeTruthy();
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(res.headers.get('server')).toBeNull();
    }
  });

  it('serves HTML under a CSP that forbids framing and inline script', async () => {
    const docs = await w.call('GET', '/docs');
    const csp = docs.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|unsafe-eval|\*)/);
    // Nothing is loaded from elsewhere (an example body may still mention a URL as text).
    expect(docs.text).not.toMatch(/(?:src|href|action)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(docs.text).not.toMatch(/url\(\s*["']?(?:https?:)?\/\//i);
  });

  it('answers malformed requests in the envelope, with no stack trace or path', async () => {
    const bad = [
      await w.call('POST', '/v1/query', {
        key: w.attacker.key,
        raw: '{"source":',
        headers: { 'content-type': 'application/json' },
      }),
      await w.call('POST', '/v1/query', {
        key: w.attacker.key,
        raw: 'source=x',
        headers: { 'content-type': 'text/plain' },
      }),
      await w.call('POST', '/v1/query', { key: w.attacker.key, json: ['not', 'an', 'object'] }),
      await w.call('POST', '/v1/query', { key: w.attacker.key, json: { source: { $ne: null } } }),
      await w.call('POST', '/v1/query', {
        key: w.attacker.key,
        json: { source: w.names.listed, params: { upto: '1; DROP TABLE x' } },
      }),
      await w.call('GET', `/v1/analytics/${'%00'.repeat(10)}`, { key: w.attacker.key }),
      await w.call('GET', '/v1/keys/%2e%2e%2f%2e%2e%2fetc%2fpasswd', { key: w.attacker.key }),
      // NUL characters, which PostgreSQL text cannot hold, in a path, a body and a JSON document.
      await w.call('DELETE', '/v1/keys/key_%00', { key: w.attacker.key }),
      await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'nul\u0000name' } }),
      await w.call('POST', '/v1/query', { key: w.attacker.key, json: { source: 'x\u0000y' } }),
      await w.call('PUT', `/v1/owner/analytics/${w.names.listed}/listing`, {
        key: w.owner.key,
        json: { title: 'Numbers', description: 'nul \u0000 inside' },
      }),
    ];
    for (const res of bad) {
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.status, `${bad.indexOf(res)}: ${res.text}`).toBeLessThan(500);
      expect(typeof res.body?.error?.code, res.text).toBe('string');
      for (const leak of LEAKS) expect(res.text).not.toMatch(leak);
    }
  });

  it('grants no cross-origin reads, and answers TRACE and unknown methods with 405 and Allow', async () => {
    const cross = await w.call('GET', '/v1/account', {
      key: w.attacker.key,
      headers: { origin: 'https://evil.example' },
    });
    expect(cross.headers.get('access-control-allow-origin')).toBeNull();
    expect(cross.headers.get('access-control-allow-credentials')).toBeNull();
    const preflight = await w.call('OPTIONS', '/v1/account', {
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'DELETE' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const trace = await fetch(`${w.gateway.url}/v1/query`, {
      method: 'PATCH',
      headers: { 'x-secret': 'echo-me' },
    });
    const text = await trace.text();
    expect(trace.status).toBe(405);
    expect(trace.headers.get('allow')).toMatch(/POST/);
    expect(text).not.toContain('echo-me');
  });

  it('tells readiness details and metrics to the operator token only', async () => {
    const anonymous = await w.call('GET', '/readyz');
    expect(anonymous.body).toEqual({ status: 'ok' });
    const withKey = await w.call('GET', '/readyz', { key: w.owner.key });
    expect(withKey.body).toEqual({ status: 'ok' });
    const operator = await w.call('GET', '/readyz', { headers: { authorization: `Bearer ${w.adminToken}` } });
    expect(operator.body.checks).toBeDefined();
    expectErrorEnvelope(await w.call('GET', '/metrics'), 401, 'UNAUTHENTICATED');
  });

  it('cuts off a client that drips its request headers (slowloris)', async () => {
    const { port } = w.gateway;
    const started = performance.now();
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        const drip = setInterval(() => socket.write('X-Drip: 1\r\n'), 500);
        socket.on('close', () => {
          clearInterval(drip);
          resolve(performance.now() - started);
        });
      });
      socket.on('error', () => {});
      setTimeout(() => reject(new Error('the dripping socket was never closed')), 15_000);
    });
    // QUARRY_HEADERS_TIMEOUT_MS is 2 s here; the server checks every second.
    expect(closedAfter).toBeLessThan(6_000);
    expect((await w.call('GET', '/healthz')).status).toBe(200);
  });
});
