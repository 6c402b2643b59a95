// The client against a local HTTP server playing the gateway: what it sends, the typed errors it
// throws, which failures it retries (and how often), timeouts and aborts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConflictError,
  FailedCallsThrottledError,
  ForbiddenError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  PriceAboveLimitError,
  QuarryError,
  QueryTimeoutError,
  QuotaExceededError,
  RateLimitError,
  ResultTooLargeError,
  SourceUnavailableError,
  TimeoutError,
  UnauthenticatedError,
  UpstreamError,
} from './errors.js';
import { createQuarryClient } from './quarry-client.js';
import { billingAnswer } from './testing/billing-fixture.js';
import { payoutAccountAnswer, payoutsAnswer } from './testing/payouts-fixture.js';
import {
  envelope,
  queryAnswer,
  startTestServer,
  type TestHandler,
  type TestServer,
} from './testing/test-server.js';

const KEY = 'qry_live_testkey';
let server: TestServer | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

async function serve(handler: TestHandler) {
  server = await startTestServer(handler);
  return server;
}

/** A client whose retries wait at most a few ms (the waits themselves are tested with fake timers). */
function clientFor(s: TestServer, retries = 3, timeoutMs?: number) {
  return createQuarryClient(
    { baseUrl: s.url, apiKey: KEY },
    { retry: { retries, baseDelayMs: 1, maxDelayMs: 5_000 }, ...(timeoutMs ? { timeoutMs } : {}) },
  );
}

/** Rejection of `promise`, which must reject. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('requests', () => {
  it('queries with the key, a JSON body and an Idempotency-Key, and returns the typed answer', async () => {
    const s = await serve(() => queryAnswer([{ region: 'EU', revenue: 10 }]));
    const client = clientFor(s);
    const answer = await client.query<{ region: string; revenue: number }>('sales-by-region', { year: 2024 });
    expect(answer.results[0]?.region).toBe('EU');
    expect(answer.meta.credits).toBe(1);
    const [req] = s.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/query');
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['idempotency-key']).toMatch(/^qc-[0-9a-f]{32}$/);
    expect(JSON.parse(req?.body ?? '')).toEqual({ source: 'sales-by-region', params: { year: 2024 } });
    // Each call gets its own key; `noCache` asks the gateway to bypass its cache.
    await client.query('sales-by-region', { year: 2024 }, { noCache: true });
    expect(s.requests[1]?.headers['idempotency-key']).not.toBe(req?.headers['idempotency-key']);
    expect(s.requests[1]?.headers['cache-control']).toBe('no-cache');
    // `maxCredits` is the body's max_credits.
    await client.query('sales-by-region', { year: 2024 }, { maxCredits: 5 });
    expect(JSON.parse(s.requests[2]?.body ?? '')).toEqual({
      source: 'sales-by-region',
      params: { year: 2024 },
      max_credits: 5,
    });
  });

  it('runs GET /v1/analytics/:name with lists as repeated keys and nulls left out', async () => {
    const s = await serve(() => queryAnswer());
    await clientFor(s).analytics.get('monthly-revenue', { year: 2024, regions: ['EU', 'NA'], region: null });
    expect(s.requests[0]?.method).toBe('GET');
    expect(s.requests[0]?.url).toBe('/v1/analytics/monthly-revenue?year=2024&regions=EU&regions=NA');
    await clientFor(s).analytics.get('monthly-revenue', { year: 2024 }, { maxCredits: 3 });
    expect(s.requests[1]?.url).toBe('/v1/analytics/monthly-revenue?year=2024&max_credits=3');
  });

  it('keeps a base URL path prefix and unwraps the management answers', async () => {
    const s = await serve((req) => {
      if (req.url === '/prefix/v1/account')
        return { status: 200, body: { account: { id: 'acc_1', email: 'a@b.c', name: 'A', plan: 'free' } } };
      if (req.url === '/prefix/v1/keys' && req.method === 'POST')
        return { status: 201, body: { key: { id: 'key_1', name: 'ci', secret: 'qry_live_x' } } };
      if (req.url === '/prefix/v1/keys/key%2F1' && req.method === 'DELETE')
        return { status: 200, body: { key: { id: 'key/1', revoked_at: '2026-01-01T00:00:00Z' } } };
      if (req.url === '/prefix/v1/owner/analytics/top-products' && req.method === 'PUT')
        return { status: 200, body: { outcome: 'updated', analytic: { name: 'top-products', version: 2 } } };
      if (req.url === '/prefix/v1/owner/statements?period=2026-10&format=csv')
        return { status: 200, body: 'period,analytic\r\n', headers: { 'content-type': 'text/csv' } };
      if (req.url === '/prefix/v1/owner/analytics/gone' && req.method === 'DELETE') return { status: 204 };
      if (req.url === '/prefix/v1/owner/analytics/top%2Fproducts/cache' && req.method === 'DELETE')
        return { status: 204 };
      return envelope(404, 'NOT_FOUND');
    });
    const client = createQuarryClient({ baseUrl: `${s.url}/prefix/`, apiKey: KEY });
    expect((await client.account.get()).id).toBe('acc_1');
    expect((await client.keys.create({ name: 'ci', scopes: ['query'] })).secret).toBe('qry_live_x');
    expect(JSON.parse(s.requests[1]?.body ?? '')).toEqual({ name: 'ci', scopes: ['query'] });
    expect((await client.keys.revoke('key/1')).revoked_at).not.toBeNull();
    const deployed = await client.analytics.deploy({
      name: 'top-products',
      connection: 'demo',
      sql: 'SELECT 1',
    });
    expect(deployed).toMatchObject({ outcome: 'updated', analytic: { version: 2 } });
    expect(await client.statements.csv({ period: '2026-10' })).toBe('period,analytic\r\n');
    await expect(client.analytics.delete('gone')).resolves.toBeUndefined();
    await expect(client.analytics.purgeCache('top/products')).resolves.toBeUndefined();
    await expect(client.analytics.purgeCache('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('marketplace.searchAll', () => {
  /** A gateway with `total` listings named l0, l1, …, paged by `limit` and `offset`. */
  function listings(total: number): TestHandler {
    return (req) => {
      const url = new URL(req.url, 'http://gateway');
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const items = Array.from({ length: Math.max(0, Math.min(limit, total - offset)) }, (_, i) => ({
        name: `l${offset + i}`,
      }));
      return { status: 200, body: { items, total } };
    };
  }

  it('walks every page in order, and asks for no page after the last full one', async () => {
    const s = await serve(listings(4));
    const names: string[] = [];
    for await (const l of clientFor(s).marketplace.searchAll({ q: 'sales', sort: 'newest', pageSize: 2 })) {
      names.push(l.name);
    }
    expect(names).toEqual(['l0', 'l1', 'l2', 'l3']);
    expect(s.requests.map((r) => r.url)).toEqual([
      '/v1/marketplace/listings?q=sales&sort=newest&limit=2',
      '/v1/marketplace/listings?q=sales&sort=newest&limit=2&offset=2',
    ]);
  });

  it('fetches lazily: nothing before the loop, only the pages the loop used', async () => {
    const s = await serve(listings(250));
    const all = clientFor(s).marketplace.searchAll();
    expect(s.requests).toHaveLength(0);
    let seen = 0;
    for await (const _ of all) {
      if (++seen === 150) break;
    }
    // The default page is the largest the gateway gives: 100.
    expect(s.requests.map((r) => r.url)).toEqual([
      '/v1/marketplace/listings?limit=100',
      '/v1/marketplace/listings?limit=100&offset=100',
    ]);
  });

  it('yields nothing for no match, after one request', async () => {
    const s = await serve(listings(0));
    const names: string[] = [];
    for await (const l of clientFor(s).marketplace.searchAll({ category: 'none' })) names.push(l.name);
    expect(names).toEqual([]);
    expect(s.requests).toHaveLength(1);
  });
});

describe('calls.listAll', () => {
  /** A gateway with `total` calls, newest first (r0 the newest), paged by `limit` and a cursor. */
  function calls(total: number): TestHandler {
    return (req) => {
      const url = new URL(req.url, 'http://gateway');
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const cursor = url.searchParams.get('cursor');
      const from = cursor === null ? 0 : Number(cursor.replace('after-r', '')) + 1;
      const to = Math.min(from + limit, total);
      const items = Array.from({ length: Math.max(0, to - from) }, (_, i) => ({
        request_id: `r${from + i}`,
        analytic: url.searchParams.get('analytic') ?? 'sales',
        status: 'ok',
      }));
      return { status: 200, body: { items, next_cursor: to < total ? `after-r${to - 1}` : null } };
    };
  }

  it('follows next_cursor through every page, each call once, and stops when it is null', async () => {
    const s = await serve(calls(5));
    const ids: string[] = [];
    for await (const c of clientFor(s).calls.listAll({ analytic: 'sales', status: 'ok', pageSize: 2 })) {
      ids.push(c.request_id);
    }
    expect(ids).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(s.requests.map((r) => r.url)).toEqual([
      '/v1/account/calls?analytic=sales&status=ok&limit=2',
      '/v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r1',
      '/v1/account/calls?analytic=sales&status=ok&limit=2&cursor=after-r3',
    ]);
  });

  it('fetches lazily: nothing before the loop, only the pages the loop used', async () => {
    const s = await serve(calls(250));
    const all = clientFor(s).calls.listAll();
    expect(s.requests).toHaveLength(0);
    let seen = 0;
    for await (const _ of all) {
      if (++seen === 150) break;
    }
    // The default page is the largest the gateway gives: 100.
    expect(s.requests.map((r) => r.url)).toEqual([
      '/v1/account/calls?limit=100',
      '/v1/account/calls?limit=100&cursor=after-r99',
    ]);
  });

  it('yields nothing when there are no calls, after one request', async () => {
    const s = await serve(calls(0));
    const ids: string[] = [];
    for await (const c of clientFor(s).calls.listAll({ analytic: 'none' })) ids.push(c.request_id);
    expect(ids).toEqual([]);
    expect(s.requests).toHaveLength(1);
  });
});

describe('agent tools and MCP settings', () => {
  it('lists, adds and removes agent tools and sets the MCP default price limit', async () => {
    const tool = {
      name: 'region/revenue',
      title: 'Region revenue',
      owner_id: 'acc_2',
      owned: false,
      listed: true,
      price: 3,
      scheduled_price: null,
      price_effective_at: null,
    };
    const s = await serve((req) => {
      if (req.url === '/v1/account/tools' && req.method === 'GET')
        return { status: 200, body: { items: [tool] } };
      if (req.url === '/v1/account/tools' && req.method === 'POST') return { status: 201, body: { tool } };
      if (req.url === '/v1/account/tools/region%2Frevenue' && req.method === 'DELETE') return { status: 204 };
      if (req.url === '/v1/account/mcp' && req.method === 'PUT')
        return { status: 200, body: { mcp: JSON.parse(req.body) } };
      if (req.url === '/v1/account/mcp') return { status: 200, body: { mcp: { max_credits: null } } };
      return envelope(404, 'NOT_FOUND');
    });
    const client = clientFor(s);
    expect(await client.tools.list()).toEqual([tool]);
    expect(await client.tools.add('region/revenue')).toEqual(tool);
    expect(JSON.parse(s.requests[1]?.body ?? '')).toEqual({ source: 'region/revenue' });
    await expect(client.tools.remove('region/revenue')).resolves.toBeUndefined();
    expect(await client.mcp.get()).toEqual({ max_credits: null });
    expect(await client.mcp.set({ maxCredits: 10 })).toEqual({ max_credits: 10 });
    expect(JSON.parse(s.requests[4]?.body ?? '')).toEqual({ max_credits: 10 });
  });

  it('throws FailedCallsThrottledError for 429 FAILED_CALLS_THROTTLED, without retrying it', async () => {
    const s = await serve(() => envelope(429, 'FAILED_CALLS_THROTTLED', { retry_after: 42 }));
    const error = await failure(clientFor(s).query('slow', {}));
    expect(error).toBeInstanceOf(FailedCallsThrottledError);
    expect(error).toMatchObject({ code: 'FAILED_CALLS_THROTTLED', retryAfter: 42 });
    expect(s.requests).toHaveLength(1);
  });
});

describe('billing', () => {
  it('reads the billing state, opens a checkout (with or without a return URL) and the portal', async () => {
    const s = await serve((req) => {
      if (req.url === '/v1/billing' && req.method === 'GET')
        return { status: 200, body: billingAnswer('smb') };
      if (req.url === '/v1/billing/checkout' && req.method === 'POST') {
        const { plan } = JSON.parse(req.body) as { plan: string };
        if (plan === 'free')
          return envelope(400, 'INVALID_REQUEST', { details: [{ field: 'plan', message: 'free' }] });
        return {
          status: 200,
          body: {
            id: 'cs_1',
            url: `${s.url}/billing/sandbox/checkout/cs_1`,
            mode: plan === 'payg' ? 'setup' : 'subscription',
          },
        };
      }
      if (req.url === '/v1/billing/portal' && req.method === 'POST')
        return { status: 200, body: { url: `${s.url}/billing/sandbox/portal` } };
      return envelope(404, 'NOT_FOUND');
    });
    const client = clientFor(s);
    const billing = await client.billing.get();
    expect(billing.plan.id).toBe('smb');
    expect(billing.plans.find((p) => p.current)?.id).toBe('smb');
    expect(billing.plans.find((p) => p.id === 'enterprise')?.action).toBe('upgrade');
    expect(s.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    const checkout = await client.billing.checkout('enterprise', { returnUrl: 'http://gw.example/#/usage' });
    expect(checkout).toEqual({
      id: 'cs_1',
      url: `${s.url}/billing/sandbox/checkout/cs_1`,
      mode: 'subscription',
    });
    expect(JSON.parse(s.requests[1]?.body ?? '')).toEqual({
      plan: 'enterprise',
      return_url: 'http://gw.example/#/usage',
    });
    expect(s.requests[1]?.headers['content-type']).toBe('application/json');
    expect((await client.billing.checkout('payg')).mode).toBe('setup');
    expect(JSON.parse(s.requests[2]?.body ?? '')).toEqual({ plan: 'payg' });

    expect((await client.billing.portal()).url).toBe(`${s.url}/billing/sandbox/portal`);
    expect(JSON.parse(s.requests[3]?.body ?? '')).toEqual({});
    await client.billing.portal({ returnUrl: 'http://gw.example/' });
    expect(JSON.parse(s.requests[4]?.body ?? '')).toEqual({ return_url: 'http://gw.example/' });

    expect(await failure(client.billing.checkout('free'))).toBeInstanceOf(InvalidRequestError);
    await expect(client.billing.checkout('')).rejects.toThrow(TypeError);
    expect(s.requests).toHaveLength(6);
  });

  it('throws ConflictError when the gateway takes no payments, and never repeats a checkout', async () => {
    const s = await serve((req) =>
      req.url === '/v1/billing/checkout'
        ? envelope(409, 'CONFLICT')
        : envelope(503, 'SOURCE_UNAVAILABLE', { retry_after: 0.001 }),
    );
    const client = clientFor(s, 2);
    expect(await failure(client.billing.checkout('smb'))).toBeInstanceOf(ConflictError);
    expect(await failure(client.billing.portal())).toBeInstanceOf(SourceUnavailableError);
    // A 503 may have opened a checkout or portal session: not repeated (only refused calls are).
    expect(s.requests).toHaveLength(2);
  });
});

describe('payouts', () => {
  it('reads the payout account and the payouts, and opens onboarding (with or without a return URL)', async () => {
    let onboardings = 0;
    const s = await serve((req) => {
      if (req.url === '/v1/owner/payouts/account' && req.method === 'GET')
        return { status: 200, body: payoutAccountAnswer('pending') };
      if (req.url === '/v1/owner/payouts' && req.method === 'GET')
        return { status: 200, body: payoutsAnswer() };
      if (req.url === '/v1/owner/payouts/onboarding' && req.method === 'POST')
        return { status: 200, body: { url: `${s.url}/billing/sandbox/onboarding/acct_${++onboardings}` } };
      return envelope(404, 'NOT_FOUND');
    });
    const client = clientFor(s);
    const account = await client.payouts.account();
    expect(account).toEqual({
      provider: 'sandbox',
      status: 'pending',
      payouts_enabled: false,
      requirements: ['external_account'],
      minimum_payout_cents: 1_000,
    });
    expect(s.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    const payouts = await client.payouts.list();
    expect(payouts.payouts.map((p) => [p.period, p.status, p.reason])).toEqual([
      ['2026-10', 'paid', null],
      ['2026-09', 'held', 'below_minimum'],
      ['2026-08', 'held', 'not_onboarded'],
    ]);
    expect(payouts.payouts[0]?.transfer_id).toBe('tr_sandbox_1a2b3c');

    const first = await client.payouts.onboarding();
    expect(first.url).toBe(`${s.url}/billing/sandbox/onboarding/acct_1`);
    expect(JSON.parse(s.requests[2]?.body ?? '')).toEqual({});
    expect(s.requests[2]?.headers['content-type']).toBe('application/json');
    const second = await client.payouts.onboarding({ returnUrl: 'http://gw.example/#/statements' });
    expect(second.url).not.toBe(first.url);
    expect(JSON.parse(s.requests[3]?.body ?? '')).toEqual({ return_url: 'http://gw.example/#/statements' });
    expect(s.requests).toHaveLength(4);
  });

  it('throws ConflictError when the operator pays by hand, and never repeats an onboarding', async () => {
    const s = await serve((req) =>
      req.url === '/v1/owner/payouts/onboarding'
        ? envelope(409, 'CONFLICT')
        : envelope(503, 'SOURCE_UNAVAILABLE', { retry_after: 0.001 }),
    );
    const client = clientFor(s, 2);
    expect(await failure(client.payouts.onboarding())).toBeInstanceOf(ConflictError);
    expect(s.requests).toHaveLength(1);
    // A read is repeated after a 503 (here: twice, then given up).
    expect(await failure(client.payouts.account())).toBeInstanceOf(SourceUnavailableError);
    expect(s.requests).toHaveLength(4);
  });
});

describe('typed errors', () => {
  const cases: [number, string, new (...args: never[]) => QuarryError][] = [
    [400, 'INVALID_REQUEST', InvalidRequestError],
    [400, 'INVALID_PARAMS', InvalidParamsError],
    [401, 'UNAUTHENTICATED', UnauthenticatedError],
    [403, 'FORBIDDEN', ForbiddenError],
    [404, 'SOURCE_NOT_FOUND', NotFoundError],
    [409, 'CONFLICT', ConflictError],
    [409, 'PRICE_ABOVE_LIMIT', PriceAboveLimitError],
    [429, 'QUOTA_EXCEEDED', QuotaExceededError],
    [422, 'RESULT_TOO_LARGE', ResultTooLargeError],
    [500, 'INTERNAL', InternalError],
  ];
  it.each(cases)('HTTP %i %s becomes its class, with the envelope fields', async (status, code, Class) => {
    const s = await serve(() =>
      envelope(status, code, {
        retry_after: 12.5,
        details: [{ param: 'year', message: 'must be an integer' }],
      }),
    );
    const error = await failure(clientFor(s).query('sales-by-region', { year: 'x' }));
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(QuarryError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      code,
      status,
      requestId: 'req_test',
      retryAfter: 12.5,
      details: [{ param: 'year', message: 'must be an integer' }],
      reason: `${code} from the test server`,
      message: `${code}: ${code} from the test server (request req_test)`,
    });
    // None of these is retried.
    expect(s.requests).toHaveLength(1);
  });

  it('names the retryable families too (after the retries are spent)', async () => {
    for (const [status, code, Class] of [
      [429, 'RATE_LIMIT_EXCEEDED', RateLimitError],
      [502, 'UPSTREAM_ERROR', UpstreamError],
      [503, 'SOURCE_UNAVAILABLE', SourceUnavailableError],
      [504, 'QUERY_TIMEOUT', QueryTimeoutError],
    ] as const) {
      const s = await startTestServer(() => envelope(status, code));
      const error = await failure(clientFor(s, 0).query('x', {}));
      await s.close();
      expect(error, code).toBeInstanceOf(Class);
      expect((error as QuarryError).status).toBe(status);
    }
  });

  it('reads Retry-After when the body has no retry_after, and survives a body that is not an envelope', async () => {
    const s = await serve((_req, i) =>
      i === 0
        ? { status: 418, body: '<html>teapot</html>', headers: { 'retry-after': '7' } }
        : { status: 200, body: 'not json' },
    );
    const client = clientFor(s, 0);
    const error = (await failure(client.account.get())) as QuarryError;
    expect(error).toMatchObject({ code: 'HTTP_ERROR', status: 418, retryAfter: 7 });
    expect(error.message).toContain('teapot');
    expect(await failure(client.account.get())).toMatchObject({ code: 'INVALID_RESPONSE', status: 200 });
  });
});

describe('retries', () => {
  it('does not retry a 400', async () => {
    const s = await serve(() => envelope(400, 'INVALID_PARAMS'));
    expect(await failure(clientFor(s).query('sales-by-region', { year: 'x' }))).toBeInstanceOf(
      InvalidParamsError,
    );
    expect(s.requests).toHaveLength(1);
  });

  it('does not retry QUOTA_EXCEEDED, though it is a 429 with a retry_after', async () => {
    const s = await serve(() => envelope(429, 'QUOTA_EXCEEDED', { retry_after: 0.001 }));
    expect(await failure(clientFor(s).query('x', {}))).toBeInstanceOf(QuotaExceededError);
    expect(s.requests).toHaveLength(1);
  });

  it('retries SOURCE_UNAVAILABLE with the same Idempotency-Key and returns the answer', async () => {
    const s = await serve((_req, i) =>
      i < 2 ? envelope(503, 'SOURCE_UNAVAILABLE', { retry_after: 0.001 }) : queryAnswer(),
    );
    const answer = await clientFor(s).query('sales-by-region', { year: 2024 });
    expect(answer.results).toHaveLength(1);
    expect(s.requests).toHaveLength(3);
    const keys = new Set(s.requests.map((r) => r.headers['idempotency-key']));
    expect(keys.size).toBe(1);
  });

  it('gives up after the configured number of retries and throws the last error', async () => {
    const s = await serve(() => envelope(502, 'UPSTREAM_ERROR'));
    expect(await failure(clientFor(s, 2).analytics.get('sales-by-region', { year: 2024 }))).toBeInstanceOf(
      UpstreamError,
    );
    expect(s.requests).toHaveLength(3);
  });

  it('retries a dropped connection on an idempotent call, as a NetworkError in the end', async () => {
    const s = await serve(() => 'reset');
    const error = await failure(clientFor(s, 2).keys.list());
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).status).toBe(0);
    expect(s.requests).toHaveLength(3);
  });

  it('does not repeat a key creation that may have happened, but does repeat a rate-limited one', async () => {
    const failing = await serve(() => envelope(503, 'SOURCE_UNAVAILABLE'));
    expect(await failure(clientFor(failing).keys.create({ name: 'k' }))).toBeInstanceOf(
      SourceUnavailableError,
    );
    expect(failing.requests).toHaveLength(1);
    await failing.close();
    const limited = await serve((_req, i) =>
      i === 0
        ? envelope(429, 'RATE_LIMIT_EXCEEDED', { retry_after: 0.001 })
        : { status: 201, body: { key: { id: 'k1', secret: 's' } } },
    );
    expect((await clientFor(limited).keys.create({ name: 'k' })).id).toBe('k1');
    expect(limited.requests).toHaveLength(2);
  });

  it('throws at once when retry_after is longer than maxDelayMs allows', async () => {
    const s = await serve(() => envelope(429, 'RATE_LIMIT_EXCEEDED', { retry_after: 60 }));
    const error = await failure(clientFor(s).query('x', {}));
    expect(error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 60 });
    expect(s.requests).toHaveLength(1);
  });

  it('waits out retry_after before retrying: not a moment sooner (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const s = await serve((_req, i) =>
      i === 0 ? envelope(429, 'RATE_LIMIT_EXCEEDED', { retry_after: 30 }) : queryAnswer(),
    );
    const client = createQuarryClient(
      { baseUrl: s.url, apiKey: KEY },
      { retry: { retries: 1, baseDelayMs: 100, maxDelayMs: 60_000 } },
    );
    const call = client.query('sales-by-region', { year: 2024 });
    // The retry wait is 30 s plus up to 100 ms of jitter: wait until the client has scheduled it.
    const isRetryWait = ([, ms]: unknown[]) => typeof ms === 'number' && ms >= 30_000 && ms <= 30_100;
    for (let i = 0; i < 10_000 && !timers.mock.calls.some(isRetryWait); i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(timers.mock.calls.some(isRetryWait)).toBe(true);
    await vi.advanceTimersByTimeAsync(29_999);
    // Give a premature retry every chance to reach the server.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(s.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(101);
    await s.waitForRequests(2);
    expect((await call).results).toHaveLength(1);
  });
});

describe('timeouts and aborts', () => {
  it('fails with TimeoutError when the whole call outlasts timeoutMs, and closes the request', async () => {
    const s = await serve(() => 'hang');
    const error = await failure(clientFor(s, 3, 150).account.get());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).code).toBe('TIMEOUT');
    await s.waitForClosedHangs(1);
    expect(s.requests).toHaveLength(1);
  });

  it("rejects with the caller's abort reason and cancels the request in flight", async () => {
    const s = await serve(() => 'hang');
    const controller = new AbortController();
    const call = clientFor(s).query('x', {}, { signal: controller.signal });
    await s.waitForRequests(1);
    controller.abort();
    const error = await failure(call);
    expect((error as Error).name).toBe('AbortError');
    await s.waitForClosedHangs(1);
  });

  it('an abort during the wait before a retry stops the retries', async () => {
    const s = await serve(() => envelope(503, 'SOURCE_UNAVAILABLE', { retry_after: 20 }));
    const client = createQuarryClient(
      { baseUrl: s.url, apiKey: KEY },
      { retry: { retries: 3, baseDelayMs: 1, maxDelayMs: 60_000 } },
    );
    const controller = new AbortController();
    const call = client.query('x', {}, { signal: controller.signal });
    await s.waitForRequests(1);
    controller.abort(new Error('user navigated away'));
    expect(((await failure(call)) as Error).message).toBe('user navigated away');
    expect(s.requests).toHaveLength(1);
  });

  it('refuses an already aborted signal without sending anything', async () => {
    const s = await serve(() => queryAnswer());
    const error = await failure(clientFor(s).query('x', {}, { signal: AbortSignal.abort() }));
    expect((error as Error).name).toBe('AbortError');
    expect(s.requests).toHaveLength(0);
  });
});

describe('configuration', () => {
  it('refuses a relative URL or a missing credential with a message saying what to give', () => {
    expect(() => createQuarryClient({ baseUrl: 'localhost:8787', apiKey: KEY })).toThrow(/absolute http/);
    expect(() => createQuarryClient({ baseUrl: 'http://x', apiKey: '' })).toThrow(/apiKey/);
    expect(() =>
      createQuarryClient({ baseUrl: 'http://x', oauth: { clientId: 'c', clientSecret: '' } }),
    ).toThrow(/clientSecret/);
  });
});
