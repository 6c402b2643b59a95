// The per-account bounds as a caller meets them: QUARRY_MAX_*_PER_ACCOUNT reach the store, and a
// creation past a bound is a 409 CONFLICT in the envelope, naming the bound and its setting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;

beforeAll(async () => {
  tg = await createTestGateway({
    QUARRY_MAX_KEYS_PER_ACCOUNT: '2',
    QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT: '1',
  });
});
afterAll(async () => {
  await tg?.close();
});

describe('per-account bounds over HTTP', () => {
  it('refuses a key past QUARRY_MAX_KEYS_PER_ACCOUNT with 409, and a revoked key frees room', async () => {
    const account = await tg.signUp('Limited');
    // Sign-up issued the first key; one more fits.
    const second = await tg.call('POST', '/v1/keys', { key: account.key, body: { name: 'second' } });
    expect(second.status, second.text).toBe(201);
    const third = await tg.call('POST', '/v1/keys', { key: account.key, body: { name: 'third' } });
    expect(third.status, third.text).toBe(409);
    expect(third.json.error).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/already has 2 live keys.*QUARRY_MAX_KEYS_PER_ACCOUNT/),
      details: [{ field: 'live keys', message: 'at most 2 (QUARRY_MAX_KEYS_PER_ACCOUNT)' }],
    });
    const revoked = await tg.call('DELETE', `/v1/keys/${second.json.key.id}`, { key: account.key });
    expect(revoked.status, revoked.text).toBeLessThan(300);
    const again = await tg.call('POST', '/v1/keys', { key: account.key, body: { name: 'again' } });
    expect(again.status, again.text).toBe(201);
  });

  it('refuses an OAuth client past QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT with 409', async () => {
    const account = await tg.signUp('Clients');
    const create = () => tg.call('POST', '/v1/oauth/clients', { key: account.key, body: { name: 'c' } });
    expect((await create()).status).toBe(201);
    const refused = await create();
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.error.message).toMatch(/QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT/);
  });
});
