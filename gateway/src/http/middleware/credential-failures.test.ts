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

describe('failed credentials, per address', () => {
  it('refuses an address after 60 unknown keys, and no other address or verified key', async () => {
    // Well-formed keys that exist nowhere: each costs a store lookup.
    const { generateApiKey } = await import('../../security/api-key.js');
    for (let i = 0; i < 60; i++) {
      expect((await from('203.0.113.7', generateApiKey('live').secret)).status).toBe(401);
    }
    const flooded = await from('203.0.113.7', generateApiKey('live').secret);
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
