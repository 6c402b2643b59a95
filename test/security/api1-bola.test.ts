// OWASP API1:2023 Broken Object Level Authorization. A stranger (with every scope on its own
// account) names the owner's objects on every route that takes an id or a name: keys, OAuth
// clients, connections, analytics (and their versions, cache and listing), the query and GET
// analytic routes, marketplace listings and try-tokens. Each answer is the same 404 a missing
// object gets (so ids and names cannot be probed either), and afterwards every object of the
// owner is intact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { connectTestPostgres } from '../support/metering-fixture.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;
let ownerClientId: string;

beforeAll(async () => {
  w = await createAttackWorld({ label: 'bola' });
  const client = await w.call('POST', '/v1/oauth/clients', { key: w.owner.key, json: { name: 'etl' } });
  expect(client.status, client.text).toBe(201);
  ownerClientId = client.body.client.id;
  // The attacker's own warehouse, so its redeploy attempts are valid definitions.
  await connectTestPostgres(w.http, w.gateway, w.attacker.key, 'mine');
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

describe('API1 broken object level authorization', () => {
  it("cannot revoke or see the owner's key or OAuth client by id", async () => {
    expectErrorEnvelope(
      await w.call('DELETE', `/v1/keys/${w.owner.keyId}`, { key: w.attacker.key }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(
      await w.call('DELETE', `/v1/oauth/clients/${ownerClientId}`, { key: w.attacker.key }),
      404,
      'NOT_FOUND',
    );
    const keys = await w.call('GET', '/v1/keys', { key: w.attacker.key });
    expect(keys.text).not.toContain(w.owner.keyId);
    const clients = await w.call('GET', '/v1/oauth/clients', { key: w.attacker.key });
    expect(clients.text).not.toContain(ownerClientId);
  });

  it("cannot read, test, change or delete the owner's connection by id, nor list it", async () => {
    const path = `/v1/owner/connections/${w.connectionId}`;
    expectErrorEnvelope(await w.call('GET', path, { key: w.attacker.key }), 404, 'NOT_FOUND');
    expectErrorEnvelope(
      await w.call('PATCH', path, { key: w.attacker.key, json: { config: { path: '/etc/passwd' } } }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(await w.call('POST', `${path}/test`, { key: w.attacker.key }), 404, 'NOT_FOUND');
    expectErrorEnvelope(await w.call('DELETE', path, { key: w.attacker.key }), 404, 'NOT_FOUND');
    const mine = await w.call('GET', '/v1/owner/connections', { key: w.attacker.key });
    expect(mine.body.connections.map((c: { id: string }) => c.id)).not.toContain(w.connectionId);
  });

  it("cannot read, version, redeploy, purge, unlist or delete the owner's analytic by name", async () => {
    for (const name of [w.names.listed, w.names.private]) {
      const base = `/v1/owner/analytics/${name}`;
      for (const [method, path] of [
        ['GET', base],
        ['GET', `${base}/versions`],
        ['DELETE', `${base}/cache`],
        ['GET', `${base}/listing`],
        ['DELETE', `${base}/listing`],
        ['DELETE', base],
      ] as const) {
        expectErrorEnvelope(await w.call(method, path, { key: w.attacker.key }), 404, 'NOT_FOUND');
      }
      const patched = await w.call('PATCH', base, {
        key: w.attacker.key,
        json: { connection: 'mine', sql: 'SELECT 1 AS one', price: 100 },
      });
      expectErrorEnvelope(patched, 404, 'NOT_FOUND');
      // Taking the name over with new SQL: the name is the owner's.
      const taken = await w.call('PUT', base, {
        key: w.attacker.key,
        json: { connection: 'mine', sql: 'SELECT 1 AS one', price: 100 },
      });
      expect([404, 409], taken.text).toContain(taken.status);
      const relisted = await w.call('PUT', `${base}/listing`, {
        key: w.attacker.key,
        json: { title: 'Mine now' },
      });
      expectErrorEnvelope(relisted, 404, 'NOT_FOUND');
    }
  });

  it('cannot call, describe, preview or find a private analytic; a shared one only its friend', async () => {
    for (const name of [w.names.private, w.names.shared]) {
      const query = await w.call('POST', '/v1/query', { key: w.attacker.key, json: { source: name } });
      expectErrorEnvelope(query, 404, 'SOURCE_NOT_FOUND');
      const get = await w.call('GET', `/v1/analytics/${name}`, { key: w.attacker.key });
      expectErrorEnvelope(get, 404, 'SOURCE_NOT_FOUND');
      expectErrorEnvelope(
        await w.call('GET', `/v1/marketplace/listings/${name}`, { key: w.attacker.key }),
        404,
        'NOT_FOUND',
      );
      const token = await w.call('POST', '/v1/marketplace/try-token', {
        key: w.attacker.key,
        json: { source: name },
      });
      expect(token.status, token.text).toBe(404);
    }
    // The same 404 as a name that never existed: nothing to probe.
    const missing = await w.call('POST', '/v1/query', {
      key: w.attacker.key,
      json: { source: 'sec-no-such' },
    });
    expectErrorEnvelope(missing, 404, 'SOURCE_NOT_FOUND');
    const friend = await w.call('POST', '/v1/query', { key: w.friend.key, json: { source: w.names.shared } });
    expect(friend.status, friend.text).toBe(200);
    expect(friend.body.results).toEqual([{ note: 'for friends' }]);
  });

  it('leaves every object of the owner intact after the attempts', async () => {
    const account = await w.call('GET', '/v1/account', { key: w.owner.key });
    expect(account.status, account.text).toBe(200);
    const keys = await w.call('GET', '/v1/keys', { key: w.owner.key });
    expect(keys.text).toContain(w.owner.keyId);
    const clients = await w.call('GET', '/v1/oauth/clients', { key: w.owner.key });
    expect(clients.text).toContain(ownerClientId);
    const connection = await w.call('GET', `/v1/owner/connections/${w.connectionId}`, { key: w.owner.key });
    expect(connection.status, connection.text).toBe(200);
    for (const name of [w.names.listed, w.names.private]) {
      const analytic = await w.call('GET', `/v1/owner/analytics/${name}`, { key: w.owner.key });
      expect(analytic.status, analytic.text).toBe(200);
      expect(analytic.text).not.toContain('"price":100');
    }
    const listing = await w.call('GET', `/v1/marketplace/listings/${w.names.listed}`, {
      key: w.attacker.key,
    });
    expect(listing.status, listing.text).toBe(200);
    expect(listing.body.title).toBe('Numbers');
  });
});
