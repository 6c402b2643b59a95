// docs/deploy.md's HAProxy configuration at its edges (issue 37, finding 6), run by HAProxy itself:
//   - with every instance failing /readyz (the store down everywhere), a caller gets a JSON 503 in
//     the gateway's envelope with retry_after and a request id, not HAProxy's HTML page; a broken
//     answer from an instance is a JSON 502 the same way;
//   - /v1/admin/… and /metrics never reach an instance through the public frontend, however the
//     path is spelt (case, slashes, percent-encoding, dot segments), while every other path does.
// The instances are a stand-in that records each path it is sent; the configuration is read out
// of the guide (only the listen address, the admin socket and the servers' addresses replaced).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@quarry/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guideHaproxyConfig } from './support/deploy-guide.js';
import { freePort } from './support/gateway-process.js';
import { type HaproxyProcess, haproxyAvailable, startHaproxy } from './support/haproxy.js';
import { serviceUp } from './support/test-services.js';

const up = serviceUp(await haproxyAvailable());
const GUIDE_SERVERS = ['10.0.0.11:8787', '10.0.0.12:8787', '10.0.0.13:8787'];

/** Operator paths as a caller may spell them (the gateway routes most of these to the real one). */
const OPERATOR_SPELLINGS = [
  '/metrics',
  '/metrics/',
  '/METRICS',
  '//metrics',
  '/%6detrics',
  '/x/../metrics',
  '/x/%2e%2e/metrics',
  '/v1/admin/payouts',
  '/v1/admin',
  '/V1/Admin/payouts',
  '/v1//admin/payouts',
  '/v1%2Fadmin/payouts',
  '/v1/%61dmin/payouts',
];

/** A HAProxy duration (`70s`, `1m`, `500ms`, a bare number of ms) in milliseconds. */
function haproxyMs(value: string): number {
  const match = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (match === null) throw new Error(`not a HAProxy duration: ${value}`);
  const unit = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'];
  return Number(match[1]) * (unit as number);
}

// Section 5 of the guide: the longest query an owner may deploy, the shutdown grace that lets it
// finish, and the proxy's timeouts hang together. A default raised in config.ts without the
// guide's `timeout server` would have HAProxy cut the long queries a restart lets finish.
describe("the guide's HAProxy timeouts", () => {
  it("are above the gateway's default shutdown grace, itself above the longest analytic", async () => {
    const config = await guideHaproxyConfig([]);
    const defaults = loadConfig({});
    expect(defaults.shutdownGraceMs).toBeGreaterThan(defaults.maxAnalyticTimeoutMs);
    for (const which of ['server', 'client']) {
      const lines = [...config.matchAll(new RegExp(`^\\s*timeout\\s+${which}\\s+(\\S+)`, 'gm'))];
      expect(lines, `timeout ${which}`).toHaveLength(1);
      expect(haproxyMs(lines[0]?.[1] as string), `timeout ${which}`).toBeGreaterThan(
        defaults.shutdownGraceMs,
      );
    }
  });
});

describe.runIf(up)("the guide's HAProxy edge", () => {
  let dir: string;
  let haproxy: HaproxyProcess;
  let instance: Server;
  let base: string;
  let ready = true;
  const reached: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-haproxy-edge-'));
    instance = createServer((req, res) => {
      if (req.url === '/readyz') {
        res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
        res.end(ready ? '{"status":"ok"}' : '{"status":"unavailable"}');
        return;
      }
      reached.push(req.url ?? '');
      if (req.url === '/broken') {
        // Not HTTP: HAProxy answers 502 itself.
        req.socket.end('garbage\r\n\r\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":true}');
    });
    await new Promise<void>((resolve) => instance.listen(0, '127.0.0.1', resolve));
    const port = (instance.address() as AddressInfo).port;
    const proxyPort = await freePort();
    const adminSocket = join(dir, 'admin.sock');
    const config = await guideHaproxyConfig([
      ['/run/haproxy/admin.sock', adminSocket],
      ['bind :443 ssl crt /etc/haproxy/quarry.pem', `bind 127.0.0.1:${proxyPort}`],
      ...GUIDE_SERVERS.map((address) => [address, `127.0.0.1:${port}`] as const),
    ]);
    await writeFile(join(dir, 'haproxy.cfg'), config);
    haproxy = await startHaproxy(join(dir, 'haproxy.cfg'), adminSocket);
    base = `http://127.0.0.1:${proxyPort}`;
    await waitForServers('UP');
  }, 60_000);
  afterAll(async () => {
    await haproxy?.stop();
    await new Promise((resolve) => instance?.close(resolve));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function waitForServers(status: 'UP' | 'DOWN'): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await Promise.all(['g1', 'g2', 'g3'].map((s) => haproxy.server('gateways', s)));
      if (rows.every((r) => r.status === status)) return;
      if (Date.now() > deadline) throw new Error(`servers not ${status}: ${rows.map((r) => r.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const get = (path: string) =>
    new Promise<{ status: number; headers: Record<string, string>; text: string }>((resolve, reject) => {
      // node:http sends the path as written (fetch would normalise it first).
      const req = request(`${base}${path}`, { method: 'GET' }, (res: IncomingMessage) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, text }),
        );
      });
      req.on('error', reject);
      req.end();
    });

  it('keeps /v1/admin and /metrics off the public frontend, in every spelling, with a JSON 404', async () => {
    for (const path of OPERATOR_SPELLINGS) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.headers['content-type']).toBe('application/json');
      const body = JSON.parse(res.text);
      expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: [] });
      expect(body.error.request_id).toBe(res.headers['x-request-id']);
    }
    expect(reached).toEqual([]);
    // Everything else goes through.
    for (const path of [
      '/v1/query',
      '/v1/analytics/metrics',
      '/v1/administrator',
      '/metricsfoo',
      '/healthz',
    ]) {
      expect((await get(path)).status, path).toBe(200);
    }
    expect(reached).toEqual([
      '/v1/query',
      '/v1/analytics/metrics',
      '/v1/administrator',
      '/metricsfoo',
      '/healthz',
    ]);
  });

  it("answers a broken instance's reply with a JSON 502 in the envelope", async () => {
    const res = await get('/broken');
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toBe('application/json');
    const body = JSON.parse(res.text);
    expect(body.error).toMatchObject({ code: 'UPSTREAM_ERROR', retry_after: 1 });
    expect(body.error.request_id).toBe(res.headers['x-request-id']);
  });

  it('answers with a JSON 503, retry_after and a request id when no instance is ready', async () => {
    ready = false;
    await waitForServers('DOWN');
    const res = await get('/v1/query');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['retry-after']).toBe('1');
    const body = JSON.parse(res.text);
    expect(body).toEqual({
      error: {
        code: 'SOURCE_UNAVAILABLE',
        message: expect.stringMatching(/retry/),
        request_id: res.headers['x-request-id'],
        retry_after: 1,
        details: [],
      },
    });
    ready = true;
  }, 60_000);
});
