// Free marketplace calls cannot be forged (issue 4, item 5), over real HTTP against two gateway
// processes sharing one store and one QUARRY_SECRET_KEY: a header, a query flag, a body field,
// an unsigned (`alg: none`) token, a token signed with another secret, or a real token with a
// tampered claim never make a call free (it is charged normally or refused). A real try-token is
// free, recorded with origin `marketplace`, outside the quota, valid on every instance, and
// refused once it has expired.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse, type RequestOptions } from './support/http-client.js';
import {
  connectTestPostgres,
  counterCalls,
  deployAnalytic,
  expectStatus,
  type LedgerEvent,
  ledgerOf,
  quotaCounter,
  signUp,
  startGateways,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());

const suffix = uniqueSuffix();
const PRICE = 7;
const SOURCE = `priced-${suffix}`;
const http = createHttpClient();
let store: ControlPlaneSchema;
let g1: GatewayProcess;
let g2: GatewayProcess;
let owner: TestAccount;
let caller: TestAccount;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT with the claims a real try-token carries, for `accountId`, signed as the caller wishes. */
function forgeToken(accountId: string, sign: 'none' | Buffer): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: 'quarry',
    aud: 'quarry:marketplace-try',
    sub: accountId,
    jti: randomUUID(),
    iat: now,
    exp: now + 300,
  };
  if (sign === 'none') return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
  const head = `${b64url({ alg: 'HS256', kid: 'k1', typ: 'JWT' })}.${b64url(claims)}`;
  return `${head}.${createHmac('sha256', sign).update(head).digest('base64url')}`;
}

function query(gateway: GatewayProcess, options: RequestOptions, path = '/v1/query'): Promise<HttpResponse> {
  return http.request(gateway.url, 'POST', path, { json: { source: SOURCE, params: {} }, ...options });
}

async function mintTryToken(gateway: GatewayProcess, ttlSeconds?: number) {
  return expectStatus(
    await http.request(gateway.url, 'POST', '/v1/marketplace/try-token', {
      key: caller.key,
      json: ttlSeconds === undefined ? { source: SOURCE } : { source: SOURCE, ttl_seconds: ttlSeconds },
    }),
    201,
    'try-token',
  ).body as { token: string; expires_at: string };
}

async function eventOf(response: HttpResponse): Promise<LedgerEvent | undefined> {
  const id = response.headers.get('x-request-id');
  return (await ledgerOf(store.schema, caller.id)).find((e) => e.request_id === id);
}

/** A forged attempt must be charged like any call, or refused with no event at all. */
async function expectNeverFree(response: HttpResponse, what: string): Promise<void> {
  const event = await eventOf(response);
  if (response.status === 200) {
    expect(response.body.meta.credits, what).toBe(PRICE);
    expect(event, what).toMatchObject({ status: 'ok', origin: 'free', millicredits: PRICE * 1000 });
  } else {
    expect(response.status, `${what}: ${response.text}`).toBeGreaterThanOrEqual(400);
    expect(response.status, what).toBeLessThan(500);
    expect(event, what).toBeUndefined();
  }
}

describe.runIf(up)('marketplace try-tokens and forged free calls over HTTP (two instances)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_meter_forge_${suffix}`);
    // Same QUARRY_SECRET_KEY on both: a token minted by one verifies on the other.
    [g1, g2] = (await startGateways(
      2,
      postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
    )) as [GatewayProcess, GatewayProcess];
    owner = await signUp(http, g1, 'owner', suffix);
    caller = await signUp(http, g1, 'caller', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: SOURCE,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: PRICE,
    });
    // Try-tokens are minted for listed analytics only.
    expectStatus(
      await http.request(g1.url, 'PUT', `/v1/owner/analytics/${SOURCE}/listing`, {
        key: owner.key,
        json: {},
      }),
      200,
      'publish',
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([g1?.stop(), g2?.stop()]);
    await store?.drop();
  }, 60_000);

  it('a marketplace header, query flag or body field on an API-key call is charged normally', async () => {
    const before = await counterCalls(store.schema, caller.id);
    const headers = {
      'x-quarry-origin': 'marketplace',
      'x-origin': 'marketplace',
      referer: 'https://quarry/m',
    };
    const byHeader = await query(g1, { key: caller.key, headers });
    expect(byHeader.status, byHeader.text).toBe(200);
    await expectNeverFree(byHeader, 'X-Quarry-Origin header');
    const byFlag = await query(g2, { key: caller.key }, '/v1/query?origin=marketplace');
    expect(byFlag.status, byFlag.text).toBe(200);
    await expectNeverFree(byFlag, '?origin=marketplace on POST');
    await expectNeverFree(
      await http.request(g1.url, 'GET', `/v1/analytics/${SOURCE}?origin=marketplace`, { key: caller.key }),
      '?origin=marketplace on GET',
    );
    const byBody = await http.request(g2.url, 'POST', '/v1/query', {
      key: caller.key,
      json: { source: SOURCE, params: {}, origin: 'marketplace', free: true },
    });
    expectErrorEnvelope(byBody, 400, 'INVALID_REQUEST');
    await expectNeverFree(byBody, 'origin in the body');
    // Two charged calls (header, POST flag), plus the GET if it was served.
    const after = await counterCalls(store.schema, caller.id);
    expect(after - before).toBeGreaterThanOrEqual(2);
    expect(after - before).toBe((await ledgerOf(store.schema, caller.id)).length);
  });

  it('an alg:none token, a token signed with another secret and a tampered real one are refused', async () => {
    const attempts: [string, string][] = [
      ['alg none', forgeToken(caller.id, 'none')],
      ['HS256 with another secret', forgeToken(caller.id, randomBytes(32))],
    ];
    // A real token whose subject is swapped for another account: the signature no longer holds.
    const real = (await mintTryToken(g1)).token;
    const [head, payload, signature] = real.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    attempts.push(['tampered subject', `${head}.${b64url({ ...claims, sub: owner.id })}.${signature}`]);
    attempts.push(['stripped signature', `${head}.${payload}.`]);
    for (const [what, token] of attempts) {
      for (const g of [g1, g2]) {
        const response = await query(g, { key: token, headers: { 'x-quarry-origin': 'marketplace' } });
        expectErrorEnvelope(response, 401, 'UNAUTHENTICATED');
        await expectNeverFree(response, what);
      }
    }
  });

  it('a real try-token is free, outside the quota, recorded as marketplace, and valid on every instance', async () => {
    const minted = await mintTryToken(g1);
    expect(new Date(minted.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(300_000);
    const counterBefore = await quotaCounter(store.schema, caller.id);
    for (const g of [g1, g2]) {
      const response = await query(g, { key: minted.token });
      expect(response.status, response.text).toBe(200);
      expect(response.body.meta.credits).toBe(0);
      expect(await eventOf(response)).toMatchObject({
        status: 'ok',
        origin: 'marketplace',
        millicredits: 0,
        owner_millicredits: 0,
        value_musd: 0,
        account_id: caller.id,
        analytic_name: SOURCE,
      });
    }
    expect(await quotaCounter(store.schema, caller.id)).toBe(counterBefore);
    // It cannot mint another token, nor reach anything but queries.
    const again = await http.request(g2.url, 'POST', '/v1/marketplace/try-token', {
      key: minted.token,
      json: {},
    });
    expect(again.status).toBe(403);
    const keys = await http.request(g2.url, 'GET', '/v1/keys', { key: minted.token });
    expect(keys.status).toBe(403);
  });

  it('a try-token is refused once it has expired (ttl_seconds 1 and 3)', async () => {
    const short = await mintTryToken(g1, 1);
    const three = await mintTryToken(g1, 3);
    expect(new Date(short.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(1000);
    // The 3 s token works now, on the other instance...
    const fresh = await query(g2, { key: three.token });
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.meta.credits).toBe(0);
    // ...and both are refused once their expiry (whole seconds) has passed.
    const lastExpiry = Math.max(Date.parse(short.expires_at), Date.parse(three.expires_at));
    await sleep(lastExpiry - Date.now() + 1100);
    for (const token of [short.token, three.token]) {
      for (const g of [g1, g2]) {
        const response = await query(g, { key: token });
        expectErrorEnvelope(response, 401, 'UNAUTHENTICATED');
        expect(await eventOf(response)).toBeUndefined();
      }
    }
  }, 15_000);
});
