// Price notice (issue 29, item 2), against a real gateway process on the embedded store: an
// owner's price rise waits QUARRY_PRICE_NOTICE_HOURS (default a week) before a caller pays it,
// and the listing and the answer's meta say what is coming and when; a decrease applies at once;
// a caller's `max_credits` refuses a call that would cost more (409 PRICE_ABOVE_LIMIT) and
// nothing is charged. Then a gateway with a 3.6 s notice shows the rise applying after it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { expectStatus, signUp, type TestAccount } from './support/metering-fixture.js';

const http = createHttpClient();
const NAME = 'priced-notice';
const WEEK_MS = 168 * 3600_000;
// Plenty of management calls for one owner in a minute (deploys, a listing), and credits.
const ENV = {
  QUARRY_LOG_LEVEL: 'warn',
  // The in-memory DuckDB is the warehouse: it reads no file, but DuckDB connections need the switch.
  QUARRY_ALLOW_HOST_FILES: 'true',
  QUARRY_FREE_CREDITS: '1000',
  QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
};

let dir: string;
let gateway: GatewayProcess | undefined;
let owner: TestAccount;
let caller: TestAccount;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function deploy(price: number) {
  const response = expectStatus(
    await http.request(gateway!.url, 'PUT', `/v1/owner/analytics/${NAME}`, {
      key: owner.key,
      json: { connection: 'mem', sql: 'SELECT 42 AS answer', price, visibility: 'public' },
    }),
    200,
    `deploy at ${price}`,
  );
  return response.body.analytic;
}

async function call(extra: Record<string, unknown> = {}) {
  return http.request(gateway!.url, 'POST', '/v1/query', {
    key: caller.key,
    json: { source: NAME, params: {}, ...extra },
  });
}

async function creditsUsed(): Promise<number> {
  const usage = expectStatus(
    await http.request(gateway!.url, 'GET', '/v1/account/usage', { key: caller.key }),
    200,
    'usage',
  );
  return usage.body.totals.credits_used as number;
}

async function listing() {
  return expectStatus(
    await http.request(gateway!.url, 'GET', `/v1/marketplace/listings/${NAME}`, {}),
    200,
    'listing',
  ).body;
}

async function start(env: Record<string, string> = {}) {
  gateway = await startGateway({ env: { QUARRY_DATA_DIR: dir, ...ENV, ...env }, readyTimeoutMs: 90_000 });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-price-notice-'));
  await start();
  owner = await signUp(http, gateway!, 'owner', 'price-notice');
  caller = await signUp(http, gateway!, 'caller', 'price-notice');
  expectStatus(
    await http.request(gateway!.url, 'POST', '/v1/owner/connections', {
      key: owner.key,
      json: { name: 'mem', type: 'duckdb', config: { path: ':memory:' } },
    }),
    201,
    'connect',
  );
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('price notice, default notice (168 h)', () => {
  it('a rise waits a week: the next call costs the old price, listing and meta show what is coming', async () => {
    const first = await deploy(3);
    expectStatus(
      await http.request(gateway!.url, 'PUT', `/v1/owner/analytics/${NAME}/listing`, {
        key: owner.key,
        json: {},
      }),
      200,
      'publish',
    );
    const before = expectStatus(await call(), 200, 'call at 3');
    expect(before.body.meta.credits).toBe(3);
    expect(before.body.meta.next_price).toBeUndefined();
    expect(await creditsUsed()).toBe(3);

    const deployedAt = Date.now();
    const raised = await deploy(9);
    // What the caller notices first: the very next identical call still costs 3.
    const after = expectStatus(await call(), 200, 'call after the rise');
    expect(after.body.meta.credits).toBe(3);
    expect(await creditsUsed()).toBe(6);
    expect(after.body.meta.next_price).toBe(9);
    expect(after.body.meta.next_price_at).toBe(raised.price_effective_at);

    expect(first).toMatchObject({ price: 3, scheduled_price: null, price_effective_at: null });
    expect(raised.price).toBe(3);
    expect(raised.scheduled_price).toBe(9);
    const effective = Date.parse(raised.price_effective_at);
    expect(Math.abs(effective - (deployedAt + WEEK_MS))).toBeLessThan(60_000);

    const listed = await listing();
    expect(listed).toMatchObject({
      price: 3,
      scheduled_price: 9,
      price_effective_at: raised.price_effective_at,
    });
    const search = expectStatus(
      await http.request(gateway!.url, 'GET', '/v1/marketplace/listings?q=priced', {}),
      200,
      'search',
    );
    expect(search.body.items.find((i: { name: string }) => i.name === NAME)).toMatchObject({
      price: 3,
      scheduled_price: 9,
    });
  }, 60_000);

  it('max_credits below the price in force is 409 PRICE_ABOVE_LIMIT and charges nothing', async () => {
    const used = await creditsUsed();
    const refused = await call({ max_credits: 2 });
    expectErrorEnvelope(refused, 409, 'PRICE_ABOVE_LIMIT');
    expect(refused.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'price', value: 3 }),
        expect.objectContaining({ field: 'max_credits', value: 2 }),
      ]),
    );
    const viaGet = await http.request(gateway!.url, 'GET', `/v1/analytics/${NAME}?max_credits=1`, {
      key: caller.key,
    });
    expectErrorEnvelope(viaGet, 409, 'PRICE_ABOVE_LIMIT');
    expect(await creditsUsed()).toBe(used);
    // At the price, the call goes through (the scheduled 9 is not in force yet).
    const ok = expectStatus(await call({ max_credits: 3 }), 200, 'call within the limit');
    expect(ok.body.meta.credits).toBe(3);
    expect(await creditsUsed()).toBe(used + 3);
    // Not a positive integer: the request is invalid.
    expectErrorEnvelope(await call({ max_credits: 0 }), 400, 'INVALID_REQUEST');

    // MCP: the tool (the caller's account adds it: docs/mcp.md) says what is coming and takes
    // `max_credits` beside the params.
    expectStatus(
      await http.request(gateway!.url, 'POST', '/v1/account/tools', {
        key: caller.key,
        json: { source: NAME },
      }),
      201,
      'add the tool',
    );
    const client = new Client({ name: 'quarry-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway!.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${caller.key}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === NAME);
      expect(tool?.description).toMatch(/Price: 3 credits a call.* it will be 9 credits a call\./s);
      expect(tool?.inputSchema.properties).toHaveProperty('max_credits');
      const mcpRefused = await client.callTool({ name: NAME, arguments: { max_credits: 2 } });
      expect(mcpRefused.isError).toBe(true);
      expect(JSON.stringify(mcpRefused.structuredContent)).toContain('PRICE_ABOVE_LIMIT');
      const mcpOk = await client.callTool({ name: NAME, arguments: { max_credits: 3 } });
      expect(mcpOk.isError, JSON.stringify(mcpOk)).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(await creditsUsed()).toBe(used + 6);
  }, 60_000);

  it('a decrease applies at once and cancels the scheduled rise', async () => {
    const lowered = await deploy(2);
    expect(lowered).toMatchObject({ price: 2, scheduled_price: null, price_effective_at: null });
    const used = await creditsUsed();
    const response = expectStatus(await call(), 200, 'call after the decrease');
    expect(response.body.meta.credits).toBe(2);
    expect(response.body.meta.next_price).toBeUndefined();
    expect(await creditsUsed()).toBe(used + 2);
    const listed = await listing();
    expect(listed).toMatchObject({ price: 2, scheduled_price: null, price_effective_at: null });
  }, 60_000);
});

describe('price notice, QUARRY_PRICE_NOTICE_HOURS=0.001 (3.6 s)', () => {
  it('the rise applies once the notice has passed', async () => {
    await gateway?.stop();
    await start({ QUARRY_PRICE_NOTICE_HOURS: '0.001' });
    const raised = await deploy(5);
    expect(raised).toMatchObject({ price: 2, scheduled_price: 5 });
    const soon = expectStatus(await call(), 200, 'call during the notice');
    expect(soon.body.meta.credits).toBe(2);
    expect(soon.body.meta.next_price).toBe(5);
    await sleep(Math.max(0, Date.parse(raised.price_effective_at) - Date.now()) + 300);
    const used = await creditsUsed();
    const later = expectStatus(await call(), 200, 'call after the notice');
    expect(later.body.meta.credits).toBe(5);
    expect(later.body.meta.next_price).toBeUndefined();
    expect(await creditsUsed()).toBe(used + 5);
    expect(await listing()).toMatchObject({ price: 5, scheduled_price: null });
  }, 120_000);
});
