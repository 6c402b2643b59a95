// OWASP API5:2023 Broken Function Level Authorization. The operator's functions (plans, rate-limit
// overrides, signing-key rotation, closing a billing period, metrics) answer only the operator
// token, never an API key of any scope; each scope opens only its own functions; a key or OAuth
// client never gets a scope its creator lacks; a marketplace preview token manages nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;

beforeAll(async () => {
  w = await createAttackWorld({ label: 'bfla' });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const keyWith = async (scopes: string[]) => {
  const res = await w.call('POST', '/v1/keys', {
    key: w.attacker.key,
    json: { name: scopes.join('+'), scopes },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.key.secret as string;
};

describe('API5 broken function level authorization', () => {
  it("refuses every operator function to a caller's key, whatever its scopes", async () => {
    const period = new Date().toISOString().slice(0, 7);
    const operatorCalls: [string, string, unknown?][] = [
      ['GET', '/v1/admin/accounts'],
      ['PUT', `/v1/admin/accounts/${w.attacker.id}/plan`, { plan: 'enterprise' }],
      ['PUT', `/v1/admin/keys/${w.attacker.keyId}/rate-limit`, { limit: 1_000_000, window_seconds: 1 }],
      ['DELETE', `/v1/admin/keys/${w.attacker.keyId}/rate-limit`],
      ['POST', '/v1/admin/oauth/rotate-key'],
      ['POST', `/v1/admin/periods/${period}/close`],
    ];
    for (const [method, path, json] of operatorCalls) {
      for (const key of [w.attacker.key, undefined]) {
        const res = await w.call(method, path, { ...(key ? { key } : {}), ...(json ? { json } : {}) });
        expectErrorEnvelope(res, 401, 'UNAUTHENTICATED');
      }
    }
    const metrics = await w.call('GET', '/metrics', { key: w.attacker.key });
    expectErrorEnvelope(metrics, 401, 'UNAUTHENTICATED');
    expect(metrics.text).not.toContain('quarry_');
    const operator = await w.call('GET', '/metrics', {
      headers: { authorization: `Bearer ${w.adminToken}` },
    });
    expect(operator.status).toBe(200);
    expect(operator.text).toContain('quarry_');
    // Nothing changed: the attacker is still on Free.
    const account = await w.call('GET', '/v1/account', { key: w.attacker.key });
    expect(JSON.stringify(account.body)).toContain('"free"');
  });

  it('opens each function to its scope only', async () => {
    const queryOnly = await keyWith(['query']);
    for (const [method, path, json] of [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys', { name: 'more' }],
      ['POST', '/v1/oauth/clients', { name: 'more' }],
      ['GET', '/v1/owner/connections'],
      ['POST', '/v1/owner/analytics', { name: 'sec-x', connection: 'wh', sql: 'SELECT 1 AS one' }],
      ['GET', '/v1/owner/statements'],
      ['GET', '/v1/account/usage'],
    ] as [string, string, unknown?][]) {
      const res = await w.call(method, path, { key: queryOnly, ...(json ? { json } : {}) });
      expectErrorEnvelope(res, 403, 'FORBIDDEN');
    }
    expect(
      (await w.call('POST', '/v1/query', { key: queryOnly, json: { source: w.names.listed } })).status,
    ).toBe(200);
    const ownerOnly = await keyWith(['owner']);
    expectErrorEnvelope(
      await w.call('POST', '/v1/query', { key: ownerOnly, json: { source: w.names.listed } }),
      403,
      'FORBIDDEN',
    );
  });

  it('never lets a key or an OAuth client grant a scope its creator lacks', async () => {
    const keysOnly = await keyWith(['keys']);
    for (const scopes of [['owner'], ['query'], ['keys', 'account']]) {
      const res = await w.call('POST', '/v1/keys', { key: keysOnly, json: { name: 'wider', scopes } });
      expectErrorEnvelope(res, 403, 'FORBIDDEN');
      const client = await w.call('POST', '/v1/oauth/clients', {
        key: keysOnly,
        json: { name: 'wider', scopes },
      });
      expectErrorEnvelope(client, 403, 'FORBIDDEN');
    }
    const defaulted = await w.call('POST', '/v1/keys', { key: keysOnly, json: { name: 'same' } });
    expect(defaulted.status, defaulted.text).toBe(201);
    expect(defaulted.body.key.scopes).toEqual(['keys']);
  });

  it('lets a marketplace preview token call its analytic and manage nothing', async () => {
    const minted = await w.call('POST', '/v1/marketplace/try-token', {
      key: w.attacker.key,
      json: { source: w.names.listed },
    });
    expect(minted.status, minted.text).toBe(201);
    const bearer = { authorization: `Bearer ${minted.body.token}` };
    for (const [method, path] of [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys'],
      ['GET', '/v1/account/usage'],
      ['GET', '/v1/owner/connections'],
      ['POST', '/v1/marketplace/try-token'],
    ]) {
      const body = method === 'GET' ? {} : { json: { name: 'x', source: w.names.listed } };
      const res = await w.call(method as string, path as string, { headers: bearer, ...body });
      expect([401, 403], `${method} ${path}: ${res.text}`).toContain(res.status);
    }
  });
});
