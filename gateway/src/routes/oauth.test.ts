// OAuth 2.0 client credentials over the app (no server): managing clients, the token endpoint
// (both client authentication methods, every RFC 6749 error, the failed-authentication lockout,
// no-store), access tokens used like API keys (scopes, metering), every forged or stale token
// refused with the Quarry 401, revocation taking effect at once, key rotation through the
// operator API without downtime, the discovery documents and the OpenAPI description.
import { createHmac, createPublicKey, randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { createAccessTokens } from '../oauth/access-tokens.js';
import {
  type CallResult,
  createTestGateway,
  type SignedUp,
  type TestGateway,
} from '../testing/test-gateway.js';

const ADMIN_TOKEN = `admin-${randomUUID()}`;
const ISSUER = 'https://api.quarry.test';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const SALES = '/v1/analytics/sales-by-region?year=2024';
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

let tg: TestGateway;
let alice: SignedUp;
/** Every secret and token handed out, for the leak scan at the end. */
const handedOut: string[] = [];

interface Client {
  readonly id: string;
  readonly clientId: string;
  readonly secret: string;
}

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_ADMIN_TOKEN: ADMIN_TOKEN, QUARRY_PUBLIC_URL: `${ISSUER}/` });
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

async function createClient(body: Record<string, unknown>, key = alice.key): Promise<Client> {
  const res = await tg.call('POST', '/v1/oauth/clients', { key, body });
  expect(res.status, res.text).toBe(201);
  handedOut.push(res.json.client_secret);
  return { id: res.json.client.id, clientId: res.json.client.client_id, secret: res.json.client_secret };
}

function tokenRequest(form: string, headers: Record<string, string> = {}): Promise<CallResult> {
  return tg.call('POST', '/oauth/token', { body: form, headers: { ...FORM, ...headers } });
}

async function tokenFor(client: Client, scope?: string): Promise<string> {
  const res = await tokenRequest(
    `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}${
      scope === undefined ? '' : `&scope=${encodeURIComponent(scope)}`
    }`,
  );
  expect(res.status, res.text).toBe(200);
  handedOut.push(res.json.access_token);
  return res.json.access_token;
}

function expectOAuthError(res: CallResult, status: number, error: string): void {
  expect({ status: res.status, body: res.json }, res.text).toEqual({
    status,
    body: { error, error_description: expect.any(String) },
  });
  expect(res.json.error_description.length).toBeGreaterThan(0);
  expect(res.headers.get('cache-control')).toBe('no-store');
  if (status === 401) expect(res.headers.get('www-authenticate')).toBe('Basic realm="quarry"');
}

function expectUnauthenticated(res: CallResult): void {
  expect({ status: res.status, code: res.json?.error?.code }, res.text).toEqual({
    status: 401,
    code: 'UNAUTHENTICATED',
  });
  expect(res.json.error.request_id).toBe(res.headers.get('x-request-id'));
}

describe('OAuth clients', () => {
  it('are created with the caller scopes by default and the secret shown once', async () => {
    const res = await tg.call('POST', '/v1/oauth/clients', { key: alice.key, body: { name: 'etl' } });
    expect(res.status, res.text).toBe(201);
    handedOut.push(res.json.client_secret);
    expect(res.json).toEqual({
      client: {
        id: expect.stringMatching(/^ocl_[0-9A-Za-z]{22}$/),
        client_id: expect.stringMatching(/^qci_[0-9A-Za-z]{22}$/),
        name: 'etl',
        scopes: ['query', 'keys', 'owner', 'account'],
        created_at: expect.any(String),
        revoked_at: null,
      },
      client_secret: expect.stringMatching(/^qcs_[0-9A-Za-z]{43}$/),
    });
    const list = await tg.call('GET', '/v1/oauth/clients', { key: alice.key });
    expect(list.status).toBe(200);
    expect(list.json.clients).toContainEqual(res.json.client);
    expect(list.text).not.toContain(res.json.client_secret);
  });

  it("get at most the caller's scopes", async () => {
    const key = await tg.call('POST', '/v1/keys', {
      key: alice.key,
      body: { name: 'k', scopes: ['keys', 'query'] },
    });
    handedOut.push(key.json.key.secret);
    const narrow = key.json.key.secret;
    const defaulted = await tg.call('POST', '/v1/oauth/clients', { key: narrow, body: { name: 'd' } });
    handedOut.push(defaulted.json.client_secret);
    expect(defaulted.json.client.scopes).toEqual(['query', 'keys']);
    const wider = await tg.call('POST', '/v1/oauth/clients', {
      key: narrow,
      body: { name: 'w', scopes: ['owner'] },
    });
    expect(wider.status).toBe(403);
    expect(wider.json.error.code).toBe('FORBIDDEN');
    for (const body of [{ name: 'x', scopes: ['admin'] }, { name: '' }, { name: 'x', secret: 'mine' }]) {
      const bad = await tg.call('POST', '/v1/oauth/clients', { key: alice.key, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('need the keys scope', async () => {
    const key = await tg.call('POST', '/v1/keys', { key: alice.key, body: { name: 'q', scopes: ['query'] } });
    handedOut.push(key.json.key.secret);
    const res = await tg.call('GET', '/v1/oauth/clients', { key: key.json.key.secret });
    expect(res.status).toBe(403);
    expect((await tg.call('GET', '/v1/oauth/clients')).status).toBe(401);
  });
});

describe('the token endpoint', () => {
  let client: Client;
  beforeAll(async () => {
    client = await createClient({ name: 'reporting', scopes: ['query', 'keys'] });
  });

  it('issues a token with client_secret_post', async () => {
    const res = await tokenRequest(
      `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}`,
    );
    expect(res.status, res.text).toBe(200);
    handedOut.push(res.json.access_token);
    expect(res.json).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'query keys',
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const claims = decodeJwt(res.json.access_token);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: 'quarry-api',
      sub: client.clientId,
      account: alice.accountId,
      client: client.id,
      scope: 'query keys',
    });
    expect(decodeProtectedHeader(res.json.access_token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
  });

  it('issues a token with client_secret_basic, narrowed to a requested scope', async () => {
    const res = await tokenRequest('grant_type=client_credentials&scope=query', {
      authorization: basic(client.clientId, client.secret),
    });
    expect(res.status, res.text).toBe(200);
    handedOut.push(res.json.access_token);
    expect(res.json.scope).toBe('query');
  });

  it('refuses a wrong secret, an unknown client, or none, with 401 invalid_client', async () => {
    expectOAuthError(
      await tokenRequest(
        `grant_type=client_credentials&client_id=${client.clientId}&client_secret=qcs_wrong`,
      ),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest('grant_type=client_credentials', {
        authorization: basic(client.clientId, 'qcs_wrong'),
      }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest(`grant_type=client_credentials&client_id=qci_${'0'.repeat(22)}&client_secret=x`),
      401,
      'invalid_client',
    );
    expectOAuthError(await tokenRequest('grant_type=client_credentials'), 401, 'invalid_client');
  });

  it('refuses malformed requests with 400 invalid_request', async () => {
    const post = `client_id=${client.clientId}&client_secret=${client.secret}`;
    // Both authentication methods at once.
    expectOAuthError(
      await tokenRequest(`grant_type=client_credentials&${post}`, {
        authorization: basic(client.clientId, client.secret),
      }),
      400,
      'invalid_request',
    );
    // JSON instead of a form.
    const json = await tg.call('POST', '/oauth/token', {
      body: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret },
    });
    expectOAuthError(json, 400, 'invalid_request');
    expectOAuthError(
      await tokenRequest(`grant_type=client_credentials&scope=query&scope=keys&${post}`),
      400,
      'invalid_request',
    );
    expectOAuthError(await tokenRequest(post), 400, 'invalid_request');
  });

  it('refuses other grant types and scopes beyond the client', async () => {
    const post = `client_id=${client.clientId}&client_secret=${client.secret}`;
    expectOAuthError(await tokenRequest(`grant_type=password&${post}`), 400, 'unsupported_grant_type');
    expectOAuthError(
      await tokenRequest(`grant_type=client_credentials&scope=owner&${post}`),
      400,
      'invalid_scope',
    );
    expectOAuthError(
      await tokenRequest(`grant_type=client_credentials&scope=query+admin&${post}`),
      400,
      'invalid_scope',
    );
  });

  it('locks out the address that failed for a client_id, even for the right secret, and no other address', async () => {
    // In-process requests have no socket: QUARRY_TRUST_PROXY=1 lets X-Forwarded-For name them.
    const proxied = await createTestGateway({ QUARRY_TRUST_PROXY: '1' });
    try {
      const from = (address: string, form: string) =>
        proxied.call('POST', '/oauth/token', {
          body: form,
          headers: { ...FORM, 'x-forwarded-for': address },
        });
      const owner = await proxied.signUp('Owner');
      const created = await proxied.call('POST', '/v1/oauth/clients', {
        key: owner.key,
        body: { name: 'target', scopes: ['query'] },
      });
      expect(created.status, created.text).toBe(201);
      const clientId = created.json.client.client_id as string;
      const secret = created.json.client_secret as string;
      for (let i = 0; i < 10; i += 1) {
        const res = await from(
          '203.0.113.7',
          `grant_type=client_credentials&client_id=${clientId}&client_secret=qcs_guess${i}`,
        );
        expect(res.status).toBe(401);
      }
      const right = `grant_type=client_credentials&client_id=${clientId}&client_secret=${secret}`;
      const locked = await from('203.0.113.7', right);
      expect(locked.status, locked.text).toBe(429);
      expect(locked.json.error).toBe('invalid_client');
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The client itself, calling from its own address, is not locked out by a stranger.
      const owners = await from('198.51.100.9', right);
      expect(owners.status, owners.text).toBe(200);
    } finally {
      await proxied.close();
    }
  }, 90_000);

  it('locks a client_id out after repeated failures, even for the right secret', async () => {
    const target = await createClient({ name: 'target', scopes: ['query'] });
    const bystander = await createClient({ name: 'bystander', scopes: ['query'] });
    for (let i = 0; i < 10; i += 1) {
      const res = await tokenRequest(
        `grant_type=client_credentials&client_id=${target.clientId}&client_secret=qcs_guess${i}`,
      );
      expect(res.status).toBe(401);
    }
    const locked = await tokenRequest(
      `grant_type=client_credentials&client_id=${target.clientId}&client_secret=${target.secret}`,
    );
    expect(locked.status, locked.text).toBe(429);
    expect(locked.json.error).toBe('invalid_client');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await tokenFor(bystander);
  });
});

describe('access tokens', () => {
  let client: Client;
  let token: string;
  beforeAll(async () => {
    client = await createClient({ name: 'api', scopes: ['query', 'keys', 'account'] });
    token = await tokenFor(client);
  });

  it('query an analytic and are metered like a key', async () => {
    const usage = async () =>
      (await tg.call('GET', '/v1/account/usage', { key: alice.key })).json.totals.calls as number;
    const before = await usage();
    const res = await tg.call('GET', SALES, { key: token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.results.length).toBeGreaterThan(0);
    expect(res.headers.get('ratelimit-policy')).toBeTruthy();
    expect(await usage()).toBe(before + 1);
  });

  it('carry their scopes, not the client', async () => {
    const queryOnly = await tokenFor(client, 'query');
    expect((await tg.call('GET', SALES, { key: queryOnly })).status).toBe(200);
    expect((await tg.call('GET', '/v1/oauth/clients', { key: queryOnly })).status).toBe(403);
    expect((await tg.call('GET', '/v1/oauth/clients', { key: token })).status).toBe(200);
  });

  it('are refused when forged or stale', async () => {
    const { keyRing } = tg.gateway.services.oauth;
    const { kid, key } = await keyRing.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: ISSUER,
      aud: 'quarry-api',
      sub: client.clientId,
      account: alice.accountId,
      client: client.id,
      scope: 'query',
      iat: now,
      exp: now + 900,
      jti: randomUUID(),
    };
    const header = { alg: 'ES256', typ: 'at+jwt', kid };
    const realKey = (c: JWTPayload, h: Record<string, unknown> = {}) =>
      new SignJWT(c).setProtectedHeader({ ...header, ...h }).sign(key);
    // The genuine article, as a control.
    expect((await tg.call('GET', SALES, { key: await realKey(claims) })).status).toBe(200);

    const other = await generateKeyPair('ES256');
    const [published] = await keyRing.publishedKeys();
    const pem = createPublicKey({ key: { ...published }, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const hsHead = `${b64url({ ...header, alg: 'HS256' })}.${b64url(claims)}`;
    const expired = await createAccessTokens({
      ring: keyRing,
      issuer: ISSUER,
      ttlSeconds: 900,
      now: () => Date.now() - 3_600_000,
    }).issue({ clientId: client.clientId, client: client.id, accountId: alice.accountId, scopes: ['query'] });
    const forged: Record<string, string> = {
      'another key, same kid': await new SignJWT(claims).setProtectedHeader(header).sign(other.privateKey),
      'alg none': `${b64url({ ...header, alg: 'none' })}.${b64url(claims)}.`,
      'HS256 with the public key': `${hsHead}.${createHmac('sha256', pem).update(hsHead).digest('base64url')}`,
      expired: expired.token,
      'wrong aud': await realKey({ ...claims, aud: 'quarry:marketplace-try' }),
      'wrong iss': await realKey({ ...claims, iss: 'http://127.0.0.1:8787' }),
      'unknown kid': await realKey(claims, { kid: 'unknown-kid' }),
      'another account': await realKey({ ...claims, account: tg.ownerId }),
    };
    for (const [what, forgery] of Object.entries(forged)) {
      const res = await tg.call('GET', SALES, { key: forgery });
      expect(res.status, what).toBe(401);
      expectUnauthenticated(res);
    }
  });

  it('stop working as soon as their client is revoked', async () => {
    const doomed = await createClient({ name: 'doomed', scopes: ['query'] });
    const doomedToken = await tokenFor(doomed);
    expect((await tg.call('GET', SALES, { key: doomedToken })).status).toBe(200);
    const revoked = await tg.call('DELETE', `/v1/oauth/clients/${doomed.id}`, { key: alice.key });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    expectUnauthenticated(await tg.call('GET', SALES, { key: doomedToken }));
    expectOAuthError(
      await tokenRequest(
        `grant_type=client_credentials&client_id=${doomed.clientId}&client_secret=${doomed.secret}`,
      ),
      401,
      'invalid_client',
    );
    expect((await tg.call('DELETE', `/v1/oauth/clients/${doomed.id}`, { key: alice.key })).status).toBe(204);
    const list = await tg.call('GET', '/v1/oauth/clients', { key: alice.key });
    expect(list.json.clients.map((c: { id: string }) => c.id)).not.toContain(doomed.id);
  });

  it("cannot revoke another account's client", async () => {
    const bob = await tg.signUp('Bob');
    handedOut.push(bob.key);
    const res = await tg.call('DELETE', `/v1/oauth/clients/${client.id}`, { key: bob.key });
    expect(res.status).toBe(404);
    expect((await tg.call('GET', SALES, { key: token })).status).toBe(200);
  });
});

describe('signing key rotation', () => {
  it('keeps earlier tokens valid, signs new ones with the new key, and publishes both', async () => {
    const client = await createClient({ name: 'rotating', scopes: ['query'] });
    const before = await tokenFor(client);
    const refused = await tg.call('POST', '/v1/admin/oauth/rotate-key', { key: alice.key });
    expect(refused.status).toBe(401);
    const rotated = await tg.call('POST', '/v1/admin/oauth/rotate-key', { key: ADMIN_TOKEN });
    expect(rotated.status, rotated.text).toBe(200);
    const oldKid = decodeProtectedHeader(before).kid;
    expect(rotated.json.retiring.map((k: { kid: string }) => k.kid)).toEqual([oldKid]);
    const retiresAt = Date.parse(rotated.json.retiring[0].retires_at);
    // The longest token it signed (an embed token's 24 h, beyond the 900 s access tokens) +
    // leeway + the instances' reload interval.
    expect(retiresAt - Date.parse(rotated.json.retiring[0].superseded_at)).toBe(
      (86_400 + 30) * 1000 + 60_000,
    );
    const newKid = rotated.json.active.kid;
    expect(newKid).not.toBe(oldKid);

    expect((await tg.call('GET', SALES, { key: before })).status).toBe(200);
    const after = await tokenFor(client);
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    expect((await tg.call('GET', SALES, { key: after })).status).toBe(200);

    const jwks = await tg.call('GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    const kids = jwks.json.keys.map((k: { kid: string }) => k.kid);
    expect(kids).toContain(newKid);
    expect(kids).toContain(oldKid);
    for (const jwk of jwks.json.keys) {
      expect(Object.keys(jwk).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    }
  });
});

describe('discovery and documentation', () => {
  it('serves the authorization server metadata (RFC 8414)', async () => {
    const res = await tg.call('GET', '/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['query', 'keys', 'owner', 'account'],
      response_types_supported: [],
    });
  });

  it('takes the issuer from QUARRY_PUBLIC_URL, else http://HOST:PORT', () => {
    expect(loadConfig({ HOST: '10.0.0.5', PORT: '9000' }).publicUrl).toBe('http://10.0.0.5:9000');
    expect(loadConfig({ HOST: '::1', PORT: '9000' }).publicUrl).toBe('http://[::1]:9000');
    expect(loadConfig({ QUARRY_PUBLIC_URL: 'https://api.example.com//' }).publicUrl).toBe(
      'https://api.example.com',
    );
    for (const url of ['ftp://api.example.com', 'https://api.example.com/?a=1', 'not a url']) {
      expect(() => loadConfig({ QUARRY_PUBLIC_URL: url }), url).toThrow(/QUARRY_PUBLIC_URL/);
    }
    expect(() => loadConfig({ QUARRY_OAUTH_TOKEN_TTL: '10' })).toThrow(/QUARRY_OAUTH_TOKEN_TTL/);
    expect(loadConfig({}).oauthTokenTtlSeconds).toBe(900);
  });

  it('documents the token endpoint, the clients and the OAuth2 security scheme in OpenAPI', async () => {
    const doc = (await tg.call('GET', '/v1/openapi.json')).json;
    const token = doc.paths['/oauth/token'].post;
    expect(Object.keys(token.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
    expect(Object.keys(token.responses).sort()).toEqual(['200', '400', '401', '429']);
    expect(doc.components.securitySchemes.oauth2).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/oauth/token' } },
    });
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes).sort()).toEqual([
      'account',
      'keys',
      'owner',
      'query',
    ]);
    for (const path of [
      '/v1/oauth/clients',
      '/v1/oauth/clients/{id}',
      '/.well-known/jwks.json',
      '/.well-known/oauth-authorization-server',
      '/v1/admin/oauth/rotate-key',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/v1/oauth/clients'].post.security).toEqual([{ bearerAuth: [] }, { oauth2: ['keys'] }]);
  });
});

describe('secrets', () => {
  it('never show up in the logs', () => {
    const logs = tg.logs.text();
    expect(handedOut.length).toBeGreaterThan(10);
    for (const value of handedOut) expect(logs).not.toContain(value);
  });
});
