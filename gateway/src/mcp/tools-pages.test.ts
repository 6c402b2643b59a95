// tools/list in pages (QUARRY_MCP_TOOLS_PER_PAGE, here 2): following `nextCursor` page by page
// gives every tool once, the last page has no cursor, and a cursor the gateway did not hand out
// is a JSON-RPC "invalid params" error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
let session: string;
let nextId = 1;

async function rpc(method: string, params: unknown) {
  const res = await tg.call('POST', '/mcp', {
    key: alice.key,
    body: { jsonrpc: '2.0', id: nextId++, method, params },
    headers: {
      accept: 'application/json, text/event-stream',
      ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }),
    },
  });
  expect(res.status, res.text).toBe(200);
  return res;
}

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_MCP_TOOLS_PER_PAGE: '2' });
  alice = await tg.signUp('Alice');
  // An agent's tools are its account's choice (docs/mcp.md): Alice adds the demo analytics.
  for (const source of ['sales-by-region', 'top-products']) {
    const added = await tg.call('POST', '/v1/account/tools', { key: alice.key, body: { source } });
    expect(added.status, added.text).toBe(201);
  }
  const init = await rpc('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 't', version: '1' },
  });
  session = init.headers.get('mcp-session-id') as string;
  expect(session).toBeTruthy();
});
afterAll(async () => {
  await tg?.close();
});

describe('MCP tools/list in pages', () => {
  it('hands out every tool once, page by page, and refuses a cursor it did not make', async () => {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const { json } = await rpc('tools/list', cursor === undefined ? {} : { cursor });
      const names = (json.result.tools as { name: string }[]).map((t) => t.name);
      pages.push(names);
      cursor = json.result.nextCursor;
      expect(names.length).toBe(cursor === undefined ? names.length : 2);
    } while (cursor !== undefined && pages.length < 100);
    const all = pages.flat();
    // The two marketplace tools and the demo analytics Alice added, each once.
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual(
      expect.arrayContaining([
        'marketplace_search',
        'marketplace_preview',
        'sales-by-region',
        'top-products',
      ]),
    );
    expect(pages.length).toBe(Math.ceil(all.length / 2));

    for (const bad of ['nonsense', Buffer.from('tools:-1').toString('base64url')]) {
      const { json } = await rpc('tools/list', { cursor: bad });
      expect(json.error).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid cursor') });
    }
  });
});
