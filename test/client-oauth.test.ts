// @quarry/client with OAuth 2.0 client credentials against a real gateway process (embedded
// store, demo account, the example analytics on the seeded DuckDB demo warehouse). OAuth clients
// are made and revoked over HTTP with the demo API key; the typed client talks to the gateway
// through a counting proxy, so each test checks exactly what the client sent:
//   1. an OAuth client (scope query) runs sales-by-region and gets typed, correct results;
//   2. many calls, concurrent and in sequence, share one token request;
//   3. a wrong secret throws OAuthError invalid_client (401) and the query is never sent;
//   4. once the OAuth client is revoked, the next call gets the API's 401, fetches a token once
//      more, and throws OAuthError invalid_client, without looping;
//   5. a token scoped to `query` cannot list keys: ForbiddenError (403), sent once.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createQuarryClient,
  ForbiddenError,
  OAuthError,
  type QuarryClient,
  QuarryError,
  type Scope,
} from '@quarry/client';
import { seedDemoWarehouse } from '@quarry/examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountingProxy, startCountingProxy } from './support/counting-proxy.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { expectedRevenueCents } from './support/warehouses.js';

const ROWS = 3000;
const YEAR = 2024;
/** The gateway's key-cache bound: a revoked client's tokens must stop working within it. */
const REVOCATION_BOUND_MS = 5_000;

/** A row of sales-by-region: the DECIMAL sum is a JSON number while it fits in 2^53 (docs/design.md §3). */
interface RegionRevenue {
  readonly region: string;
  readonly revenue: number;
}

interface OAuthClientRecord {
  /** The record id (`ocl_…`), used to revoke it. */
  readonly id: string;
  readonly clientId: string;
  readonly secret: string;
}

let dir: string | undefined;
let gateway: GatewayProcess | undefined;
let proxy: CountingProxy | undefined;
let demoKey: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cents = (value: number | undefined) => Math.round((value ?? Number.NaN) * 100);

/** Creates an OAuth client of the demo account over HTTP (straight to the gateway, not counted). */
async function createOAuthClient(name: string, scopes: readonly Scope[]): Promise<OAuthClientRecord> {
  const response = await fetch(`${gateway!.url}/v1/oauth/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, scopes }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(201);
  const body = JSON.parse(text) as {
    client: { id: string; client_id: string; scopes: string[]; revoked_at: string | null };
    client_secret: string;
  };
  expect(body.client).toMatchObject({ name, scopes, revoked_at: null });
  expect(body.client.client_id).toMatch(/^qci_/);
  expect(body.client_secret).toMatch(/^qcs_/);
  return { id: body.client.id, clientId: body.client.client_id, secret: body.client_secret };
}

/** A typed client that reaches the gateway through the counting proxy with these credentials. */
function oauthClient(clientId: string, clientSecret: string, scope?: string): QuarryClient {
  return createQuarryClient(
    { baseUrl: proxy!.url, oauth: { clientId, clientSecret, ...(scope === undefined ? {} : { scope }) } },
    { timeoutMs: 15_000 },
  );
}

/** `METHOD path status` of every request the proxy saw from index `since` on. */
function trafficSince(since: number): string[] {
  return proxy!.requests.slice(since).map((r) => `${r.method} ${r.path} ${r.status}`);
}

/** What `promise` rejected with (fails the test when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-client-oauth-'));
  const dataDir = join(dir, 'data');
  await mkdir(dataDir);
  // The demo bootstrap connects the examples owner to $QUARRY_DATA_DIR/demo.duckdb.
  await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: ROWS });
  gateway = await startGateway({
    env: {
      QUARRY_DATA_DIR: dataDir,
      QUARRY_DEMO: 'true',
      QUARRY_KEY_CACHE_MS: '1000',
      QUARRY_LOG_LEVEL: 'warn',
    },
    readyTimeoutMs: 90_000,
  });
  demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
  proxy = await startCountingProxy(gateway.url);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 30_000);

describe('@quarry/client with OAuth client credentials against a gateway', () => {
  it('queries an example analytic with a token and gets typed, correct results', async () => {
    const record = await createOAuthClient('reporting', ['query']);
    const client = oauthClient(record.clientId, record.secret);
    const since = proxy!.requests.length;

    const answer = await client.query<RegionRevenue, Record<string, RegionRevenue>>('sales-by-region', {
      year: YEAR,
    });
    const expected = expectedRevenueCents(ROWS, YEAR);
    expect(expected.size).toBe(6);
    expect(answer.source).toBe('sales-by-region');
    expect(answer.columns).toEqual([
      { name: 'region', type: 'string' },
      { name: 'revenue', type: 'decimal' },
    ]);
    for (const row of answer.results) expect(typeof row.revenue).toBe('number');
    // The token's client belongs to the demo account, which owns the analytic: its calls are free.
    expect(answer.meta).toMatchObject({ row_count: 6, truncated: false, credits: 0 });
    expect(new Map(answer.results.map((r) => [r.region, cents(r.revenue)]))).toEqual(expected);
    const [top] = [...expected].sort((a, b) => b[1] - a[1]);
    expect(answer.results[0]?.region).toBe(top?.[0]);
    expect(cents(answer.insights?.[top?.[0] as string]?.revenue)).toBe(top?.[1]);

    // GET with query-string params, coerced by the gateway, on the same token.
    const one = await client.analytics.get<RegionRevenue>('sales-by-region', {
      year: YEAR,
      region: top?.[0],
    });
    expect(one.results).toEqual([{ region: top?.[0], revenue: expect.any(Number) }]);
    expect(cents(one.results[0]?.revenue)).toBe(top?.[1]);

    expect(trafficSince(since)).toEqual([
      'POST /oauth/token 200',
      'POST /v1/query 200',
      `GET /v1/analytics/sales-by-region?year=${YEAR}&region=${top?.[0]} 200`,
    ]);
  });

  it('shares one token among many calls, concurrent and in sequence', async () => {
    const record = await createOAuthClient('busy', ['query']);
    const client = oauthClient(record.clientId, record.secret);
    const since = proxy!.requests.length;

    // Cold start: concurrent calls wait on one token request.
    const concurrent = await Promise.all(
      [2022, 2023, 2024, 2025].map((year) => client.query<RegionRevenue>('sales-by-region', { year })),
    );
    for (const answer of concurrent) expect(answer.results.length).toBeGreaterThan(0);
    for (let i = 0; i < 4; i += 1) {
      const answer = await client.query<RegionRevenue>('sales-by-region', { year: YEAR });
      expect(answer.results).toHaveLength(6);
    }

    const traffic = trafficSince(since);
    expect(traffic.filter((r) => r.startsWith('POST /oauth/token'))).toEqual(['POST /oauth/token 200']);
    expect(traffic.filter((r) => r.startsWith('POST /v1/query'))).toEqual(
      Array.from({ length: 8 }, () => 'POST /v1/query 200'),
    );
    expect(traffic).toHaveLength(9);
  });

  it('throws OAuthError invalid_client for a wrong secret and never sends the query', async () => {
    const record = await createOAuthClient('mistyped', ['query']);
    const client = oauthClient(record.clientId, `qcs_${'0'.repeat(43)}`);
    const since = proxy!.requests.length;

    const error = await rejectionOf(client.query('sales-by-region', { year: YEAR }));
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toBeInstanceOf(QuarryError);
    expect(error).toMatchObject({ name: 'OAuthError', code: 'invalid_client', status: 401 });
    expect((error as OAuthError).message).not.toBe('');

    // Not retried (a 4xx), and no query without a token.
    await sleep(200);
    expect(trafficSince(since)).toEqual(['POST /oauth/token 401']);
  });

  it("fails the next call with invalid_client once the client is revoked, and doesn't loop", async () => {
    const record = await createOAuthClient('doomed', ['query']);
    const client = oauthClient(record.clientId, record.secret);
    const first = proxy!.requests.length;
    expect((await client.query<RegionRevenue>('sales-by-region', { year: YEAR })).results).toHaveLength(6);
    expect(trafficSince(first)).toEqual(['POST /oauth/token 200', 'POST /v1/query 200']);

    const revoked = await fetch(`${gateway!.url}/v1/oauth/clients/${record.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${demoKey}` },
    });
    expect(revoked.status, await revoked.text()).toBe(204);

    // The cached token keeps working at most until the key-cache bound has passed.
    const since = proxy!.requests.length;
    const deadline = Date.now() + REVOCATION_BOUND_MS;
    let failure: unknown;
    while (failure === undefined && Date.now() < deadline) {
      failure = await client.query('sales-by-region', { year: YEAR }).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure === undefined) await sleep(100);
    }
    expect(failure).toBeInstanceOf(OAuthError);
    expect(failure).toMatchObject({ code: 'invalid_client', status: 401 });

    // The API refused the token (401), the client fetched one fresh token, was refused, and stopped.
    await sleep(300);
    const traffic = trafficSince(since);
    expect(traffic.slice(-2)).toEqual(['POST /v1/query 401', 'POST /oauth/token 401']);
    // Before that, only queries still answered within the bound (the revoking instance forgets
    // the client at once, so normally none).
    expect(traffic.slice(0, -2).filter((r) => r !== 'POST /v1/query 200')).toEqual([]);
    const [refusedQuery, refusedToken] = proxy!.requests.slice(-2);
    expect(JSON.parse(refusedQuery?.body ?? '{}')).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect(JSON.parse(refusedToken?.body ?? '{}')).toMatchObject({ error: 'invalid_client' });

    // A later call has no token to send: one token request, refused; the query is never sent.
    const later = proxy!.requests.length;
    const again = await rejectionOf(client.query('sales-by-region', { year: YEAR }));
    expect(again).toBeInstanceOf(OAuthError);
    expect(again).toMatchObject({ code: 'invalid_client', status: 401 });
    expect(trafficSince(later)).toEqual(['POST /oauth/token 401']);
  });

  it('refuses key management to a token scoped to query with ForbiddenError (403)', async () => {
    const record = await createOAuthClient('query-only', ['query']);
    const client = oauthClient(record.clientId, record.secret);
    const since = proxy!.requests.length;

    const error = await rejectionOf(client.keys.list());
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ name: 'ForbiddenError', code: 'FORBIDDEN', status: 403 });
    expect((error as ForbiddenError).message).toContain('"keys" scope');
    expect((error as ForbiddenError).requestId).toMatch(/^req_/);
    // A 403 is final: neither retried nor answered with a fresh token.
    await sleep(200);
    expect(trafficSince(since)).toEqual(['POST /oauth/token 200', 'GET /v1/keys 403']);

    // Control: a client holding `keys` lists them, and the same client narrowed to `query` cannot.
    const manager = await createOAuthClient('key-manager', ['query', 'keys']);
    const keys = await oauthClient(manager.clientId, manager.secret).keys.list();
    expect(keys.map((k) => k.name)).toContain('demo');
    const narrowed = await rejectionOf(oauthClient(manager.clientId, manager.secret, 'query').keys.list());
    expect(narrowed).toBeInstanceOf(ForbiddenError);
    expect(narrowed).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });
});
