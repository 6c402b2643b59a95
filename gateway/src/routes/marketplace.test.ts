// The marketplace over HTTP: owners publish, update and unpublish listings whose price is the
// analytic's own; anyone searches (text, category, popular/newest) and reads a listing's detail
// with a ready example request; try-tokens make free marketplace calls, expire, and nothing a
// caller can forge (a header, a query flag, an unsigned or foreign JWT) makes a call free.
import { decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let consumer: SignedUp;
/** A caller on a paying plan: only such calls count towards popularity. */
let payer: SignedUp;
/** Unique per run, so searches only see this file's listings. */
const category = `Test-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  tg = await createTestGateway();
  consumer = await tg.signUp('Consumer');
  payer = await tg.signUp('Payer');
  await tg.gateway.services.accounts.setPlan(payer.accountId, 'smb');
});
afterAll(async () => {
  await tg?.close();
});

async function deploy(name: string, extra: Record<string, unknown> = {}) {
  const res = await tg.call('PUT', `/v1/owner/analytics/${name}`, {
    key: tg.ownerKey,
    body: {
      connection: 'demo',
      sql: 'SELECT region, sum(amount) AS revenue FROM sales WHERE year = :year GROUP BY region ORDER BY region',
      params: { year: { type: 'integer', required: true, min: 2000, max: 2100 } },
      visibility: 'public',
      price: 3,
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(200);
  return res;
}

const publish = (name: string, body: Record<string, unknown>, key = tg.ownerKey) =>
  tg.call('PUT', `/v1/owner/analytics/${name}/listing`, { key, body });

const search = (query: string) => tg.call('GET', `/v1/marketplace/listings?${query}`);

async function usage(key: string) {
  const res = await tg.call('GET', '/v1/account/usage', { key });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

async function ownerEarnings(name: string) {
  const res = await tg.call('GET', '/v1/owner/statements', { key: tg.ownerKey });
  expect(res.status, res.text).toBe(200);
  return (
    res.json.analytics.find((a: { name: string }) => a.name === name) ?? {
      calls: 0,
      credits: 0,
      owner_share: 0,
    }
  );
}

describe('listings', () => {
  it('publishes at the analytic’s own price and refuses a price in the body or bad example params', async () => {
    await deploy('mkt-alpha', { title: 'Alpha from the definition', description: 'Regional revenue.' });
    const withPrice = await publish('mkt-alpha', { category, price: 0 });
    expect(withPrice.status).toBe(400);
    expect(withPrice.json.error.code).toBe('INVALID_REQUEST');
    const badExample = await publish('mkt-alpha', { category, example_params: { year: 'soon' } });
    expect(badExample.status).toBe(400);
    expect(badExample.json.error.code).toBe('INVALID_PARAMS');
    expect(badExample.json.error.details.map((d: { param: string }) => d.param)).toEqual(['year']);
    // Nothing was published by the refused attempts.
    expect((await search(`category=${category}`)).json.total).toBe(0);

    const res = await publish('mkt-alpha', {
      category,
      tags: ['zebra-stripes', 'regions'],
      example_params: { year: 2024 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.listing).toMatchObject({
      name: 'mkt-alpha',
      title: 'Alpha from the definition',
      description: 'Regional revenue.',
      category,
      tags: ['zebra-stripes', 'regions'],
      price: 3,
      example_params: { year: 2024 },
      published: true,
      unpublished_at: null,
    });
  });

  it('finds a listing by text and by category (any case), with its price and popularity', async () => {
    const byTag = await search('q=ZEBRA-stripes');
    expect(byTag.status).toBe(200);
    expect(byTag.json.total).toBe(1);
    expect(byTag.json.items).toEqual([
      {
        name: 'mkt-alpha',
        title: 'Alpha from the definition',
        description: 'Regional revenue.',
        category,
        tags: ['zebra-stripes', 'regions'],
        price: 3,
        scheduled_price: null,
        price_effective_at: null,
        calls_30d: 0,
        callers_30d: 0,
        owner: { name: expect.any(String) },
        previews: true,
        published_at: expect.any(String),
      },
    ]);
    const byCategory = await search(`category=${category.toLowerCase()}`);
    expect(byCategory.json.items.map((i: { name: string }) => i.name)).toEqual(['mkt-alpha']);
    expect((await search('q=no-such-words-anywhere-zz')).json).toEqual({ items: [], total: 0 });
    for (const bad of ['sort=cheapest', 'limit=0', 'limit=101', 'offset=-1']) {
      const res = await search(bad);
      expect(res.status, bad).toBe(400);
      expect(res.json.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('shows the detail: description, param schema, price and an example request that works', async () => {
    const res = await tg.call('GET', '/v1/marketplace/listings/mkt-alpha');
    expect(res.status, res.text).toBe(200);
    const detail = res.json;
    expect(detail).toMatchObject({
      name: 'mkt-alpha',
      description: 'Regional revenue.',
      price: 3,
      version: 1,
      params: { year: { type: 'integer', required: true, min: 2000, max: 2100 } },
      example_params: { year: 2024 },
      example_request: {
        method: 'POST',
        url: '/v1/query',
        body: { source: 'mkt-alpha', params: { year: 2024 } },
      },
    });
    expect(detail.curl).toContain('$QUARRY_API_KEY');
    expect(detail.curl).toContain('/v1/query');
    expect(detail.curl).toContain(`'{"source":"mkt-alpha","params":{"year":2024}}'`);
    // The example request, sent as is, is a charged call at the listed price.
    const call = await tg.call(detail.example_request.method, detail.example_request.url, {
      key: consumer.key,
      body: detail.example_request.body,
    });
    expect(call.status, call.text).toBe(200);
    expect(call.json.meta.credits).toBe(3);
  });

  it('lists params in the order the owner declared them, not the store’s (jsonb sorts keys)', async () => {
    await deploy('mkt-ordered', {
      sql: 'SELECT region, sum(amount) AS revenue FROM sales WHERE year = :year AND region <> :region_code GROUP BY region',
      params: {
        year: { type: 'integer', required: true, min: 2000, max: 2100 },
        region_code: { type: 'string', default: 'none' },
        limit: { type: 'integer', default: 10 },
      },
    });
    expect(
      (await publish('mkt-ordered', { category: `${category}-order`, example_params: { year: 2024 } }))
        .status,
    ).toBe(200);
    const declared = ['year', 'region_code', 'limit'];
    const detail = await tg.call('GET', '/v1/marketplace/listings/mkt-ordered');
    expect(Object.keys(detail.json.params)).toEqual(declared);
    const own = await tg.call('GET', '/v1/owner/analytics/mkt-ordered', { key: tg.ownerKey });
    expect(Object.keys(own.json.analytic.definition.params)).toEqual(declared);
    const versions = await tg.call('GET', '/v1/owner/analytics/mkt-ordered/versions', { key: tg.ownerKey });
    expect(Object.keys(versions.json.versions.at(-1).definition.params)).toEqual(declared);
  });

  it('follows the analytic’s price: a rise is shown scheduled a week ahead, a decrease at once', async () => {
    const alpha = { title: 'Alpha from the definition', description: 'Regional revenue.' };
    await deploy('mkt-alpha', { ...alpha, price: 4 });
    const listed = (await tg.call('GET', '/v1/marketplace/listings/mkt-alpha')).json;
    expect(listed).toMatchObject({ price: 3, scheduled_price: 4, version: 2 });
    expect(Date.parse(listed.price_effective_at) - Date.now()).toBeGreaterThan(167 * 3600_000);
    expect((await search(`category=${category}`)).json.items[0]).toMatchObject({
      price: 3,
      scheduled_price: 4,
    });
    const owner = await tg.call('GET', '/v1/owner/analytics/mkt-alpha/listing', { key: tg.ownerKey });
    expect(owner.json.listing).toMatchObject({ price: 3, scheduled_price: 4 });
    await deploy('mkt-alpha', { ...alpha, price: 2 });
    expect((await tg.call('GET', '/v1/marketplace/listings/mkt-alpha')).json).toMatchObject({
      price: 2,
      scheduled_price: null,
      price_effective_at: null,
      version: 3,
    });
  });

  it('sorts by paying callers and paid calls in the last 30 days, or newest first', async () => {
    await deploy('mkt-beta', { price: 5 });
    expect(
      (await publish('mkt-beta', { title: 'Beta', category, example_params: { year: 2023 } })).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await tg.call('POST', '/v1/query', {
        key: payer.key,
        body: { source: 'mkt-alpha', params: { year: 2024 } },
      });
      expect(res.status).toBe(200);
    }
    const popular = await search(`category=${category}&sort=popular`);
    // The Free-plan consumer's earlier call of mkt-alpha does not count.
    expect(
      popular.json.items.map((i: { name: string; calls_30d: number; callers_30d: number }) => [
        i.name,
        i.calls_30d,
        i.callers_30d,
      ]),
    ).toEqual([
      ['mkt-alpha', 2, 1],
      ['mkt-beta', 0, 0],
    ]);
    const newest = await search(`category=${category}&sort=newest`);
    expect(newest.json.items.map((i: { name: string }) => i.name)).toEqual(['mkt-beta', 'mkt-alpha']);
    const page = await search(`category=${category}&sort=newest&limit=1&offset=1`);
    expect(page.json).toMatchObject({ total: 2, items: [{ name: 'mkt-alpha' }] });
  });

  it('unpublishes: gone from search and detail, still callable, and back when republished', async () => {
    const off = await tg.call('DELETE', '/v1/owner/analytics/mkt-beta/listing', { key: tg.ownerKey });
    expect(off.status, off.text).toBe(200);
    expect(off.json.listing).toMatchObject({ published: false, unpublished_at: expect.any(String) });
    expect((await search(`category=${category}`)).json.items.map((i: { name: string }) => i.name)).toEqual([
      'mkt-alpha',
    ]);
    const gone = await tg.call('GET', '/v1/marketplace/listings/mkt-beta');
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('NOT_FOUND');
    const call = await tg.call('POST', '/v1/query', {
      key: payer.key,
      body: { source: 'mkt-beta', params: { year: 2024 } },
    });
    expect(call.status).toBe(200);
    // Fields left out keep the listing's values (here its example params).
    const back = await publish('mkt-beta', { title: 'Beta again' });
    expect(back.status, back.text).toBe(200);
    expect(back.json.listing).toMatchObject({
      title: 'Beta again',
      category,
      example_params: { year: 2023 },
      published: true,
    });
    const shown = await tg.call('GET', '/v1/marketplace/listings/mkt-beta');
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({ title: 'Beta again', price: 5, calls_30d: 1, callers_30d: 1 });
  });

  it('answers 404 for an unknown listing and refuses what may not be listed', async () => {
    expect((await tg.call('GET', '/v1/marketplace/listings/no-such-listing')).status).toBe(404);
    // The demo publishes its public examples, so they are listed...
    expect((await tg.call('GET', '/v1/marketplace/listings/sales-by-region')).status).toBe(200);
    await deploy('mkt-private', { visibility: 'private' });
    const priv = await publish('mkt-private', { category });
    expect(priv.status).toBe(409);
    expect(priv.json.error.code).toBe('CONFLICT');
    // Another account cannot list the owner's analytic, nor unpublish it.
    const other = await publish('mkt-alpha', { category }, consumer.key);
    expect(other.status).toBe(404);
    const otherOff = await tg.call('DELETE', '/v1/owner/analytics/mkt-alpha/listing', { key: consumer.key });
    expect(otherOff.status).toBe(404);
    expect((await tg.call('GET', '/v1/marketplace/listings/mkt-alpha')).status).toBe(200);
    const never = await tg.call('DELETE', '/v1/owner/analytics/mkt-private/listing', { key: tg.ownerKey });
    expect(never.status).toBe(404);
    // ...and an analytic that was deployed but never published is not.
    await deploy('mkt-unlisted', {});
    expect((await tg.call('GET', '/v1/marketplace/listings/mkt-unlisted')).status).toBe(404);
  });
});

describe('try-tokens', () => {
  it('mints a short-lived token whose calls are free, off the quota, and earn the owner nothing', async () => {
    const before = await usage(consumer.key);
    const earnedBefore = await ownerEarnings('mkt-alpha');
    const minted = await tg.call('POST', '/v1/marketplace/try-token', {
      key: consumer.key,
      body: { source: 'mkt-alpha', ttl_seconds: 60 },
    });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.json.token_type).toBe('Bearer');
    const expiresIn = Date.parse(minted.json.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(55_000);
    expect(expiresIn).toBeLessThanOrEqual(61_000);
    const token = minted.json.token as string;
    for (let i = 0; i < 2; i++) {
      const res = await tg.call('POST', '/v1/query', {
        key: token,
        body: { source: 'mkt-alpha', params: { year: 2024 } },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.json.meta.credits).toBe(0);
    }
    const after = await usage(consumer.key);
    expect(after.totals).toEqual({
      ...before.totals,
      marketplace_calls: before.totals.marketplace_calls + 2,
      calls_by_origin: {
        ...before.totals.calls_by_origin,
        marketplace: before.totals.calls_by_origin.marketplace + 2,
      },
    });
    expect(after.by_analytic).toEqual(before.by_analytic);
    // Counted on the owner's statement as previews, earning nothing.
    const earnedAfter = await ownerEarnings('mkt-alpha');
    expect(earnedAfter.owner_share_millicredits ?? 0).toBe(earnedBefore.owner_share_millicredits ?? 0);
    expect(earnedAfter.owner_share_micro_usd ?? 0).toBe(earnedBefore.owner_share_micro_usd ?? 0);
    expect(earnedAfter.calls_by_origin.marketplace).toBe(
      (earnedBefore.calls_by_origin?.marketplace ?? 0) + 2,
    );
    // The token only queries: it can neither mint another token nor read the account.
    const again = await tg.call('POST', '/v1/marketplace/try-token', {
      key: token,
      body: { source: 'mkt-alpha' },
    });
    expect(again.status).toBe(403);
    expect(again.json.error.code).toBe('FORBIDDEN');
    expect((await tg.call('GET', '/v1/account/usage', { key: token })).status).toBe(403);
  });

  it('defaults to 5 minutes without ttl_seconds and refuses a longer or empty lifetime', async () => {
    const res = await tg.call('POST', '/v1/marketplace/try-token', {
      key: consumer.key,
      body: { source: 'mkt-alpha' },
    });
    expect(res.status, res.text).toBe(201);
    const ttl = Date.parse(res.json.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(295_000);
    expect(ttl).toBeLessThanOrEqual(301_000);
    for (const ttl_seconds of [0, 301, 1.5]) {
      const bad = await tg.call('POST', '/v1/marketplace/try-token', {
        key: consumer.key,
        body: { source: 'mkt-alpha', ttl_seconds },
      });
      expect(bad.status, String(ttl_seconds)).toBe(400);
    }
    expect(
      (await tg.call('POST', '/v1/marketplace/try-token', { body: { source: 'mkt-alpha' } })).status,
    ).toBe(401);
  });

  it('expires: a 1-second token is refused with 401 once its second has passed', async () => {
    const minted = await tg.call('POST', '/v1/marketplace/try-token', {
      key: consumer.key,
      body: { source: 'mkt-alpha', ttl_seconds: 1 },
    });
    expect(minted.status).toBe(201);
    await new Promise((r) => setTimeout(r, 2_100));
    const res = await tg.call('POST', '/v1/query', {
      key: minted.json.token,
      body: { source: 'mkt-alpha', params: { year: 2024 } },
    });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('UNAUTHENTICATED');
  });
});

describe('previews: one listed analytic, capped, counted, while the minting key lives', () => {
  const mint = (source: string, key = consumer.key) =>
    tg.call('POST', '/v1/marketplace/try-token', { key, body: { source } });

  it('refuses a try-token on another analytic than the one it was minted for', async () => {
    const minted = await mint('mkt-alpha');
    expect(minted.status, minted.text).toBe(201);
    const other = await tg.call('POST', '/v1/query', {
      key: minted.json.token,
      body: { source: 'top-products', params: { category: 'Garden' } },
    });
    expect(other.status, other.text).toBe(403);
    expect(other.json.error.code).toBe('FORBIDDEN');
    expect(other.json.error.message).toContain('mkt-alpha');
  });

  it('mints only for a listed analytic whose owner allows previews', async () => {
    const unlisted = await mint('top-products-unlisted-nowhere');
    expect(unlisted.status).toBe(404);
    await deploy('mkt-private', { visibility: 'private' });
    expect((await mint('mkt-private')).status).toBe(404);
    await deploy('mkt-no-preview');
    expect(
      (
        await publish('mkt-no-preview', {
          category: 'Finance',
          previews: false,
          example_params: { year: 2024 },
        })
      ).status,
    ).toBe(200);
    const off = await mint('mkt-no-preview');
    expect(off.status).toBe(403);
    expect(off.json.error.message).toMatch(/previews off/);
    const listing = await tg.call('GET', '/v1/marketplace/listings/mkt-no-preview');
    expect(listing.json.previews).toBe(false);
  });

  it('refuses a try-token once the key that minted it is revoked', async () => {
    const created = await tg.call('POST', '/v1/keys', { key: consumer.key, body: { name: 'short-lived' } });
    expect(created.status, created.text).toBe(201);
    const minted = await mint('mkt-alpha', created.json.key.secret);
    expect(minted.status, minted.text).toBe(201);
    const call = () =>
      tg.call('POST', '/v1/query', {
        key: minted.json.token,
        body: { source: 'mkt-alpha', params: { year: 2024 } },
      });
    expect((await call()).status).toBe(200);
    const revoked = await tg.call('DELETE', `/v1/keys/${created.json.key.id}`, { key: consumer.key });
    expect(revoked.status, revoked.text).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('answers at most QUARRY_PREVIEW_ROWS rows, marked as a preview, and never from the full answer', async () => {
    await deploy('mkt-many', {
      sql: 'SELECT range AS n FROM range(50) WHERE :year > 0',
      cache: { ttl: 300 },
    });
    expect((await publish('mkt-many', { category: 'Finance', example_params: { year: 2024 } })).status).toBe(
      200,
    );
    const body = { source: 'mkt-many', params: { year: 2024 } };
    const full = await tg.call('POST', '/v1/query', { key: consumer.key, body });
    expect(full.json.results).toHaveLength(50);
    const minted = await mint('mkt-many');
    const preview = await tg.call('POST', '/v1/query', { key: minted.json.token, body });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json.results).toHaveLength(10);
    expect(preview.json.meta).toMatchObject({ preview: true, truncated: true, credits: 0 });
    // …and the full answer is not served the preview's rows either.
    const again = await tg.call('POST', '/v1/query', { key: consumer.key, body });
    expect(again.json.results).toHaveLength(50);
    expect(again.json.meta.preview).toBeUndefined();
  });
});

describe('forged marketplace origins', () => {
  const body = { source: 'mkt-alpha', params: { year: 2024 } };

  it('charges a call that claims the marketplace by header or query flag', async () => {
    const before = (await usage(consumer.key)).totals;
    const header = await tg.call('POST', '/v1/query', {
      key: consumer.key,
      body,
      headers: { 'x-quarry-origin': 'marketplace' },
    });
    expect(header.status).toBe(200);
    expect(header.json.meta.credits).toBe(2);
    const flag = await tg.call('POST', '/v1/query?origin=marketplace', { key: consumer.key, body });
    expect(flag.status).toBe(200);
    expect(flag.json.meta.credits).toBe(2);
    // On GET the flag is just an unknown param: refused, never free.
    const get = await tg.call('GET', '/v1/analytics/mkt-alpha?year=2024&origin=marketplace', {
      key: consumer.key,
    });
    expect(get.status).toBe(400);
    const after = (await usage(consumer.key)).totals;
    expect(after.calls).toBe(before.calls + 2);
    expect(after.credits).toBe(before.credits + 4);
    expect(after.marketplace_calls).toBe(before.marketplace_calls);
  });

  it('refuses an unsigned token, one signed with another key, and a tampered real one', async () => {
    const claims = { iss: 'quarry', aud: 'quarry:marketplace-try', sub: consumer.accountId, jti: 'forged' };
    const now = Math.floor(Date.now() / 1000);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, iat: now, exp: now + 60 })}.`;

    const real = (
      await tg.call('POST', '/v1/marketplace/try-token', { key: consumer.key, body: { source: 'mkt-alpha' } })
    ).json.token;
    const { kid } = decodeProtectedHeader(real);
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .setIssuer(claims.iss)
      .setAudience(claims.aud)
      .setSubject(claims.sub)
      .setJti('forged-2')
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(crypto.getRandomValues(new Uint8Array(32)));
    const [head, payload, signature] = real.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${head}.${b64({ ...decoded, exp: now + 3_600 })}.${signature}`;

    for (const [label, token] of [
      ['alg none', unsigned],
      ['foreign key', foreign],
      ['tampered', tampered],
    ] as const) {
      const res = await tg.call('POST', '/v1/query', { key: token, body });
      expect(res.status, label).toBe(401);
      expect(res.json.error.code, label).toBe('UNAUTHENTICATED');
    }
    // The untouched token still works: the refusals above were about the forgery.
    expect((await tg.call('POST', '/v1/query', { key: real, body })).json.meta.credits).toBe(0);
  });
});
