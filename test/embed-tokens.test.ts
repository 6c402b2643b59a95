// Embed tokens and the query routes' CORS (issue 31, docs/embedding.md) over real HTTP against a
// real gateway process on the real Postgres:
//   - a token fixing region=EU gets only EU rows (POST and GET, sent or left out), is refused
//     (403) when it sets region=US, on an analytic it does not name, after expiry, and on every
//     other route; the account that minted it pays; refused calls record nothing;
//   - two tokens with different fixed values never share a cache entry (nor with a key's call);
//   - an HS256 token minted offline with an embed secret works, keeps working through a rotation's
//     overlap, and stops when its secret is revoked; a token under another account's secret, an
//     `alg: none` one, an HS/ES mix-up, and one living over 24 h are refused;
//   - CORS: the preflight of the query routes; the answer carries exactly the allowed origin and
//     `Vary: Origin`; a refused origin gets 403 without CORS headers; an API key from another
//     origin is refused unless the account allows it; other routes get no CORS;
//   - a token naming `name@version` records its pin.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  ledgerOf,
  signUp,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());

const suffix = uniqueSuffix();
const SALES = `embed-sales-${suffix}`;
const OTHER = `embed-other-${suffix}`;
const APP_ORIGIN = 'https://app.example.test';
const EVIL_ORIGIN = 'https://evil.example.test';

// node:http (a source address): fetch would not let a test set `Origin`.
const http = createHttpClient({ localAddress: '127.0.0.1' });
let store: ControlPlaneSchema;
let g: GatewayProcess;
let owner: TestAccount;
let app: TestAccount;
let stranger: TestAccount;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 JWS, as an account's backend mints one offline. */
function hs256(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string): string {
  const head = `${b64url({ alg: 'HS256', ...header })}.${b64url(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

const now = () => Math.floor(Date.now() / 1000);

async function mint(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await http.request(g.url, 'POST', '/v1/embed-tokens', { key, json: body });
  expect(res.status, res.text).toBe(201);
  return res.body.embed_token.token;
}

const query = (
  token: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  source = SALES,
) => http.request(g.url, 'POST', '/v1/query', { key: token, json: { source, params }, headers });

const regions = (res: HttpResponse) =>
  [...new Set(res.body.results.map((r: { region: string }) => r.region))].sort();

async function newSecret(key: string, name: string): Promise<{ id: string; secret: string }> {
  const res = await http.request(g.url, 'POST', '/v1/embed-secrets', { key, json: { name } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.embed_secret.id, secret: res.body.embed_secret.secret };
}

describe.runIf(up)('embed tokens and CORS against a real gateway (real Postgres)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_embed_${suffix}`);
    g = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_PUBLIC_URL: 'https://quarry.embed.test',
      },
    });
    owner = await signUp(http, g, 'embed-owner', suffix);
    app = await signUp(http, g, 'embed-app', suffix);
    stranger = await signUp(http, g, 'embed-stranger', suffix);
    await connectTestPostgres(http, g, owner.key, 'pg');
    await deployAnalytic(http, g, owner.key, {
      name: SALES,
      connection: 'pg',
      // clock_timestamp(): a cached answer repeats it, a fresh run does not.
      sql: `SELECT region, amount, clock_timestamp()::text AS ran_at
              FROM (VALUES ('EU', 10), ('EU', 20), ('US', 30), ('APAC', 40)) AS t(region, amount)
             WHERE (:region::text IS NULL OR region = :region) ORDER BY amount`,
      params: { region: { type: 'string', pattern: '^[A-Z]{2,4}$' } },
      cache: { ttl: 300 },
      visibility: 'public',
      price: 1,
    });
    await deployAnalytic(http, g, owner.key, {
      name: OTHER,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
  }, 120_000);

  afterAll(async () => {
    await g?.stop();
    await store?.drop();
  }, 60_000);

  it('a token fixing region=EU gets only EU rows, and is refused region=US and other analytics', async () => {
    const token = await mint(app.key, {
      analytics: [{ name: SALES, fixed_params: { region: 'EU' } }],
      origins: [APP_ORIGIN],
      expires_in: 600,
    });
    const before = (await ledgerOf(store.schema, app.id)).length;

    const omitted = await query(token, {});
    expect(omitted.status, omitted.text).toBe(200);
    expect(regions(omitted)).toEqual(['EU']);
    expect(omitted.body.meta.credits).toBe(1);
    const same = await query(token, { region: 'EU' });
    expect(same.status, same.text).toBe(200);
    expect(regions(same)).toEqual(['EU']);
    const get = await http.request(g.url, 'GET', `/v1/analytics/${SALES}`, { key: token });
    expect(get.status, get.text).toBe(200);
    expect(regions(get)).toEqual(['EU']);

    const us = await query(token, { region: 'US' });
    expectErrorEnvelope(us, 403, 'FORBIDDEN');
    expect(us.body.error.message).toContain('"region" is fixed');
    const usGet = await http.request(g.url, 'GET', `/v1/analytics/${SALES}?region=US`, { key: token });
    expectErrorEnvelope(usGet, 403, 'FORBIDDEN');
    const other = await query(token, {}, {}, OTHER);
    expectErrorEnvelope(other, 403, 'FORBIDDEN');
    expect(other.body.error.message).toContain(`does not allow "${OTHER}"`);
    const unknown = await query(token, {}, {}, `nothing-${suffix}`);
    expectErrorEnvelope(unknown, 403, 'FORBIDDEN');

    // The minting account pays for the three served calls; the four refusals recorded nothing.
    const ledger = (await ledgerOf(store.schema, app.id)).slice(before);
    expect(ledger.map((e) => [e.analytic_name, e.millicredits, e.key_id])).toEqual([
      [SALES, 1000, app.keyId],
      [SALES, 1000, app.keyId],
      [SALES, 1000, app.keyId],
    ]);
  });

  it('is refused on every route but the query routes', async () => {
    const token = await mint(app.key, { analytics: [{ name: SALES }] });
    for (const [method, path, json] of [
      ['GET', '/v1/account', undefined],
      ['GET', '/v1/keys', undefined],
      ['POST', '/v1/embed-tokens', { analytics: [{ name: SALES }] }],
      ['GET', '/v1/embed-secrets', undefined],
    ] as const) {
      const res = await http.request(g.url, method, path, { key: token, ...(json ? { json } : {}) });
      expectErrorEnvelope(res, 403, 'FORBIDDEN');
    }
    const mcp = await http.request(g.url, 'POST', '/mcp', {
      key: token,
      json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(mcp.status, mcp.text).toBe(403);
  });

  it('two tokens with different fixed values never share a cache entry', async () => {
    const eu = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'EU' } }] });
    const apac = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'APAC' } }] });
    const eu2 = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'EU' } }] });
    const first = await query(eu, {}, { 'cache-control': 'no-cache' });
    expect(first.headers.get('x-cache')).toBe('MISS');
    const other = await query(apac, {});
    expect(other.status, other.text).toBe(200);
    expect(regions(other)).toEqual(['APAC']);
    expect(other.body.results[0].ran_at).not.toBe(first.body.results[0].ran_at);
    // The same fixed value is the same rows: a second token with it may reuse the answer.
    const again = await query(eu2, {});
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(regions(again)).toEqual(['EU']);
    // A key's call with the same params is not scoped by a token: it never reads the token's entry.
    const byKey = await query(app.key, { region: 'EU' }, {});
    expect(byKey.status, byKey.text).toBe(200);
    expect(byKey.body.results[0].ran_at).not.toBe(first.body.results[0].ran_at);
  });

  it("never lets one token follow another token's page cursor", async () => {
    const eu = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'EU' } }] });
    const apac = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'APAC' } }] });
    const page = (token: string, body: Record<string, unknown>) =>
      http.request(g.url, 'POST', '/v1/query', { key: token, json: { source: SALES, ...body } });
    const first = await page(eu, { params: {}, page_size: 1 });
    expect(first.status, first.text).toBe(200);
    expect(regions(first)).toEqual(['EU']);
    const cursor = first.body.meta.next as string;
    expect(typeof cursor).toBe('string');
    // The other token's fixed params are other rows: the cursor is not its to follow.
    expectErrorEnvelope(await page(apac, { cursor }), 400, 'INVALID_REQUEST');
    const second = await page(eu, { cursor });
    expect(second.status, second.text).toBe(200);
    expect(regions(second)).toEqual(['EU']);
  });

  it("never replays one token's answer to another through an Idempotency-Key", async () => {
    const eu = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'EU' } }] });
    const us = await mint(app.key, { analytics: [{ name: SALES, fixed_params: { region: 'US' } }] });
    const key = `idem-${suffix}`;
    const first = await query(eu, {}, { 'idempotency-key': key });
    expect(first.status, first.text).toBe(200);
    expect(regions(first)).toEqual(['EU']);
    const other = await query(us, {}, { 'idempotency-key': key });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expectErrorEnvelope(other, 400, 'INVALID_REQUEST');
    // The same token's retry is replayed as usual.
    const retry = await query(eu, {}, { 'idempotency-key': key });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(regions(retry)).toEqual(['EU']);
  });

  it('an HS256 token minted offline works until its secret is revoked; rotation keeps an overlap', async () => {
    const { id, secret } = await newSecret(app.key, 'backend');
    const listed = await http.request(g.url, 'GET', '/v1/embed-secrets', { key: app.key });
    expect(listed.body.embed_secrets.map((s: { id: string }) => s.id)).toContain(id);
    expect(listed.text).not.toContain(secret);
    const claims = {
      aud: 'quarry-embed',
      account: app.id,
      iat: now(),
      exp: now() + 600,
      analytics: [{ name: SALES, fixed_params: { region: 'US' } }],
    };
    const token = hs256({ kid: id, typ: 'JWT' }, claims, secret);
    const ok = await query(token, {});
    expect(ok.status, ok.text).toBe(200);
    expect(regions(ok)).toEqual(['US']);

    // Rotation: the old secret keeps verifying through the overlap, the new one verifies at once.
    const rotated = await http.request(g.url, 'POST', `/v1/embed-secrets/${id}/rotate`, {
      key: app.key,
      json: { overlap_seconds: 600 },
    });
    expect(rotated.status, rotated.text).toBe(201);
    const next = rotated.body.embed_secret as { id: string; secret: string };
    expect(next.id).not.toBe(id);
    expect(rotated.body.previous.expires_at).not.toBeNull();
    expect((await query(token, {})).status).toBe(200);
    const fresh = hs256({ kid: next.id }, claims, next.secret);
    expect((await query(fresh, {})).status).toBe(200);

    const revoked = await http.request(g.url, 'DELETE', `/v1/embed-secrets/${id}`, { key: app.key });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.embed_secret.revoked_at).not.toBeNull();
    await sleep(1_200);
    const refused = await query(token, {});
    expectErrorEnvelope(refused, 401, 'UNAUTHENTICATED');
    expect((await query(fresh, {})).status).toBe(200);

    // A rotation without overlap ends the old secret at once.
    const ended = await http.request(g.url, 'POST', `/v1/embed-secrets/${next.id}/rotate`, {
      key: app.key,
      json: { overlap_seconds: 0 },
    });
    expect(ended.status, ended.text).toBe(201);
    await sleep(1_200);
    expectErrorEnvelope(await query(fresh, {}), 401, 'UNAUTHENTICATED');
  });

  it('refuses expired, over-long, unsigned, mixed-up and other accounts’ tokens', async () => {
    const { id, secret } = await newSecret(app.key, 'attacks');
    const { id: strangerId, secret: strangerSecret } = await newSecret(stranger.key, 'stranger');
    const base = { aud: 'quarry-embed', account: app.id, analytics: [{ name: SALES }] };
    const live = { iat: now(), exp: now() + 600 };
    // The control: this one works.
    expect((await query(hs256({ kid: id }, { ...base, ...live }, secret), {})).status).toBe(200);

    const refused: Record<string, string> = {
      // Expired a minute ago (past the 30 s leeway).
      expired: hs256({ kid: id }, { ...base, iat: now() - 600, exp: now() - 60 }, secret),
      // Valid for 25 h.
      overLong: hs256({ kid: id }, { ...base, iat: now(), exp: now() + 25 * 3600 }, secret),
      noExpiry: hs256({ kid: id }, { ...base, iat: now() }, secret),
      wrongAudience: hs256({ kid: id }, { ...base, ...live, aud: 'quarry-api' }, secret),
      // Signed with the stranger's secret, naming the app's account, under either kid.
      strangerSecretAppKid: hs256({ kid: id }, { ...base, ...live }, strangerSecret),
      strangerKidAppAccount: hs256({ kid: strangerId }, { ...base, ...live }, strangerSecret),
      unsigned: `${b64url({ alg: 'none', kid: id })}.${b64url({ ...base, ...live })}.`,
      // HS256 under the gateway's token type (ES256 only there).
      esTypeHs: hs256({ kid: 'anything', typ: 'embed+jwt' }, { ...base, ...live }, secret),
      // An ES256 header under a secret's kid (HS256 only there).
      secretKidEs: `${b64url({ alg: 'ES256', kid: id })}.${b64url({ ...base, ...live })}.${'A'.repeat(86)}`,
    };
    for (const [what, token] of Object.entries(refused)) {
      const res = await query(token, {});
      expect({ what, status: res.status, code: res.body?.error?.code }).toEqual({
        what,
        status: 401,
        code: 'UNAUTHENTICATED',
      });
    }
    // The stranger's own token works for the stranger's account only: billed there.
    const strangers = await query(
      hs256({ kid: strangerId }, { ...base, ...live, account: stranger.id }, strangerSecret),
      {},
    );
    expect(strangers.status, strangers.text).toBe(200);
    expect((await ledgerOf(store.schema, stranger.id)).length).toBe(1);
  });

  it('a token minted by a key ends with that key', async () => {
    const created = await http.request(g.url, 'POST', '/v1/keys', {
      key: app.key,
      json: { name: 'minter', scopes: ['query'] },
    });
    expect(created.status, created.text).toBe(201);
    const token = await mint(created.body.key.secret, { analytics: [{ name: SALES }] });
    expect((await query(token, {})).status).toBe(200);
    const revoked = await http.request(g.url, 'DELETE', `/v1/keys/${created.body.key.id}`, { key: app.key });
    expect(revoked.status).toBe(200);
    await sleep(1_200);
    expectErrorEnvelope(await query(token, {}), 401, 'UNAUTHENTICATED');
  });

  it('answers CORS on the query routes only: exactly the allowed origin, Vary: Origin', async () => {
    const token = await mint(app.key, {
      analytics: [{ name: SALES, fixed_params: { region: 'EU' } }],
      origins: [APP_ORIGIN],
    });
    const preflight = await http.request(g.url, 'OPTIONS', '/v1/query', {
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('vary')).toContain('Origin');

    const allowed = await query(token, {}, { origin: APP_ORIGIN });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(allowed.headers.get('vary')).toBe('Origin');
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    // An error the page may read (its own origin) carries CORS too.
    const fixed = await query(token, { region: 'US' }, { origin: APP_ORIGIN });
    expect(fixed.status).toBe(403);
    expect(fixed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);

    const before = (await ledgerOf(store.schema, app.id)).length;
    const evil = await query(token, {}, { origin: EVIL_ORIGIN });
    expectErrorEnvelope(evil, 403, 'FORBIDDEN');
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    expect(evil.headers.get('vary')).toBe('Origin');
    const evilGet = await http.request(g.url, 'GET', `/v1/analytics/${SALES}`, {
      key: token,
      headers: { origin: EVIL_ORIGIN },
    });
    expectErrorEnvelope(evilGet, 403, 'FORBIDDEN');
    expect(evilGet.headers.get('access-control-allow-origin')).toBeNull();
    // A token listing no origin is for servers: any browser origin is refused.
    const serverOnly = await mint(app.key, { analytics: [{ name: SALES }] });
    expectErrorEnvelope(await query(serverOnly, {}, { origin: APP_ORIGIN }), 403, 'FORBIDDEN');

    // An API key from a page of another origin: refused, unless the account allows it.
    const byKey = await query(app.key, {}, { origin: APP_ORIGIN });
    expectErrorEnvelope(byKey, 403, 'FORBIDDEN');
    expect(byKey.headers.get('access-control-allow-origin')).toBeNull();
    expect((await ledgerOf(store.schema, app.id)).length).toBe(before);
    const set = await http.request(g.url, 'PUT', '/v1/account/cors', {
      key: app.key,
      json: { allow_keys_from_browsers: true },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({ cors: { allow_keys_from_browsers: true } });
    const allowedKey = await query(app.key, {}, { origin: APP_ORIGIN });
    expect(allowedKey.status, allowedKey.text).toBe(200);
    expect(allowedKey.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    // The gateway's own origin is not cross-origin.
    const own = await query(owner.key, {}, { origin: 'https://quarry.embed.test' });
    expect(own.status, own.text).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBeNull();

    // Nothing else gets CORS.
    const account = await http.request(g.url, 'GET', '/v1/account', {
      key: app.key,
      headers: { origin: APP_ORIGIN },
    });
    expect(account.headers.get('access-control-allow-origin')).toBeNull();
    const otherPreflight = await http.request(g.url, 'OPTIONS', '/v1/keys', {
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('enforces a token’s own rate limit and refuses a bad mint request', async () => {
    const token = await mint(app.key, {
      analytics: [{ name: OTHER }],
      rate_limit: { limit: 2, window_seconds: 3600 },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await query(token, {}, {}, OTHER)).status);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.at(-1)).toBe(429);

    const badParam = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: SALES, fixed_params: { country: 'EU' } }] },
    });
    expectErrorEnvelope(badParam, 400, 'INVALID_PARAMS');
    const tooLong = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: SALES }], expires_in: 86_401 },
    });
    expectErrorEnvelope(tooLong, 400, 'INVALID_REQUEST');
    const badOrigin = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: SALES }], origins: ['https://app.example.test/'] },
    });
    expectErrorEnvelope(badOrigin, 400, 'INVALID_REQUEST');
    const missing = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: `missing-${suffix}` }] },
    });
    expectErrorEnvelope(missing, 404, 'SOURCE_NOT_FOUND');
  });

  it('records the version a token pins', async () => {
    const res = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: `${SALES}@1`, fixed_params: { region: 'EU' } }] },
    });
    expect(res.status, res.text).toBe(201);
    const pins = await withPg(async (c) => {
      const rows = await c.query(
        `SELECT p.account_id, a.name AS analytic, p.version
           FROM ${store.schema}.analytic_version_pins p JOIN ${store.schema}.analytics a ON a.id = p.analytic_id
          WHERE p.ref = $1`,
        [res.body.embed_token.token_id],
      );
      return rows.rows;
    });
    expect(pins).toEqual([{ account_id: app.id, analytic: SALES, version: 1 }]);
    // A version that does not exist cannot be pinned: the mint is refused.
    const unknown = await http.request(g.url, 'POST', '/v1/embed-tokens', {
      key: app.key,
      json: { analytics: [{ name: `${SALES}@99` }] },
    });
    expect(unknown.status, unknown.text).toBe(404);
  });
});
