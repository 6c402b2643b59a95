// API keys over HTTP (create with scopes and expiry, list without secrets, revoke takes effect at
// once), then a scan of every log line and response body of the run for plaintext secrets.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
/** Plaintext secrets handed out during the run, with the index of the one body allowed to hold each. */
const secrets: { value: string; shownIn: number }[] = [];
const password = `pg-pass-${Math.random().toString(36).slice(2)}`;

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_LOG_LEVEL: 'debug' });
  alice = await tg.signUp('Alice');
  secrets.push({ value: alice.key, shownIn: tg.bodies.length - 1 });
});
afterAll(async () => {
  await tg?.close();
});

async function createKey(body: Record<string, unknown>) {
  const res = await tg.call('POST', '/v1/keys', { key: alice.key, body });
  if (res.status === 201) secrets.push({ value: res.json.key.secret, shownIn: tg.bodies.length - 1 });
  return res;
}

describe('keys', () => {
  it('creates a key with scopes and an expiry, shown once', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const res = await createKey({ name: 'reporting', scopes: ['query'], expires_at: expires });
    expect(res.status, res.text).toBe(201);
    expect(res.json.key).toMatchObject({
      name: 'reporting',
      scopes: ['query'],
      expires_at: expires,
      revoked_at: null,
    });
    expect(res.json.key.secret).toMatch(/^qry_live_/);
    expect(res.json.key.secret.startsWith(res.json.key.prefix)).toBe(true);
    const key = res.json.key.secret;
    expect((await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key })).status).toBe(200);
    // Its scopes hold: no key management with a query-only key.
    const forbidden = await tg.call('GET', '/v1/keys', { key });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.code).toBe('FORBIDDEN');
  });

  it("defaults to the creator's scopes (all four here) and refuses a past expiry or an unknown scope", async () => {
    const res = await createKey({ name: 'all' });
    expect(res.json.key.scopes.sort()).toEqual(['account', 'keys', 'owner', 'query']);
    const past = await createKey({ name: 'old', expires_at: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.json.error.code).toBe('INVALID_REQUEST');
    const scope = await createKey({ name: 'bad', scopes: ['admin'] });
    expect(scope.status).toBe(400);
  });

  it('lists keys without any secret', async () => {
    const res = await tg.call('GET', '/v1/keys', { key: alice.key });
    expect(res.status).toBe(200);
    expect(res.json.keys.length).toBe(3);
    for (const key of res.json.keys) {
      expect(key).not.toHaveProperty('secret');
      expect(Object.keys(key).sort()).toEqual(
        ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes'].sort(),
      );
    }
    for (const { value } of secrets) expect(res.text).not.toContain(value);
  });

  it('revokes a key: the very next call on the same instance is 401', async () => {
    const created = await createKey({ name: 'short-lived' });
    const key = created.json.key.secret;
    // Warm the authenticator's cache so revocation must actively drop it.
    expect((await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key })).status).toBe(200);
    expect((await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key })).status).toBe(200);
    const revoked = await tg.call('DELETE', `/v1/keys/${created.json.key.id}`, { key: alice.key });
    expect(revoked.status).toBe(200);
    expect(revoked.json.key.revoked_at).not.toBeNull();
    const after = await tg.call('GET', '/v1/analytics/sales-by-region?year=2024', { key });
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('UNAUTHENTICATED');
    const list = await tg.call('GET', '/v1/keys', { key: alice.key });
    expect(list.json.keys.map((k: { id: string }) => k.id)).not.toContain(created.json.key.id);
  });

  it("cannot revoke another account's key", async () => {
    const bob = await tg.signUp('Bob');
    secrets.push({ value: bob.key, shownIn: tg.bodies.length - 1 });
    const res = await tg.call('DELETE', `/v1/keys/${bob.keyId}`, { key: alice.key });
    expect(res.status).toBe(404);
    expect((await tg.call('GET', '/v1/keys', { key: bob.key })).status).toBe(200);
  });
});

describe('scopes never grow', () => {
  it("a key cannot create a key or an OAuth client with a scope it lacks; new keys default to the creator's", async () => {
    const dana = await tg.signUp('Dana');
    const keysOnly = await tg.call('POST', '/v1/keys', {
      key: dana.key,
      body: { name: 'key-manager', scopes: ['keys'] },
    });
    expect(keysOnly.status, keysOnly.text).toBe(201);
    const manager = keysOnly.json.key.secret;
    secrets.push({ value: manager, shownIn: tg.bodies.length - 1 });

    const escalate = await tg.call('POST', '/v1/keys', {
      key: manager,
      body: { name: 'everything', scopes: ['query', 'keys', 'owner', 'account'] },
    });
    expect(escalate.status, escalate.text).toBe(403);
    expect(escalate.json.error.code).toBe('FORBIDDEN');
    expect(escalate.json.error.message).toContain('query, owner, account');
    const oneMore = await tg.call('POST', '/v1/keys', {
      key: manager,
      body: { name: 'q', scopes: ['query'] },
    });
    expect(oneMore.status).toBe(403);
    expect(oneMore.json.error.message).toContain('query');
    const client = await tg.call('POST', '/v1/oauth/clients', {
      key: manager,
      body: { name: 'everything', scopes: ['query', 'keys'] },
    });
    expect(client.status, client.text).toBe(403);
    expect(client.json.error.code).toBe('FORBIDDEN');

    // No scopes asked: the creator's, not all four.
    const defaulted = await tg.call('POST', '/v1/keys', { key: manager, body: { name: 'default' } });
    expect(defaulted.status, defaulted.text).toBe(201);
    expect(defaulted.json.key.scopes).toEqual(['keys']);
    secrets.push({ value: defaulted.json.key.secret, shownIn: tg.bodies.length - 1 });
    expect((await tg.call('GET', '/v1/account', { key: defaulted.json.key.secret })).status).toBe(403);
    // Nothing was created by the refusals.
    const list = await tg.call('GET', '/v1/keys', { key: dana.key });
    expect(list.json.keys.map((k: { name: string }) => k.name).sort()).toEqual([
      'default',
      'default',
      'key-manager',
    ]);
  });
});

describe('secrets', () => {
  it('never show up in logs or responses, apart from the response that creates them', async () => {
    // A password-bearing connection that cannot connect: its failure is logged by the connector.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const port = typeof address === 'object' && address !== null ? address.port : 1;
    const pgConfig = { host: '127.0.0.1', port, database: 'test', user: 'u', password };
    const urlConfig = { connectionString: `postgres://u:${password}@127.0.0.1:${port}/test` };
    // Saving tests the connection first: refused, in the driver's words, without the password.
    for (const config of [pgConfig, urlConfig]) {
      const refused = await tg.call('POST', '/v1/owner/connections', {
        key: alice.key,
        body: { name: 'pg-tested', type: 'postgres', config },
      });
      expect(refused.status, refused.text).toBe(400);
    }
    const conn = await tg.call('POST', '/v1/owner/connections?test=false', {
      key: alice.key,
      body: { name: 'pg', type: 'postgres', config: pgConfig },
    });
    expect(conn.status, conn.text).toBe(201);
    const url = await tg.call('POST', '/v1/owner/connections?test=false', {
      key: alice.key,
      body: { name: 'pg-url', type: 'postgres', config: urlConfig },
    });
    expect(url.status, url.text).toBe(201);
    for (const connection of ['pg', 'pg-url']) {
      // A deploy cannot check its SQL there (503, scanned too), so it is deployed unchecked.
      const refused = await tg.call('POST', '/v1/owner/analytics', {
        key: alice.key,
        body: { name: `secrets-${connection}`, connection, sql: 'SELECT 1 AS one' },
      });
      expect(refused.status, refused.text).toBe(503);
      await tg.gateway.services.analytics.deploy(
        alice.accountId,
        { name: `secrets-${connection}`, connection, sql: 'SELECT 1 AS one' },
        { checkSql: false },
      );
      expect((await tg.call('GET', `/v1/analytics/secrets-${connection}`, { key: alice.key })).status).toBe(
        503,
      );
    }
    await tg.call('POST', `/v1/owner/connections/${conn.json.connection.id}/test`, { key: alice.key });
    await tg.call('GET', '/v1/owner/connections', { key: alice.key });
    // Bad credentials that carry most of a real secret.
    await tg.call('GET', '/v1/keys', { key: `${alice.key}x` });
    await tg.call('GET', '/v1/keys', { headers: { authorization: `Basic ${alice.key}` } });

    const logs = tg.logs.text();
    // The connector's failures were logged in full (so the scan below covers them).
    expect(logs).toContain('connector error');
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    for (const { value, shownIn } of secrets) {
      expect(logs).not.toContain(value);
      tg.bodies.forEach((body, index) => {
        if (index !== shownIn) expect(body, `response #${index}`).not.toContain(value);
      });
      expect(tg.bodies[shownIn]).toContain(value);
    }
    expect(logs).not.toContain(password);
    for (const body of tg.bodies) expect(body).not.toContain(password);
  });
});

describe('last_used_at', () => {
  it('shows when a key was last used, written in batches, and stays null for an unused key', async () => {
    const gw = await createTestGateway({}, { keyUsageFlushMs: 100 });
    try {
      const dave = await gw.signUp('Dave');
      const idle = await gw.call('POST', '/v1/keys', { key: dave.key, body: { name: 'idle' } });
      expect(idle.status, idle.text).toBe(201);
      const before = Date.now();
      const query = { source: 'top-products', params: { category: 'Garden', limit: 2 } };
      for (let i = 0; i < 3; i++) {
        expect((await gw.call('POST', '/v1/query', { key: dave.key, body: query })).status).toBe(200);
      }
      await new Promise((resolve) => setTimeout(resolve, 400));
      const listed = await gw.call('GET', '/v1/keys', { key: dave.key });
      const byId = new Map(listed.json.keys.map((k: { id: string }) => [k.id, k]));
      const used = byId.get(dave.keyId) as { last_used_at: string | null };
      expect(used.last_used_at).not.toBeNull();
      expect(Date.parse(used.last_used_at as string)).toBeGreaterThanOrEqual(before - 1_000);
      expect((byId.get(idle.json.key.id) as { last_used_at: string | null }).last_used_at).toBeNull();
    } finally {
      await gw.close();
    }
  });
});
