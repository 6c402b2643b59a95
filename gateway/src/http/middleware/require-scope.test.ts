// The per-account rate limit on the request path: IETF headers on every authenticated response,
// 429 RATE_LIMIT_EXCEEDED with a fractional `retry_after` and a whole-second `Retry-After`, and a
// key's override replacing its plan's default.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;

beforeAll(async () => {
  // Free plan: 3 requests a minute, all 3 allowed at once (burst = the bucket).
  tg = await createTestGateway({
    QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 3, window_seconds: 60, burst: 3 } }),
  });
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

const query = (key: string) =>
  tg.call('POST', '/v1/query', { key, body: { source: 'sales-by-region', params: { year: 2024 } } });

describe('rate limit', () => {
  it('sends the policy and what is left on every response, then refuses with 429', async () => {
    const first = await query(alice.key);
    expect(first.status).toBe(200);
    // The per-key limit, then the plan's monthly quota (the test gateway's Free plan has 1,000,000).
    expect(first.headers.get('ratelimit-policy')).toMatch(/^"default";q=3;w=60, "monthly";q=1000000;w=\d+$/);
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=2;t=\d+(\.\d+)?, "monthly";r=999999;t=\d+$/);
    // A failing call is limited too (it still costs the gateway work): an invalid param.
    const bad = await tg.call('POST', '/v1/query', {
      key: alice.key,
      body: { source: 'sales-by-region', params: { year: 'x' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('ratelimit')).toMatch(/^"default";r=1;/);
    // Management calls have a bucket of their own: reading the account spends no query.
    expect((await tg.call('GET', '/v1/account', { key: alice.key })).status).toBe(200);
    expect((await query(alice.key)).headers.get('ratelimit')).toMatch(/^"default";r=0;/);

    const refused = await query(alice.key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    const retryAfter = refused.json.error.retry_after as number;
    expect(typeof retryAfter).toBe('number');
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil(retryAfter)));
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;/);
    expect(refused.json.error.request_id).toBe(refused.headers.get('x-request-id'));
  });

  it('limits each account separately, and a key override replaces the plan default', async () => {
    const bob = await tg.signUp('Bob');
    await tg.gateway.services.store.keys.setRateLimit(bob.keyId, { limit: 1, window_seconds: 60, burst: 1 });
    tg.gateway.services.auth.forgetKey(bob.keyId);
    const first = await query(bob.key);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toMatch(/^"default";q=1;w=60, /);
    expect((await query(bob.key)).status).toBe(429);

    const carol = await tg.signUp('Carol');
    expect((await query(carol.key)).status).toBe(200);
  });

  it("never limits an unauthenticated request by someone else's key", async () => {
    const res = await tg.call('POST', '/v1/query', {
      key: 'qry_live_0000000000000000000000000000',
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});
