// The MCP tool-call fast path against the SDK's transport it stands in for: one gateway served
// by two real node:http listeners, one with the fast paths and one without, sent the same
// messages in one session (the sessions belong to the gateway, so both listeners reach them).
// A tools/call must come back with the same status, content type, session header and JSON-RPC
// body (bar request ids and timings) whichever way it went, be metered the same, and every other
// message or refusal must answer as the SDK's transport does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';
import { createGatewayListener } from './node-listener.js';

let tg: TestGateway;
let alice: SignedUp;
let fast: Server;
let slow: Server;
let fastUrl: string;
let slowUrl: string;
let session: string;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const ACCEPT = 'application/json, text/event-stream';
let nextId = 1;

interface Sent {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
}

async function post(
  base: string,
  message: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<Sent> {
  const all: Record<string, string> = {
    authorization: `Bearer ${alice.key}`,
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-06-18',
  };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete all[name];
    else all[name] = value;
  }
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: all,
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  };
}

const toolCall = (name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The JSON-RPC body without what differs between two answers of the same call. */
function normalised(text: string) {
  const body = JSON.parse(text);
  body.id = 'x';
  if (typeof body.error?.request_id === 'string') body.error.request_id = 'x';
  const content = body.result?.structuredContent;
  if (content?.meta) content.meta = { ...content.meta, request_id: 'x', duration_ms: 0 };
  if (content?.error) content.error = { ...content.error, request_id: 'x' };
  return body;
}

const KEPT = ['content-type', 'mcp-session-id', 'www-authenticate'];
const kept = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => KEPT.includes(name)));

async function both(message: () => unknown, headers?: Record<string, string | undefined>) {
  const viaSdk = await post(slowUrl, message(), headers);
  const viaFast = await post(fastUrl, message(), headers);
  return { viaSdk, viaFast };
}

beforeAll(async () => {
  tg = await createTestGateway();
  alice = await tg.signUp('Alice');
  // An agent's tools are its account's choice (docs/mcp.md): Alice adds the demo analytics.
  for (const source of ['sales-by-region', 'top-products']) {
    const added = await tg.call('POST', '/v1/account/tools', { key: alice.key, body: { source } });
    expect(added.status, added.text).toBe(201);
  }
  const { app, services } = tg.gateway;
  fast = createServer(createGatewayListener(app, services));
  slow = createServer(createGatewayListener(app, services, { fastPath: false }));
  fastUrl = await listen(fast);
  slowUrl = await listen(slow);
  const init = await post(
    fastUrl,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    { 'mcp-session-id': undefined, 'mcp-protocol-version': undefined },
  );
  expect(init.status, init.text).toBe(200);
  session = init.headers['mcp-session-id'] as string;
  expect(session).toBeTruthy();
});
afterAll(async () => {
  await Promise.all([fast, slow].map((s) => new Promise((resolve) => s?.close(resolve))));
  await tg?.close();
});

describe('MCP tool-call fast path', () => {
  it('answers a tool call (a cache hit) exactly as the SDK transport does, metered alike', async () => {
    const args = { category: 'Garden', limit: 3 };
    await post(slowUrl, toolCall('top-products', args));
    const served = () => tg.gateway.services.metering.stats().reserves.items;
    const before = served();
    const { viaSdk, viaFast } = await both(() => toolCall('top-products', args));
    expect(viaSdk.status).toBe(200);
    expect(viaFast.status).toBe(200);
    expect(kept(viaFast.headers)).toEqual(kept(viaSdk.headers));
    expect(normalised(viaFast.text)).toEqual(normalised(viaSdk.text));
    const answer = JSON.parse(viaFast.text);
    expect(answer.result.structuredContent.meta.cached).toBe(true);
    expect(answer.result.structuredContent.results).toHaveLength(3);
    expect(viaFast.headers['x-request-id']).toMatch(/^req_/);
    // The call's own id (its usage event's key) is the response's X-Request-Id.
    expect(answer.result.structuredContent.meta.request_id).toBe(viaFast.headers['x-request-id']);
    expect(served()).toBe(before + 2);
  });

  it('answers refusals (bad params, unknown tool, marketplace tools) as tool errors alike', async () => {
    for (const [name, args] of [
      ['sales-by-region', { year: 1999 }],
      ['no-such-analytic', {}],
      ['marketplace_search', { query: 'region' }],
      ['marketplace_search', { colour: 'red' }],
    ] as const) {
      const { viaSdk, viaFast } = await both(() => toolCall(name, args));
      expect(viaFast.status).toBe(viaSdk.status);
      expect(normalised(viaFast.text), name).toEqual(normalised(viaSdk.text));
    }
    const { viaFast } = await both(() => toolCall('sales-by-region', { year: 1999 }));
    expect(JSON.parse(viaFast.text).result.structuredContent.error.details).toEqual([
      expect.objectContaining({ param: 'year' }),
    ]);
  });

  it('leaves every other message and header case to the SDK transport', async () => {
    const cases: [string, () => unknown, Record<string, string | undefined>?][] = [
      ['tools/list', () => ({ jsonrpc: '2.0', id: nextId++, method: 'tools/list' })],
      ['ping', () => ({ jsonrpc: '2.0', id: nextId++, method: 'ping' })],
      ['notification', () => ({ jsonrpc: '2.0', method: 'notifications/initialized' })],
      ['malformed', () => '{"jsonrpc": '],
      [
        'with _meta',
        () => ({
          ...toolCall('top-products', { category: 'Toys' }),
          params: { name: 'top-products', arguments: { category: 'Toys' }, _meta: { progressToken: 1 } },
        }),
      ],
      [
        'accept json only',
        () => toolCall('top-products', { category: 'Toys' }),
        { accept: 'application/json' },
      ],
      ['text body', () => toolCall('top-products', { category: 'Toys' }), { 'content-type': 'text/plain' }],
      [
        'old protocol',
        () => toolCall('top-products', { category: 'Toys' }),
        { 'mcp-protocol-version': '1999-01-01' },
      ],
      ['unknown session', () => toolCall('top-products', { category: 'Toys' }), { 'mcp-session-id': 'nope' }],
    ];
    // The tool calls among them answer from the cache both ways.
    await post(slowUrl, toolCall('top-products', { category: 'Toys' }));
    for (const [label, message, headers] of cases) {
      const { viaSdk, viaFast } = await both(message, headers);
      expect(viaFast.status, label).toBe(viaSdk.status);
      expect(kept(viaFast.headers), label).toEqual(kept(viaSdk.headers));
      if (viaSdk.text === '') expect(viaFast.text, label).toBe('');
      else expect(normalised(viaFast.text), label).toEqual(normalised(viaSdk.text));
    }
  });

  it('refuses an unknown key or one without the query scope with the same envelope and challenge', async () => {
    const account = await tg.call('POST', '/v1/keys', {
      key: alice.key,
      body: { name: 'no-query', scopes: ['account'] },
    });
    expect(account.status).toBe(201);
    for (const key of ['qry_live_not_a_real_key_at_all_0000000', account.json.key.secret as string]) {
      const { viaSdk, viaFast } = await both(() => toolCall('top-products', { category: 'Toys' }), {
        authorization: `Bearer ${key}`,
      });
      expect(viaFast.status).toBe(viaSdk.status);
      expect([401, 403]).toContain(viaFast.status);
      expect(kept(viaFast.headers)).toEqual(kept(viaSdk.headers));
      expect(viaFast.headers['www-authenticate']).toContain('resource_metadata=');
      expect(normalised(viaFast.text)).toEqual(normalised(viaSdk.text));
    }
  });
});
