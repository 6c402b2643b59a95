// Failed credentials are throttled per client address: an address that sends too many bad keys
// (or wrong operator tokens) is refused with 429 before any store lookup, while other addresses,
// and keys already verified, are not slowed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
const ADMIN = 'operator-token-0123456789';

beforeAll(async () => {
  // In-process requests have no socket: QUARRY_TRUST_PROXY=1 lets X-Forwarded-For name them.
  tg = await createTestGateway({ QUARRY_TRUST_PROXY: '1', QUARRY_ADMIN_TOKEN: ADMIN });
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

const from = (address: string, key: string, path = '/v1/account') =>
  tg.call('GET', path, { key, headers: { 'x-forwarded-for': address } });

/**
 * Sends unknown keys from `address` until one is refused, and checks at least 60 were answered
 * 401 first (more may pass on a slow machine: the allowance refills one a second).
 */
async function floodUntilRefused(address: string, atLeast = 60) {
  const { generateApiKey } = await import('../../security/api-key.js');
  let unauthenticated = 0;
  for (let i = 0; i < 500; i++) {
    const res = await from(address, generateApiKey('live').secret);
    if (res.status !== 401) {
      expect(unauthenticated).toBeGreaterThanOrEqual(atLeast);
      return res;
    }
    unauthenticated += 1;
  }
  throw new Error(`500 unknown keys from ${address} were never refused`);
}

describe('failed credentials, per address', () => {
  it('refuses an address after 60 unknown keys, and no other address or verified key', async () => {
    // Well-formed keys that exist nowhere: each costs a store lookup.
    const { generateApiKey } = await import('../../security/api-key.js');
    const flooded = await floodUntilRefused('203.0.113.7');
    expect(flooded.status).toBe(429);
    expect(flooded.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(flooded.json.error.message).toMatch(/failed credentials from your address/);
    expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The same on the query route.
    const query = await tg.call('POST', '/v1/query', {
      key: generateApiKey('live').secret,
      body: { source: 'top-products', params: { category: 'Garden' } },
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    expect(query.status).toBe(429);
    // Another address is not affected, and neither is a key already verified.
    expect((await from('198.51.100.9', alice.key)).status).toBe(200);
    expect((await from('203.0.113.7', alice.key)).status).toBe(200);
  });

  it('still serves a key verified lately once its cached verdict is gone, never a key new to it', async () => {
    const bob = await tg.signUp('Bob');
    const carol = await tg.signUp('Carol');
    const fresh = await tg.call('POST', '/v1/keys', { key: carol.key, body: { name: 'unused' } });
    const unused = fresh.json.key.secret as string;
    // Bob's key verifies once, from anywhere; Carol's new key never has.
    expect((await from('198.51.100.20', bob.key)).status).toBe(200);
    expect((await floodUntilRefused('203.0.113.99')).status).toBe(429);
    // Past the verdict cache (QUARRY_KEY_CACHE_MS, 1 s here): Bob is looked up again and served;
    // the guesser cannot lock out whoever shares its address.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect((await floodUntilRefused('203.0.113.99', 0)).status).toBe(429);
    expect((await from('203.0.113.99', bob.key)).status).toBe(200);
    expect((await from('203.0.113.99', unused)).status).toBe(429);
  });

  it('refuses an address after too many wrong operator tokens, while the operator elsewhere gets in', async () => {
    for (let i = 0; i < 60; i++) {
      expect((await from('203.0.113.50', `wrong-token-${i}-xxxxxxxx`, '/v1/admin/accounts')).status).toBe(
        401,
      );
    }
    expect((await from('203.0.113.50', ADMIN, '/v1/admin/accounts')).status).toBe(429);
    expect((await from('198.51.100.50', ADMIN, '/v1/admin/accounts')).status).toBe(200);
  });
});
