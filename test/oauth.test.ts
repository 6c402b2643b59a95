// OAuth 2.0 client credentials (issue 7, item 1) over real HTTP against two gateway processes
// sharing one control-plane schema on the real Postgres (and one QUARRY_PUBLIC_URL, the issuer,
// as instances behind one address do):
//   - a token from /oauth/token (client_secret_basic or client_secret_post) queries an analytic
//     on either instance, metered like a key;
//   - the token endpoint's RFC 6749 errors: invalid_client, invalid_request (both methods, wrong
//     content type), unsupported_grant_type, invalid_scope;
//   - refused with the Quarry 401 on both instances: another key under the same kid, `alg: none`,
//     HS256 keyed with the published public key, an expired token, the wrong `aud` or `iss`
//     (these three signed with the real key, which the test opens from the store with the
//     operator's QUARRY_SECRET_KEY), an unknown kid, and a revoked client's token;
//   - rotation through the operator API: a token signed before verifies after it on both
//     instances, new tokens carry the new kid, both JWKS list both keys;
//   - client secrets are stored only as digests and private keys only sealed.
import {
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  randomUUID,
  sign,
} from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  ledgerOf,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());

const suffix = uniqueSuffix();
const SOURCE = `oauth-${suffix}`;
const PRICE = 2;
const ISSUER = 'https://quarry.oauth.test';
const ADMIN_TOKEN = `admin-${randomUUID()}`;
const SECRET_KEY = randomBytes(32);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const http = createHttpClient();
let store: ControlPlaneSchema;
let g1: GatewayProcess;
let g2: GatewayProcess;
let owner: TestAccount;
/** Every client secret handed out, for the scans at the end. */
const secrets: string[] = [];

interface Client {
  readonly id: string;
  readonly clientId: string;
  readonly secret: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const headerOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()) as Record<string, string>;

async function createClient(name: string, scopes: readonly string[]): Promise<Client> {
  const res = await http.request(g1.url, 'POST', '/v1/oauth/clients', {
    key: owner.key,
    json: { name, scopes },
  });
  expect(res.status, res.text).toBe(201);
  secrets.push(res.body.client_secret);
  return { id: res.body.client.id, clientId: res.body.client.client_id, secret: res.body.client_secret };
}

function tokenRequest(
  g: GatewayProcess,
  form: string,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  return http.request(g.url, 'POST', '/oauth/token', { raw: form, headers: { ...FORM, ...headers } });
}

async function tokenFrom(g: GatewayProcess, client: Client): Promise<string> {
  const res = await tokenRequest(g, 'grant_type=client_credentials', {
    authorization: basic(client.clientId, client.secret),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.access_token;
}

const query = (g: GatewayProcess, token: string) =>
  http.request(g.url, 'POST', '/v1/query', { key: token, json: { source: SOURCE, params: {} } });

function expectOAuthError(res: HttpResponse, status: number, error: string): void {
  expect({ status: res.status, error: res.body?.error }, res.text).toEqual({ status, error });
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(res.headers.get('cache-control')).toBe('no-store');
}

/** The current signing key's private JWK, opened from the store with the operator's secret key. */
async function realSigningKey(kid: string) {
  const sealed = await withPg(async (c) => {
    const rows = await c.query<{ private_key: Buffer }>(
      `SELECT private_key FROM ${store.schema}.oauth_signing_keys WHERE kid = $1`,
      [kid],
    );
    return rows.rows[0]?.private_key;
  });
  if (sealed === undefined) throw new Error(`no signing key ${kid} in the store`);
  // The secret-box envelope: [version][id length][id][IV 12][tag 16][ciphertext], header as AAD.
  const headerLength = 2 + (sealed[1] as number);
  const iv = sealed.subarray(headerLength, headerLength + 12);
  const decipher = createDecipheriv('aes-256-gcm', SECRET_KEY, iv);
  decipher.setAAD(sealed.subarray(0, headerLength));
  decipher.setAuthTag(sealed.subarray(headerLength + 12, headerLength + 28));
  const jwk = JSON.parse(
    Buffer.concat([decipher.update(sealed.subarray(headerLength + 28)), decipher.final()]).toString(),
  );
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** An ES256 JWS of `claims` under `header`, signed with `key`. */
function es256(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  key: ReturnType<typeof createPrivateKey>,
) {
  const head = `${b64url(header)}.${b64url(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe.runIf(up)('OAuth 2.0 client credentials across two gateway instances (real Postgres)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_oauth_${suffix}`);
    [g1, g2] = (await startGateways(2, {
      ...postgresStoreEnv(store.databaseUrl, SECRET_KEY.toString('base64')),
      QUARRY_PUBLIC_URL: ISSUER,
      QUARRY_ADMIN_TOKEN: ADMIN_TOKEN,
    })) as [GatewayProcess, GatewayProcess];
    owner = await signUp(http, g1, 'oauth-owner', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: SOURCE,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'private',
      price: PRICE,
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([g1?.stop(), g2?.stop()]);
    await store?.drop();
  }, 60_000);

  it('a token from /oauth/token queries an analytic on either instance, metered like a key', async () => {
    const client = await createClient('reporting', ['query']);
    const post = await tokenRequest(
      g1,
      `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}`,
    );
    expect(post.status, post.text).toBe(200);
    expect(post.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'query',
    });
    expect(post.headers.get('cache-control')).toBe('no-store');
    expect(post.headers.get('pragma')).toBe('no-cache');
    const basicToken = await tokenFrom(g2, client);
    for (const token of [post.body.access_token as string, basicToken]) {
      for (const g of [g1, g2]) {
        const res = await query(g, token);
        expect(res.status, res.text).toBe(200);
        expect(res.body.results).toEqual([{ one: 1 }]);
        // The client's account owns the analytic: its own calls are free (docs/money.md).
        expect(res.body.meta.credits).toBe(0);
      }
    }
    const ledger = await ledgerOf(store.schema, owner.id);
    expect(ledger).toHaveLength(4);
    for (const event of ledger) {
      expect(event).toMatchObject({ key_id: client.id, origin: 'owner', millicredits: 0, status: 'ok' });
    }
  });

  it('answers the RFC 6749 errors', async () => {
    const client = await createClient('errors', ['query']);
    const post = `client_id=${client.clientId}&client_secret=${client.secret}`;
    const wrong = await tokenRequest(g1, 'grant_type=client_credentials', {
      authorization: basic(client.clientId, 'qcs_wrong'),
    });
    expectOAuthError(wrong, 401, 'invalid_client');
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="quarry"');
    expectOAuthError(
      await tokenRequest(g2, `grant_type=client_credentials&client_id=${client.clientId}&client_secret=nope`),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await tokenRequest(g1, `grant_type=client_credentials&${post}`, {
        authorization: basic(client.clientId, client.secret),
      }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await http.request(g1.url, 'POST', '/oauth/token', {
        json: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret },
      }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await tokenRequest(g2, `grant_type=authorization_code&${post}`),
      400,
      'unsupported_grant_type',
    );
    expectOAuthError(
      await tokenRequest(g2, `grant_type=client_credentials&scope=keys&${post}`),
      400,
      'invalid_scope',
    );
  });

  it('refuses forged, expired, misaddressed and unknown-kid tokens on both instances', async () => {
    const client = await createClient('forgery', ['query']);
    const genuine = await tokenFrom(g1, client);
    const { kid } = headerOf(genuine);
    const claims = JSON.parse(Buffer.from(genuine.split('.')[1] as string, 'base64url').toString());
    const realKey = await realSigningKey(kid as string);
    const header = { alg: 'ES256', typ: 'at+jwt', kid };
    // Control: the key opened from the store signs tokens the gateways accept.
    const control = await query(g2, es256(header, { ...claims, jti: randomUUID() }, realKey));
    expect(control.status, control.text).toBe(200);

    const jwks = await http.request(g2.url, 'GET', '/.well-known/jwks.json');
    const published = jwks.body.keys.find((k: { kid: string }) => k.kid === kid);
    const { publicKey: _unused, privateKey: otherKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const publicPem = createPublicKey({ key: published, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const hsHead = `${b64url({ ...header, alg: 'HS256' })}.${b64url(claims)}`;
    const now = Math.floor(Date.now() / 1000);
    const forgeries: Record<string, string> = {
      'another key under the same kid': es256(header, claims, otherKey),
      'alg none': `${b64url({ ...header, alg: 'none' })}.${b64url(claims)}.`,
      'HS256 keyed with the public JWK': `${hsHead}.${createHmac('sha256', JSON.stringify(published)).update(hsHead).digest('base64url')}`,
      'HS256 keyed with the public PEM': `${hsHead}.${createHmac('sha256', publicPem).update(hsHead).digest('base64url')}`,
      expired: es256(header, { ...claims, iat: now - 2000, exp: now - 60 }, realKey),
      'wrong aud': es256(header, { ...claims, aud: 'quarry:marketplace-try' }, realKey),
      'wrong iss': es256(header, { ...claims, iss: g1.url }, realKey),
      'unknown kid': es256({ ...header, kid: 'no-such-kid' }, claims, realKey),
    };
    for (const [what, forged] of Object.entries(forgeries)) {
      for (const g of [g1, g2]) {
        const res = await query(g, forged);
        expect(res.status, `${what}: ${res.text}`).toBe(401);
        expectErrorEnvelope(res, 401, 'UNAUTHENTICATED');
      }
    }
  });

  it("refuses a revoked client's tokens: at once where revoked, within 5 s elsewhere", async () => {
    const client = await createClient('doomed', ['query']);
    const token = await tokenFrom(g1, client);
    // Both instances have the client's verdict cached.
    expect((await query(g1, token)).status).toBe(200);
    expect((await query(g2, token)).status).toBe(200);
    const revoked = await http.request(g1.url, 'DELETE', `/v1/oauth/clients/${client.id}`, {
      key: owner.key,
    });
    expect(revoked.status).toBe(204);
    expectErrorEnvelope(await query(g1, token), 401, 'UNAUTHENTICATED');
    const started = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - started < 10_000) {
      status = (await query(g2, token)).status;
      if (status === 200) await sleep(100);
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThanOrEqual(5_000);
    expectOAuthError(
      await tokenRequest(g2, 'grant_type=client_credentials', {
        authorization: basic(client.clientId, client.secret),
      }),
      401,
      'invalid_client',
    );
  });

  it('rotates the signing key without downtime', async () => {
    const client = await createClient('rotation', ['query']);
    const before = await tokenFrom(g1, client);
    const oldKid = headerOf(before).kid;
    const rotated = await http.request(g1.url, 'POST', '/v1/admin/oauth/rotate-key', { key: ADMIN_TOKEN });
    expect(rotated.status, rotated.text).toBe(200);
    const newKid = rotated.body.active.kid as string;
    expect(newKid).not.toBe(oldKid);
    expect(rotated.body.retiring.map((k: { kid: string }) => k.kid)).toEqual([oldKid]);

    // The rotating instance signs with the new key at once; the other within its change-feed poll.
    const after = await tokenFrom(g1, client);
    expect(headerOf(after).kid).toBe(newKid);
    let fromG2 = await tokenFrom(g2, client);
    for (let i = 0; i < 50 && headerOf(fromG2).kid !== newKid; i += 1) {
      await sleep(100);
      fromG2 = await tokenFrom(g2, client);
    }
    expect(headerOf(fromG2).kid).toBe(newKid);
    for (const token of [before, after, fromG2]) {
      for (const g of [g1, g2]) expect((await query(g, token)).status).toBe(200);
    }
    for (const g of [g1, g2]) {
      const jwks = await http.request(g.url, 'GET', '/.well-known/jwks.json');
      expect(jwks.status).toBe(200);
      const kids = jwks.body.keys.map((k: { kid: string }) => k.kid);
      expect(kids).toContain(oldKid);
      expect(kids).toContain(newKid);
    }
  });

  it('publishes the authorization server metadata with the shared issuer', async () => {
    for (const g of [g1, g2]) {
      const res = await http.request(g.url, 'GET', '/.well-known/oauth-authorization-server');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        issuer: ISSUER,
        token_endpoint: `${ISSUER}/oauth/token`,
        jwks_uri: `${ISSUER}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        response_types_supported: [],
      });
    }
  });

  it('stores no client secret and no private key in the clear, and logs neither', async () => {
    const dump = await store.dumpText();
    expect(dump).toContain('oauth_clients.client_id');
    const privateParts = await withPg(async (c) => {
      const rows = await c.query<{ kid: string }>(`SELECT kid FROM ${store.schema}.oauth_signing_keys`);
      return Promise.all(
        rows.rows.map(async (r) => (await realSigningKey(r.kid)).export({ format: 'jwk' }).d),
      );
    });
    expect(privateParts.length).toBeGreaterThanOrEqual(2);
    const logs = `${g1.stdout()}${g1.stderr()}${g2.stdout()}${g2.stderr()}`;
    for (const value of [...secrets, ...privateParts]) {
      expect(dump).not.toContain(value as string);
      expect(logs).not.toContain(value as string);
    }
  });
});
