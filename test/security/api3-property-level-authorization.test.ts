// OWASP API3:2023 Broken Object Property Level Authorization. Excessive data exposure: no answer
// carries a warehouse password, a key's secret after creation, a digest, an owner's SQL or
// connection, another account's email, and the store keeps the password sealed. Mass assignment:
// a caller cannot set properties only the gateway or the operator sets (plan, owner, account,
// rate limit, price of a listing, timestamps): each is a 400 naming the field, and nothing changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { TEST_PG_URL } from '../support/test-services.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;
const PASSWORD = 'hunter2-very-secret-password';

beforeAll(async () => {
  w = await createAttackWorld({ label: 'bopla' });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

describe('API3 excessive data exposure', () => {
  it("never answers with a connection's password, and stores it sealed", async () => {
    const url = new URL(TEST_PG_URL);
    const created = await w.call('POST', '/v1/owner/connections?test=false', {
      key: w.owner.key,
      json: {
        name: 'with-password',
        type: 'postgres',
        config: { host: url.hostname, port: 5432, database: 'test', user: 'nobody', password: PASSWORD },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.connection.secret_fields).toEqual(['password']);
    const id = created.body.connection.id;
    const reads = [
      created,
      await w.call('GET', `/v1/owner/connections/${id}`, { key: w.owner.key }),
      await w.call('GET', '/v1/owner/connections', { key: w.owner.key }),
      // A failing test of it answers the warehouse's words, never the password.
      await w.call('POST', `/v1/owner/connections/${id}/test`, { key: w.owner.key }),
    ];
    for (const res of reads) expect(res.text).not.toContain(PASSWORD);
    expect(await w.schema.dumpText()).not.toContain(PASSWORD);
  });

  it("shows a key's secret once, and never a digest", async () => {
    const made = await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'once' } });
    expect(made.status, made.text).toBe(201);
    const secret: string = made.body.key.secret;
    const list = await w.call('GET', '/v1/keys', { key: w.attacker.key });
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toMatch(/digest/i);
    for (const key of list.body.keys) expect(Object.keys(key)).not.toContain('secret');
    const clients = await w.call('GET', '/v1/oauth/clients', { key: w.owner.key });
    expect(clients.text).not.toMatch(/secret/i);
  });

  it("tells a stranger nothing of an owner's SQL, connection or email", async () => {
    const answers = [
      await w.call('GET', '/v1/marketplace/listings', { key: w.attacker.key }),
      await w.call('GET', `/v1/marketplace/listings/${w.names.listed}`, { key: w.attacker.key }),
      await w.call('GET', `/v1/analytics/${w.names.listed}`, { key: w.attacker.key }),
      await w.call('POST', '/v1/query', { key: w.attacker.key, json: { source: w.names.listed } }),
    ];
    for (const res of answers) {
      expect(res.status, res.text).toBe(200);
      expect(res.text).not.toContain('generate_series');
      expect(res.text).not.toContain(w.connectionId);
      expect(res.text).not.toContain(w.owner.email);
      expect(res.text).not.toContain(w.owner.key);
    }
  });
});

describe('API3 mass assignment', () => {
  it('cannot choose its plan, id or scopes beyond its own at sign-up', async () => {
    for (const extra of [
      { plan: 'enterprise' },
      { id: 'acc_mine' },
      { scopes: ['admin'] },
      { credits: 1e9 },
    ]) {
      const res = await w.call('POST', '/v1/accounts', {
        json: { email: `mass-${Object.keys(extra)[0]}@security.quarry.test`, name: 'Mass', ...extra },
      });
      expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    }
  });

  it("cannot set a key's account, rate limit or revocation, nor an OAuth client's id", async () => {
    for (const extra of [
      { account_id: w.owner.id },
      { rate_limit: { limit: 1_000_000 } },
      { revoked_at: null },
      { prefix: 'qry_live_mine' },
    ]) {
      const res = await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'k', ...extra } });
      expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    }
    const client = await w.call('POST', '/v1/oauth/clients', {
      key: w.attacker.key,
      json: { name: 'c', client_id: 'qci_chosen', account_id: w.owner.id },
    });
    expectErrorEnvelope(client, 400, 'INVALID_REQUEST');
  });

  it("cannot set an analytic's owner or a listing's price, publication or counters", async () => {
    const analytic = await w.call('PUT', '/v1/owner/analytics/sec-mass', {
      key: w.owner.key,
      json: { connection: 'wh', sql: 'SELECT 1 AS one', account_id: w.attacker.id },
    });
    expectErrorEnvelope(analytic, 400, 'INVALID_REQUEST');
    for (const extra of [
      { price: 0 },
      { published_at: '2000-01-01T00:00:00Z' },
      { calls: 1e9 },
      { owner: 'x' },
    ]) {
      const res = await w.call('PUT', `/v1/owner/analytics/${w.names.listed}/listing`, {
        key: w.owner.key,
        json: { title: 'Numbers', ...extra },
      });
      expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    }
    const account = await w.call('GET', '/v1/account', { key: w.attacker.key });
    expect(account.body.account?.plan ?? account.body.plan).toBe('free');
  });
});
