// OWASP API2:2023 Broken Authentication. Every way a stranger might pass as someone: no
// credential, malformed ones, a key of the right shape that was never issued, a revoked or
// expired key, a forged or tampered OAuth token (alg none, another signature), a preview token
// used where it was not minted for or after its key was revoked, and guessing at volume (refused
// per address before any lookup). Each is a 401/403/429 in the envelope, never an answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  w = await createAttackWorld({ label: 'authn' });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const query = (authorization: string | undefined, source = '') =>
  w.call('POST', '/v1/query', {
    json: { source: source || w.names.listed },
    ...(authorization === undefined ? {} : { headers: { authorization } }),
  });

describe('API2 broken authentication', () => {
  it('refuses a missing or malformed credential with 401 and a WWW-Authenticate challenge', async () => {
    for (const authorization of [
      undefined,
      'Bearer',
      'Bearer ',
      'Basic cXJ5X2xpdmVfeHg6',
      `Bearer ${w.attacker.key} extra`,
      `Bearer ${'x'.repeat(10_000)}`,
      'Bearer qry_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      `Bearer ${w.attacker.key.slice(0, -1)}${w.attacker.key.endsWith('A') ? 'B' : 'A'}`,
    ]) {
      const res = await query(authorization);
      expectErrorEnvelope(res, 401, 'UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    // The management routes alike.
    expectErrorEnvelope(await w.call('GET', '/v1/keys'), 401, 'UNAUTHENTICATED');
  });

  it('refuses a revoked key, and a key past its expiry', async () => {
    const made = await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'short' } });
    const expiring = await w.call('POST', '/v1/keys', {
      key: w.attacker.key,
      json: { name: 'expiring', expires_at: new Date(Date.now() + 1500).toISOString() },
    });
    expect(made.status, made.text).toBe(201);
    expect(expiring.status, expiring.text).toBe(201);
    expect((await query(`Bearer ${made.body.key.secret}`)).status).toBe(200);
    expect((await query(`Bearer ${expiring.body.key.secret}`)).status).toBe(200);
    const revoked = await w.call('DELETE', `/v1/keys/${made.body.key.id}`, { key: w.attacker.key });
    expect(revoked.status, revoked.text).toBeLessThan(300);
    // Revocation is immediate on the instance that revoked; expiry within the key cache's second.
    expectErrorEnvelope(await query(`Bearer ${made.body.key.secret}`), 401, 'UNAUTHENTICATED');
    await sleep(2600);
    expectErrorEnvelope(await query(`Bearer ${expiring.body.key.secret}`), 401, 'UNAUTHENTICATED');
  });

  it('refuses forged OAuth access tokens: alg none, a tampered payload, a foreign signature', async () => {
    const client = await w.call('POST', '/v1/oauth/clients', {
      key: w.attacker.key,
      json: { name: 'mine', scopes: ['query'] },
    });
    expect(client.status, client.text).toBe(201);
    const token = await w.call('POST', '/oauth/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.body.client.client_id,
        client_secret: client.body.client_secret,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status, token.text).toBe(200);
    const genuine: string = token.body.access_token;
    expect((await query(`Bearer ${genuine}`)).status).toBe(200);
    const [header, payload, signature] = genuine.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const owned = { ...claims, sub: w.owner.id, scope: 'query keys owner account' };
    for (const forged of [
      `${b64({ alg: 'none', typ: 'JWT' })}.${b64(owned)}.`,
      `${header}.${b64(owned)}.${signature}`,
      `${b64({ ...JSON.parse(Buffer.from(header, 'base64url').toString()), alg: 'HS256' })}.${payload}.${signature}`,
      `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
    ]) {
      expectErrorEnvelope(await query(`Bearer ${forged}`), 401, 'UNAUTHENTICATED');
      expectErrorEnvelope(
        await w.call('GET', '/v1/account', { headers: { authorization: `Bearer ${forged}` } }),
        401,
        'UNAUTHENTICATED',
      );
    }
  });

  it('keeps a preview token to its one analytic, and ends it with the key that minted it', async () => {
    const key = await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'previewer' } });
    const minted = await w.call('POST', '/v1/marketplace/try-token', {
      key: key.body.key.secret,
      json: { source: w.names.listed },
    });
    expect(minted.status, minted.text).toBe(201);
    const bearer = `Bearer ${minted.body.token}`;
    expect((await query(bearer)).status).toBe(200);
    const elsewhere = await query(bearer, w.names.private);
    expect([403, 404]).toContain(elsewhere.status);
    expect(
      (await w.call('GET', '/v1/keys', { headers: { authorization: bearer } })).status,
    ).toBeGreaterThanOrEqual(401);
    await w.call('DELETE', `/v1/keys/${key.body.key.id}`, { key: w.attacker.key });
    expectErrorEnvelope(await query(bearer), 401, 'UNAUTHENTICATED');
  });

  it('refuses guessing at volume per address, before any lookup, and never slows a valid key', async () => {
    const guesses = await Promise.all(
      Array.from({ length: 70 }, (_, i) => query(`Bearer qry_live_${String(i).padStart(48, 'Z')}`)),
    );
    const statuses = guesses.map((g) => g.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(61);
    const throttled = guesses.find((g) => g.status === 429);
    expect(throttled, statuses.join(',')).toBeDefined();
    expectErrorEnvelope(throttled!, 429, 'RATE_LIMIT_EXCEEDED');
    expect(throttled!.body.error.retry_after).toBeGreaterThan(0);
    // A key this gateway verified before, from the same address, is still served once its cached
    // verdict is gone: whoever shares the guesser's address is not locked out.
    await sleep(1_200);
    expect((await query(`Bearer ${w.attacker.key}`)).status).toBe(200);
  });
});
