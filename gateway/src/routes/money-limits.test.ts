// The limits that keep credits from being farmed (docs/design.md §4): an analytic's price is capped
// (QUARRY_MAX_PRICE), an account's free previews are counted across all its keys
// (QUARRY_PREVIEWS_PER_DAY), and rate limits hold per account, whichever of its keys calls, with
// management calls in a bucket of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../auth/principal.js';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
let bob: SignedUp;

beforeAll(async () => {
  tg = await createTestGateway({
    // Free: 3 requests a minute, all at once; previews keep their default of 20 a day.
    QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 3, window_seconds: 60, burst: 3 } }),
  });
  alice = await tg.signUp('Alice');
  bob = await tg.signUp('Bob');
});
afterAll(async () => {
  await tg?.close();
});

const GARDEN = { source: 'top-products', params: { category: 'Garden', limit: 3 } };

describe('price cap', () => {
  it('refuses a price above QUARRY_MAX_PRICE (default 100) at deploy, and takes 100', async () => {
    const deploy = (name: string, price: number) =>
      tg.call('PUT', `/v1/owner/analytics/${name}`, {
        key: tg.ownerKey,
        body: { connection: 'demo', sql: 'SELECT 1 AS one', price },
      });
    const refused = await deploy('money-pricey', 1_000_000);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.code).toBe('INVALID_REQUEST');
    expect(refused.json.error.details).toContainEqual({
      field: 'price',
      message: expect.stringMatching(/above this gateway's most, 100 credits/),
    });
    expect((await deploy('money-pricey', 101)).status).toBe(400);
    expect((await deploy('money-pricey', 100)).status).toBe(200);
  });
});

describe('previews a day, per account', () => {
  it('allows 20 previews a day across all keys, refuses the 21st, and leaves key calls alone', async () => {
    const second = await tg.call('POST', '/v1/keys', { key: tg.demoKey, body: { name: 'second' } });
    expect(second.status, second.text).toBe(201);
    const keys = [tg.demoKey, second.json.key.secret as string];
    const tokens: string[] = [];
    for (const key of keys) {
      const minted = await tg.call('POST', '/v1/marketplace/try-token', {
        key,
        body: { source: 'top-products' },
      });
      expect(minted.status, minted.text).toBe(201);
      tokens.push(minted.json.token);
    }
    const preview = (i: number) => tg.call('POST', '/v1/query', { key: tokens[i % 2], body: GARDEN });
    for (let i = 0; i < 20; i++) {
      const res = await preview(i);
      expect(res.status, `${i}: ${res.text}`).toBe(200);
      expect(res.json.meta).toMatchObject({ preview: true, credits: 0 });
    }
    const refused = await preview(20);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.json.error.message).toMatch(/20 free previews a day/);
    expect(refused.json.error.retry_after).toBeGreaterThan(60);
    // A fresh token of the same account is no way around it…
    const again = await tg.call('POST', '/v1/marketplace/try-token', {
      key: tg.demoKey,
      body: { source: 'top-products' },
    });
    expect((await tg.call('POST', '/v1/query', { key: again.json.token, body: GARDEN })).status).toBe(429);
    // …while calls with the account's keys are charged as usual.
    const paid = await tg.call('POST', '/v1/query', { key: tg.demoKey, body: GARDEN });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.json.meta.preview).toBeUndefined();
  });
});

describe('rate limits per account', () => {
  it('puts every key of an account in one bucket', async () => {
    const keys = [alice.key];
    for (let i = 0; i < 4; i++) {
      const created = await tg.gateway.services.accounts.createKey(
        { accountId: alice.accountId, scopes: SCOPES },
        { name: `k${i}` },
      );
      keys.push(created.secret);
    }
    const statuses: number[] = [];
    for (const key of keys) statuses.push((await tg.call('POST', '/v1/query', { key, body: GARDEN })).status);
    // Three a minute for the account, not for each of its five keys.
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Another account has its own bucket.
    expect((await tg.call('POST', '/v1/query', { key: bob.key, body: GARDEN })).status).toBe(200);
  });

  it('keeps management calls in their own bucket: usage still answers once queries are spent', async () => {
    for (let i = 0; i < 3; i++) await tg.call('POST', '/v1/query', { key: bob.key, body: GARDEN });
    expect((await tg.call('POST', '/v1/query', { key: bob.key, body: GARDEN })).status).toBe(429);
    const usage = await tg.call('GET', '/v1/account/usage', { key: bob.key });
    expect(usage.status, usage.text).toBe(200);
  });
});
