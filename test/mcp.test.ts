// The MCP endpoint end to end: the official SDK's own client (Streamable HTTP) against a real
// gateway process on the real Postgres store, with the demo warehouse and example analytics.
// Each analytic is a tool with its schema; a tool call is a query call (one usage event, the
// REST call's credits); refusals are tool errors carrying the envelope; a preview is free and
// capped; credentials are checked like the API's; the tool list follows the catalog live.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  ledgerOf,
  secondsToNextMonth,
  signUp,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

/** Every analytic tool's optional price limit (docs/mcp.md). */
const MAX_CREDITS_ARGUMENT = {
  type: 'integer',
  minimum: 1,
  description:
    'Optional: the most credits this call may cost. A call whose price is above it is refused (PRICE_ABOVE_LIMIT), nothing run or charged.',
};

const up = serviceUp(await pgAvailable());
/** The demo account's example analytics (examples/analytics/). */
const EXAMPLES = [
  'category-totals',
  'channel-mix',
  'monthly-revenue',
  'sales-by-region',
  'sales-summary',
  'top-products',
  'yearly-growth',
];

const suffix = uniqueSuffix();
const PREVIEW_ROWS = 3;
// Credits of the Free plan here: the quota test spends them 1 credit a call; the caller's other
// tests spend 7 (a 2-credit call twice, a 3-credit call once).
const FREE_CALLS = 12;
const http = createHttpClient();
let store: ControlPlaneSchema;
let gateway: GatewayProcess;
let dir: string;
let callerKey: string;
let callerAccountId: string;
const clients: Client[] = [];

/** An SDK client connected to the gateway's /mcp with `key` as its bearer credential. */
async function connect(key: string, options: ConstructorParameters<typeof Client>[1] = {}): Promise<Client> {
  const client = new Client({ name: 'quarry-e2e', version: '1.0.0' }, options);
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** What `promise` rejected with (fails the test when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<{ code?: unknown; message: string }> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as { code?: unknown; message: string },
  );
}

// biome-ignore lint/suspicious/noExplicitAny: tests read the structured content's known shapes.
const structured = (result: CallToolResult): any => result.structuredContent;
const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

async function issueKey(name: string, scopes: string[]): Promise<{ id: string; secret: string }> {
  const response = expectStatus(
    await http.request(gateway.url, 'POST', '/v1/keys', { key: callerKey, json: { name, scopes } }),
    201,
    'issue key',
  );
  return { id: response.body.key.id, secret: response.body.key.secret };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds (or `ms` pass), for what the change feed delivers within a second. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

describe.runIf(up)('MCP endpoint with the SDK client against a real gateway', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-mcp-'));
    const dataDir = join(dir, 'data');
    await mkdir(dataDir);
    store = await createControlPlaneSchema(`quarry_mcp_${suffix}`);
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 3000 });
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_DATA_DIR: dataDir,
        QUARRY_DEMO: 'true',
        QUARRY_FREE_CALLS: String(FREE_CALLS),
        QUARRY_PREVIEW_ROWS: String(PREVIEW_ROWS),
        QUARRY_LOG_LEVEL: 'warn',
      },
      readyTimeoutMs: 90_000,
    });
    // The demo account owns the demo analytics, and an owner's calls on its own are free: the
    // calls here are a stranger's, on its own Free account.
    const caller = await signUp(http, gateway, 'mcp-caller', suffix);
    callerKey = caller.key;
    callerAccountId = caller.id;
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await gateway?.stop();
    await store?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('lists every example analytic the account added as a tool with its params as JSON Schema, title and price', async () => {
    const client = await connect(callerKey);
    expect(client.getServerVersion()?.name).toBe('quarry');
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    // An agent's tools are its account's choice (docs/mcp.md): none of the demo owner's until added.
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'marketplace_preview',
      'marketplace_search',
    ]);
    for (const source of EXAMPLES) {
      expectStatus(
        await http.request(gateway.url, 'POST', '/v1/account/tools', { key: callerKey, json: { source } }),
        201,
        `add ${source}`,
      );
    }
    const { tools } = await client.listTools();
    const byName = new Map<string, Tool>(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(
      [...EXAMPLES, 'marketplace_preview', 'marketplace_search'].sort(),
    );

    const sales = byName.get('sales-by-region') as Tool;
    expect(sales.title).toBe('Revenue by region');
    expect(sales.description).toContain('Total revenue per sales region for one year');
    expect(sales.description).toContain('Price: 1 credit a call');
    expect(sales.inputSchema).toEqual({
      type: 'object',
      properties: {
        max_credits: MAX_CREDITS_ARGUMENT,
        year: { type: 'integer', minimum: 2000, maximum: 2100 },
        region: { type: 'string', maxLength: 1000, pattern: '^(?:^[A-Z]{2}$)$' },
      },
      required: ['year'],
      additionalProperties: false,
    });
    expect(sales.annotations?.readOnlyHint).toBe(true);

    expect(byName.get('top-products')?.inputSchema).toEqual({
      type: 'object',
      properties: {
        max_credits: MAX_CREDITS_ARGUMENT,
        category: { type: 'string', maxLength: 64, description: 'Product category, e.g. Electronics' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 100,
          default: 10,
          description: 'How many products to return',
        },
      },
      required: ['category'],
      additionalProperties: false,
    });
    expect(byName.get('category-totals')?.inputSchema.properties?.channel).toEqual({
      type: 'string',
      enum: ['online', 'retail', 'partner'],
      description: 'Sales channel (default: all)',
    });
    const monthly = byName.get('monthly-revenue') as Tool;
    expect(monthly.description).toContain('Price: 2 credits a call');
    expect(monthly.inputSchema.properties?.regions).toEqual({
      type: 'array',
      items: { type: 'string', maxLength: 1000, pattern: '^(?:^[A-Z]{2}$)$' },
      minItems: 1,
      maxItems: 10,
      description: 'Region codes to include (default: all)',
    });
    expect(byName.get('sales-summary')?.inputSchema.properties?.start_date).toEqual({
      type: 'string',
      format: 'date',
      description: 'First day (inclusive) From 2000-01-01 to 2100-12-31.',
    });
    // Every pattern is one a JSON Schema client can compile, and it means what the gateway checks.
    const pattern = new RegExp(
      String((sales.inputSchema.properties?.region as { pattern?: string } | undefined)?.pattern),
      'u',
    );
    expect(['EU', 'EUROPE', 'eu'].map((v) => pattern.test(v))).toEqual([true, false, false]);
  });

  it('calls an analytic: rows as structured content, one usage event, the REST call’s credits', async () => {
    const client = await connect(callerKey);
    const before = await ledgerOf(store.schema, callerAccountId);
    const result = (await client.callTool({
      name: 'monthly-revenue',
      arguments: { year: 2024, regions: ['EU', 'NA'] },
    })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    const answer = structured(result);
    expect(answer.source).toBe('monthly-revenue');
    expect(answer.results.length).toBe(24);
    expect(answer.columns.map((c: { name: string }) => c.name)).toEqual([
      'month',
      'region',
      'revenue',
      'orders',
    ]);
    expect(answer.insights).toBeDefined();
    expect(answer.meta).toMatchObject({ row_count: 24, credits: 2, truncated: false });
    expect(textOf(result)).toContain('monthly-revenue: 24 rows');

    const rest = expectStatus(
      await http.request(gateway.url, 'POST', '/v1/query', {
        key: callerKey,
        json: { source: 'monthly-revenue', params: { year: 2024, regions: ['EU', 'NA'] } },
      }),
      200,
      'REST call',
    );
    expect(rest.body.results).toEqual(answer.results);
    expect(rest.body.meta.credits).toBe(answer.meta.credits);

    const after = await ledgerOf(store.schema, callerAccountId);
    const added = after.filter((e) => !before.some((b) => b.request_id === e.request_id));
    expect(added.map((e) => e.request_id).sort()).toEqual(
      [answer.meta.request_id, rest.body.meta.request_id].sort(),
    );
    const [mcpEvent, restEvent] = [answer.meta.request_id, rest.body.meta.request_id].map((id) =>
      added.find((e) => e.request_id === id),
    );
    expect(mcpEvent).toMatchObject({ analytic_name: 'monthly-revenue', origin: 'free', status: 'ok' });
    expect(mcpEvent?.millicredits).toBe(restEvent?.millicredits);
    expect(mcpEvent?.millicredits).toBe(2_000);
  });

  it('refuses a bad param with INVALID_PARAMS naming it, and charges nothing', async () => {
    const client = await connect(callerKey);
    const before = await ledgerOf(store.schema, callerAccountId);
    const result = (await client.callTool({
      name: 'sales-by-region',
      arguments: { year: 1999, region: 'europe' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    const { error } = structured(result);
    expect(error.code).toBe('INVALID_PARAMS');
    expect(error.request_id).toMatch(/^req_/);
    expect(error.details.map((d: { param: string }) => d.param).sort()).toEqual(['region', 'year']);
    expect(textOf(result)).toMatch(/^INVALID_PARAMS: /);
    expect(textOf(result)).toContain('- year: ');
    const unknown = (await client.callTool({
      name: 'sales-by-region',
      arguments: { year: 2024, colour: 'red' },
    })) as CallToolResult;
    expect(structured(unknown).error.details).toEqual([expect.objectContaining({ param: 'colour' })]);
    expect(await ledgerOf(store.schema, callerAccountId)).toEqual(before);
  });

  it('answers QUOTA_EXCEEDED with retry_after once a Free account’s credits are spent', async () => {
    const free = await signUp(http, gateway, 'mcp-free', suffix);
    expectStatus(
      await http.request(gateway.url, 'POST', '/v1/account/tools', {
        key: free.key,
        json: { source: 'sales-by-region' },
      }),
      201,
      'add the tool',
    );
    const client = await connect(free.key);
    for (let year = 2021; year < 2021 + FREE_CALLS; year += 1) {
      const result = (await client.callTool({
        name: 'sales-by-region',
        arguments: { year },
      })) as CallToolResult;
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    const refused = (await client.callTool({
      name: 'sales-by-region',
      arguments: { year: 2024 },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    const { error } = structured(refused);
    expect(error.code).toBe('QUOTA_EXCEEDED');
    expect(error.retry_after).toBeGreaterThan(secondsToNextMonth() - 60);
    expect(error.retry_after).toBeLessThanOrEqual(secondsToNextMonth() + 1);
    expect(textOf(refused)).toMatch(/^QUOTA_EXCEEDED: .* Retry after \d+(\.\d+)? s\./);
    const ledger = await ledgerOf(store.schema, free.id);
    expect(ledger.filter((e) => e.status === 'ok')).toHaveLength(FREE_CALLS);
    expect(ledger).toHaveLength(FREE_CALLS);
  });

  it('refuses a key without the query scope, before any session', async () => {
    const key = await issueKey(`mcp-no-query-${suffix}`, ['account']);
    const error = await rejectionOf(connect(key.secret));
    expect(error.code).toBe(403);
    expect(error.message).toContain('FORBIDDEN');
    expect(error.message).toContain('query');
    const raw = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.secret}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
  });

  it('previews a listed analytic for free, capped at QUARRY_PREVIEW_ROWS', async () => {
    const client = await connect(callerKey);
    const before = await ledgerOf(store.schema, callerAccountId);
    const result = (await client.callTool({
      name: 'marketplace_preview',
      arguments: { source: 'top-products', params: { category: 'Electronics', limit: 50 } },
    })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    const answer = structured(result);
    expect(answer.results).toHaveLength(PREVIEW_ROWS);
    expect(answer.meta).toMatchObject({ preview: true, credits: 0, row_count: PREVIEW_ROWS });
    expect(textOf(result)).toContain('free preview');
    const added = (await ledgerOf(store.schema, callerAccountId)).filter(
      (e) => !before.some((b) => b.request_id === e.request_id),
    );
    expect(added).toEqual([
      expect.objectContaining({ request_id: answer.meta.request_id, origin: 'marketplace', millicredits: 0 }),
    ]);

    const search = (await client.callTool({
      name: 'marketplace_search',
      arguments: { query: 'region', category: 'sales' },
    })) as CallToolResult;
    const names = structured(search).items.map((i: { name: string }) => i.name);
    expect(names).toContain('sales-by-region');
    expect(names).not.toContain('top-products');
    expect(structured(search).items.find((i: { name: string }) => i.name === 'monthly-revenue')?.price).toBe(
      2,
    );
  });

  it('refuses a revoked key, also inside a session it opened', async () => {
    const key = await issueKey(`mcp-revoked-${suffix}`, ['query']);
    const client = await connect(key.secret);
    const ok = (await client.callTool({
      name: 'sales-by-region',
      arguments: { year: 2024 },
    })) as CallToolResult;
    expect(ok.isError, textOf(ok)).toBeFalsy();
    expectStatus(
      await http.request(gateway.url, 'DELETE', `/v1/keys/${key.id}`, { key: callerKey }),
      200,
      'revoke',
    );
    // QUARRY_KEY_CACHE_MS=1000 bounds how long a verified key is trusted.
    await sleep(1200);
    const inSession = await rejectionOf(
      client.callTool({ name: 'sales-by-region', arguments: { year: 2024 } }),
    );
    expect(inSession.code).toBe(401);
    expect(inSession.message).toContain('UNAUTHENTICATED');
    expect((await rejectionOf(connect(key.secret))).code).toBe(401);

    const raw = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(raw.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(raw.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl).toBe(`${gateway.url}/.well-known/oauth-protected-resource/mcp`);
    const metadata = expectStatus(
      await http.request(gateway.url, 'GET', '/.well-known/oauth-protected-resource/mcp'),
      200,
      'resource metadata',
    ).body;
    expect(metadata).toMatchObject({ resource: `${gateway.url}/mcp`, authorization_servers: [gateway.url] });
  });

  it('follows the catalog: a new analytic the account adds and its new version reach an open session', async () => {
    const owner = await signUp(http, gateway, 'mcp-owner', suffix);
    await connectTestPostgres(http, gateway, owner.key, 'pg');
    const name = `mcp-live-${suffix}`;
    let notified = 0;
    let latest: Tool[] = [];
    const client = await connect(callerKey, {
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (error === null && tools !== null) {
              notified += 1;
              latest = tools;
            }
          },
        },
      },
    });
    const schemaOf = () => latest.find((t) => t.name === name)?.inputSchema;
    await deployAnalytic(http, gateway, owner.key, {
      name,
      connection: 'pg',
      sql: 'SELECT :n::int AS n',
      params: { n: { type: 'integer', required: true, min: 1, max: 9 } },
      visibility: 'public',
      price: 3,
    });
    // A stranger's new analytic is no tool of the caller's until the account adds it, and adding
    // it is announced to the open session.
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(name);
    expectStatus(
      await http.request(gateway.url, 'POST', '/v1/account/tools', {
        key: callerKey,
        json: { source: name },
      }),
      201,
      'add the new analytic',
    );
    await eventually(() => schemaOf() !== undefined);
    expect(notified).toBeGreaterThan(0);
    expect(schemaOf()?.properties).toEqual({
      max_credits: MAX_CREDITS_ARGUMENT,
      n: { type: 'integer', minimum: 1, maximum: 9 },
    });

    const updated = await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${name}`, {
      key: owner.key,
      json: {
        name,
        connection: 'pg',
        sql: 'SELECT :n::int * :m::int AS n',
        params: {
          n: { type: 'integer', required: true, min: 1, max: 9 },
          m: { type: 'integer', default: 2 },
        },
        visibility: 'public',
        price: 3,
      },
    });
    expect(updated.status, updated.text).toBe(200);
    await eventually(() => schemaOf()?.properties?.m !== undefined);
    const call = (await client.callTool({ name, arguments: { n: 4 } })) as CallToolResult;
    expect(structured(call).results).toEqual([{ n: 8 }]);
    expect(structured(call).meta.credits).toBe(3);

    // Publishing it on the marketplace gives the tool the listing's title and text, and
    // unpublishing takes them back, each announced to the open session.
    const toolOf = () => latest.find((t) => t.name === name);
    const listing = {
      title: `Times table ${suffix}`,
      description: 'n times m',
      category: 'Other',
      example_params: { n: 3 },
    };
    const published = await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${name}/listing`, {
      key: owner.key,
      json: listing,
    });
    expect(published.status, published.text).toBe(200);
    await eventually(() => toolOf()?.title === listing.title);
    expect(toolOf()?.description).toContain('n times m');
    const before = notified;
    const unpublished = await http.request(gateway.url, 'DELETE', `/v1/owner/analytics/${name}/listing`, {
      key: owner.key,
    });
    expect(unpublished.status, unpublished.text).toBe(200);
    await eventually(() => notified > before);
  });
});
