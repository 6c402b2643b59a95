// The sign-up throttle in process (app.request(): no socket). Such requests share one unknown
// address; with a trusted proxy, X-Forwarded-For names the client. Over real sockets and across
// instances: test/signup-throttle.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../../testing/test-gateway.js';

let tg: TestGateway;
let counter = 0;

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_SIGNUPS_PER_HOUR: '2', QUARRY_TRUST_PROXY: '1' });
});
afterAll(async () => {
  await tg?.close();
});

function signUp(forwardedFor?: string) {
  counter += 1;
  return tg.call('POST', '/v1/accounts', {
    body: { email: `throttle-${counter}-${Date.now()}@example.com`, name: 'Throttled' },
    ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
  });
}

describe('sign-up throttle', () => {
  it('counts requests without a socket as one address, and forwarded addresses apart', async () => {
    expect((await signUp()).status).toBe(201);
    const second = await signUp();
    expect(second.status).toBe(201);
    expect(second.headers.get('ratelimit-policy')).toBe('"signup";q=2;w=3600');
    const refused = await signUp();
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(refused.json.error.message).toContain('2 an hour');
    expect(refused.json.error.retry_after).toBeGreaterThan(1700);
    expect(refused.headers.get('retry-after')).toBe(String(Math.ceil(refused.json.error.retry_after)));
    // Another client behind the trusted proxy has its own allowance.
    expect((await signUp('198.51.100.7')).status).toBe(201);
    expect((await signUp('203.0.113.1, 198.51.100.7')).status).toBe(201);
    expect((await signUp('198.51.100.7')).status).toBe(429);
  });

  it('refuses bad input with the envelope, and a refused sign-up creates nothing', async () => {
    const bad = await tg.call('POST', '/v1/accounts', {
      body: { email: 'nope' },
      headers: { 'x-forwarded-for': '192.0.2.55' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_REQUEST');
    const email = `once-${Date.now()}@example.com`;
    const before = (await tg.gateway.services.store.accounts.findByEmail(email)) ?? null;
    expect(before).toBeNull();
    const refused = await tg.call('POST', '/v1/accounts', { body: { email, name: 'Late' } });
    expect(refused.status).toBe(429);
    expect(await tg.gateway.services.store.accounts.findByEmail(email)).toBeNull();
  });
});
