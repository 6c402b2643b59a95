// Graceful shutdown of a real gateway process: on SIGTERM a query already running finishes with
// 200, the port stops accepting new connections, and the process exits 0 within its grace period.
// With QUARRY_SHUTDOWN_DELAY_MS it first fails /readyz for that long while still serving.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const GRACE_MS = 5000;
const suffix = uniqueSuffix();
const http = createHttpClient();

/** Opens a brand-new TCP connection (no keep-alive pool) and reports how it went. */
function freshConnection(url: string): Promise<'refused' | number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/healthz`, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve('refused');
      else reject(error);
    });
    req.end();
  });
}

describe.runIf(pgUp)('graceful shutdown', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let key: string;
  const name = `slow-${suffix}`;
  const column = `answer_${suffix}`;
  // Both gateways share the store, so they share its secret key (another one is refused at start).
  const secretKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, secretKey),
        QUARRY_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      },
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `shutdown-${suffix}@e2e.quarry.test`, name: 'shutdown' },
    });
    key = signUp.body.key.secret;
    const connection = await http.request(gateway.url, 'POST', '/v1/owner/connections', {
      key,
      json: {
        name: 'pg',
        type: 'postgres',
        config: { host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' },
      },
    });
    expect(connection.status, connection.text).toBe(201);
    const analytic = await http.request(gateway.url, 'POST', '/v1/owner/analytics', {
      key,
      json: { name, connection: 'pg', sql: `SELECT 42 AS ${column} FROM pg_sleep(1)`, visibility: 'private' },
    });
    expect(analytic.status, analytic.text).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 30_000);

  it('finishes the in-flight query, refuses new connections and exits 0 within the grace period', async () => {
    const inFlight = http.request(gateway.url, 'POST', '/v1/query', {
      key,
      json: { source: name, params: {} },
    });
    // Signal only once the query runs in the warehouse, so it is surely in flight.
    const waitUntil = performance.now() + 10_000;
    while (performance.now() < waitUntil) {
      const running = await withPg((c) =>
        c.query(
          `SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
          [column],
        ),
      );
      if (running.rowCount) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const signalled = performance.now();
    gateway.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    expect(await freshConnection(gateway.url), 'a new connection during the drain').toBe('refused');

    const response = await inFlight;
    expect(response.status, response.text).toBe(200);
    expect(response.body.results).toEqual([{ [column]: 42 }]);
    expect(await freshConnection(gateway.url), 'a new connection after the drain').toBe('refused');

    const exit = await gateway.exited;
    const exitedAfter = performance.now() - signalled;
    console.log(`[e2e] gateway exited ${Math.round(exitedAfter)} ms after SIGTERM`);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitedAfter).toBeLessThan(GRACE_MS);
    expect(gateway.stdout()).toContain('"stopped"');
  });

  it('with QUARRY_SHUTDOWN_DELAY_MS fails /readyz first while still serving, then stops listening', async () => {
    const DELAY_MS = 2_000;
    const delayed = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, secretKey),
        QUARRY_SHUTDOWN_DELAY_MS: String(DELAY_MS),
      },
    });
    try {
      expect((await http.request(delayed.url, 'GET', '/readyz')).status).toBe(200);
      const signalled = performance.now();
      delayed.child.kill('SIGTERM');
      // The proxy's health check sees it going: 503 on new connections, which are still served.
      let ready = 200;
      while (ready === 200 && performance.now() - signalled < DELAY_MS / 2) {
        ready = (await http.request(delayed.url, 'GET', '/readyz')).status;
      }
      expect(ready).toBe(503);
      expect(await freshConnection(delayed.url), 'a new connection while stopping').toBe(200);
      const served = await http.request(delayed.url, 'POST', '/v1/query', { key, json: { source: name } });
      expect(served.status, served.text).toBe(200);
      // After the delay it stops listening and exits 0.
      const exit = await delayed.exited;
      const exitedAfter = performance.now() - signalled;
      console.log(`[e2e] delayed gateway exited ${Math.round(exitedAfter)} ms after SIGTERM`);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(exitedAfter).toBeGreaterThanOrEqual(DELAY_MS);
      expect(await freshConnection(delayed.url), 'a new connection after the delay').toBe('refused');
    } finally {
      await delayed.stop();
    }
  }, 60_000);

  // An agent's `GET /mcp` event stream stays open as long as the agent is connected: a drain that
  // waited for it would hold the restart for the whole grace period (by default above a minute).
  it('ends MCP event streams when it drains, and exits long before the grace period', async () => {
    const agentHost = await startGateway({
      env: { ...postgresStoreEnv(store.databaseUrl, secretKey), QUARRY_SHUTDOWN_DELAY_MS: '500' },
    });
    try {
      const PROTOCOL = '2025-06-18';
      const accept = 'application/json, text/event-stream';
      const opened = await http.request(agentHost.url, 'POST', '/mcp', {
        key,
        headers: { accept },
        json: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: PROTOCOL,
            capabilities: {},
            clientInfo: { name: 'drain', version: '1' },
          },
        },
      });
      expect(opened.status, opened.text).toBe(200);
      const session = {
        'mcp-session-id': opened.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': PROTOCOL,
      };
      const stream = await fetch(`${agentHost.url}/mcp`, {
        headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...session },
      });
      expect(stream.status).toBe(200);
      const reading = (async () => {
        const reader = stream.body?.getReader();
        while (reader !== undefined && !(await reader.read().catch(() => ({ done: true }))).done) {}
        return performance.now();
      })();
      const signalled = performance.now();
      agentHost.child.kill('SIGTERM');
      const exit = await agentHost.exited;
      const exitedAfter = performance.now() - signalled;
      console.log(`[e2e] gateway with an open MCP stream exited ${Math.round(exitedAfter)} ms after SIGTERM`);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(exitedAfter).toBeLessThan(15_000);
      expect((await reading) - signalled).toBeLessThan(15_000);
    } finally {
      await agentHost.stop();
    }
  }, 90_000);
});
