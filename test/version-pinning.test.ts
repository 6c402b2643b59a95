// Version pinning (issue 31, item 3), against a real gateway process on the real Postgres store:
// a caller pinning `name@3` keeps getting version 3 after version 4 deploys (POST /v1/query on the
// node:http fast path, GET /v1/analytics/name@3 on the Hono app), at the price version 3 was
// called at, from its own cache entries; a version it calls outlives QUARRY_MAX_VERSIONS_KEPT=1.
// Once the owner deprecates it, its answers carry `Deprecation` (RFC 9745) and `Sunset`
// (RFC 8594), the owner's versions, the listing and the caller's usage say so, and after the
// sunset a call is refused with 410 VERSION_SUNSET naming the current version, uncharged.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createQuarryClient, NotFoundError } from '@quarry/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { connectTestPostgres, expectStatus, signUp, type TestAccount } from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const NAME = `pinned-${suffix}`;
/** A 3.6 s price notice: long enough to see a rise pending, short enough to see it apply. */
const NOTICE_MS = 3600;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(pgUp)('version pinning', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let owner: TestAccount;
  let caller: TestAccount;

  const deploy = async (n: number, price: number) =>
    expectStatus(
      await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${NAME}`, {
        key: owner.key,
        json: {
          connection: 'pg',
          sql: `SELECT ${n} AS v, now() AS at`,
          price,
          visibility: 'public',
          cache: { ttl: 300 },
        },
      }),
      200,
      `deploy version ${n}`,
    ).body.analytic;
  const post = (source: string) =>
    http.request(gateway.url, 'POST', '/v1/query', { key: caller.key, json: { source, params: {} } });
  const get = (source: string) =>
    http.request(gateway.url, 'GET', `/v1/analytics/${source}`, { key: caller.key });
  const creditsUsed = async () =>
    expectStatus(
      await http.request(gateway.url, 'GET', '/v1/account/usage', { key: caller.key }),
      200,
      'usage',
    ).body.totals.credits_used as number;
  const keptVersions = async () =>
    (
      expectStatus(
        await http.request(gateway.url, 'GET', `/v1/owner/analytics/${NAME}/versions`, { key: owner.key }),
        200,
        'versions',
      ).body.versions as { version: number }[]
    ).map((v) => v.version);
  const deprecate = (version: number, sunset: string) =>
    http.request(gateway.url, 'PUT', `/v1/owner/analytics/${NAME}/versions/${version}/deprecation`, {
      key: owner.key,
      json: { sunset },
    });

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_pinning_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
        QUARRY_FREE_CREDITS: '1000',
        QUARRY_MAX_VERSIONS_KEPT: '1',
        QUARRY_PRICE_NOTICE_HOURS: String(NOTICE_MS / 3_600_000),
      },
    });
    owner = await signUp(http, gateway, 'owner', `pinning-${suffix}`);
    caller = await signUp(http, gateway, 'caller', `pinning-${suffix}`);
    await connectTestPostgres(http, gateway, owner.key, 'pg');
    for (const n of [1, 2, 3]) await deploy(n, 2);
    expectStatus(
      await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${NAME}/listing`, {
        key: owner.key,
        json: {},
      }),
      200,
      'publish',
    );
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 30_000);

  it('a pinned call keeps answering version 3 after version 4 deploys, at the price it was called at', async () => {
    // Versions 1 and 2 were never called by version: QUARRY_MAX_VERSIONS_KEPT=1 dropped them.
    expect(await keptVersions()).toEqual([3]);
    const before = expectStatus(await post(`${NAME}@3`), 200, 'pinned call before');
    expect(before.body.results[0].v).toBe(3);
    expect(before.body.meta).toMatchObject({ version: 3, credits: 2 });
    expect(before.headers.get('deprecation')).toBeNull();
    // The pinned call is recorded (after the answer, at most hourly): wait for the row.
    for (let i = 0; i < 50; i++) {
      const rows = await withPg((c) =>
        c.query(
          `SELECT 1 FROM ${store.schema}.analytic_version_calls WHERE version = 3 AND account_id = $1`,
          [caller.id],
        ),
      );
      if (rows.rowCount) break;
      await sleep(100);
    }

    // Version 4 raises the price to 5 (a notice of 3.6 s) and changes the SQL.
    const v4 = await deploy(4, 5);
    expect(v4).toMatchObject({ version: 4, price: 2, scheduled_price: 5 });
    // Version 3 was called by version, so it is kept past the bound of 1.
    expect(await keptVersions()).toEqual([3, 4]);

    const used = await creditsUsed();
    const pinned = expectStatus(await post(`${NAME}@3`), 200, 'pinned call after v4');
    expect(pinned.body.results[0].v).toBe(3);
    expect(pinned.body.meta).toMatchObject({ version: 3, credits: 2, cached: true });
    expect(pinned.body.meta.next_price).toBeUndefined();
    expect(pinned.body.results[0].at).toBe(before.body.results[0].at);
    const viaGet = expectStatus(await get(`${NAME}@3`), 200, 'pinned GET');
    expect(viaGet.body.results[0].v).toBe(3);
    expect(viaGet.body.meta.version).toBe(3);
    const current = expectStatus(await post(NAME), 200, 'current call');
    expect(current.body.results[0].v).toBe(4);
    expect(current.body.meta).toMatchObject({ version: 4, credits: 2, next_price: 5, cached: false });
    expect(await creditsUsed()).toBe(used + 6);

    // After the notice, the current version pays 5; version 3 still 2.
    await sleep(NOTICE_MS + 200);
    expect(expectStatus(await post(NAME), 200, 'current after notice').body.meta).toMatchObject({
      version: 4,
      credits: 5,
    });
    expect(expectStatus(await post(`${NAME}@3`), 200, 'pinned after notice').body.meta).toMatchObject({
      version: 3,
      credits: 2,
    });
    expect(expectStatus(await post(`${NAME}@4`), 200, 'v4 pinned').body.meta).toMatchObject({
      version: 4,
      credits: 5,
    });
    expect(await creditsUsed()).toBe(used + 6 + 12);
  }, 60_000);

  it('a malformed pin is 400, an unknown version 404 naming the current one, a hidden analytic 404 alike', async () => {
    const used = await creditsUsed();
    for (const source of [`${NAME}@x`, `${NAME}@0`, `${NAME}@`, `${NAME}@3@3`, `${NAME}@-1`]) {
      const refused = await post(source);
      expectErrorEnvelope(refused, 400, 'INVALID_REQUEST');
      expect(refused.body.error.message).toContain('name@N');
    }
    expectErrorEnvelope(await get(`${NAME}@x`), 400, 'INVALID_REQUEST');
    for (const response of [await post(`${NAME}@1`), await get(`${NAME}@99`)]) {
      expectErrorEnvelope(response, 404, 'SOURCE_NOT_FOUND');
      expect(response.body.error.message).toContain('current version is 4');
    }
    expectErrorEnvelope(await post(`no-such-${suffix}@1`), 404, 'SOURCE_NOT_FOUND');
    // A private analytic's versions say nothing to a stranger: the same answer as no analytic.
    const hidden = `hidden-${suffix}`;
    expectStatus(
      await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${hidden}`, {
        key: owner.key,
        json: { connection: 'pg', sql: 'SELECT 1 AS v' },
      }),
      200,
      'deploy hidden',
    );
    const stranger = await post(`${hidden}@1`);
    expectErrorEnvelope(stranger, 404, 'SOURCE_NOT_FOUND');
    expect(stranger.body.error.message).not.toContain('version');
    expect(await creditsUsed()).toBe(used);
  }, 30_000);

  it('the TypeScript client pins a version as a plain source, on both query routes', async () => {
    const client = createQuarryClient({ baseUrl: gateway.url, apiKey: caller.key }, { timeoutMs: 15_000 });
    const posted = await client.query<{ v: number }>(`${NAME}@3`);
    expect(posted.results[0]?.v).toBe(3);
    expect(posted.meta.version).toBe(3);
    // GET /v1/analytics/{name}: the client escapes `@` as %40 in the path, the gateway reads it back.
    const got = await client.analytics.get<{ v: number }>(`${NAME}@3`);
    expect(got.results[0]?.v).toBe(3);
    expect(got.meta.version).toBe(3);
    expect((await client.query<{ v: number }>(NAME)).meta.version).toBe(4);
    await expect(client.query(`${NAME}@1`)).rejects.toBeInstanceOf(NotFoundError);
  }, 30_000);

  it('a deprecated version carries Deprecation and Sunset, is listed to owner and callers, and is refused after its sunset', async () => {
    expectErrorEnvelope(await deprecate(4, new Date(Date.now() + 86_400_000).toISOString()), 409, 'CONFLICT');
    expectErrorEnvelope(
      await deprecate(3, new Date(Date.now() - 1000).toISOString()),
      400,
      'INVALID_REQUEST',
    );
    expectErrorEnvelope(
      await deprecate(3, new Date(Date.now() + 400 * 86_400_000).toISOString()),
      400,
      'INVALID_REQUEST',
    );
    expectErrorEnvelope(await deprecate(3, 'next week'), 400, 'INVALID_REQUEST');
    expectErrorEnvelope(
      await deprecate(2, new Date(Date.now() + 86_400_000).toISOString()),
      404,
      'NOT_FOUND',
    );

    // Whole seconds: the headers carry no more.
    const sunsetMs = (Math.floor(Date.now() / 1000) + 8) * 1000;
    const deprecated = expectStatus(await deprecate(3, new Date(sunsetMs).toISOString()), 200, 'deprecate');
    const deprecatedAt = Date.parse(deprecated.body.deprecated_version.deprecated_at);
    expect(deprecated.body.deprecated_version).toMatchObject({
      analytic: NAME,
      version: 3,
      current_version: 4,
      sunset: new Date(sunsetMs).toISOString(),
    });

    for (const response of [await post(`${NAME}@3`), await get(`${NAME}@3`)]) {
      expectStatus(response, 200, 'deprecated call');
      expect(response.body.meta.version).toBe(3);
      expect(response.headers.get('deprecation')).toBe(`@${Math.floor(deprecatedAt / 1000)}`);
      expect(response.headers.get('sunset')).toBe(new Date(sunsetMs).toUTCString());
      expect(Date.parse(response.headers.get('sunset') ?? '')).toBe(sunsetMs);
    }
    // The current version carries neither.
    const current = expectStatus(await post(NAME), 200, 'current');
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('sunset')).toBeNull();

    const versions = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/owner/analytics/${NAME}/versions`, { key: owner.key }),
      200,
      'owner versions',
    ).body.versions;
    expect(
      versions.map((v: { version: number; deprecation: unknown }) => [v.version, v.deprecation]),
    ).toEqual([
      [3, { deprecated_at: new Date(deprecatedAt).toISOString(), sunset: new Date(sunsetMs).toISOString() }],
      [4, null],
    ]);
    expect(versions[0]).toMatchObject({ price: 2, scheduled_price: null });
    expect(versions[1]).toMatchObject({ price: 5 });
    // The CLI's versions table shows each version's price and sunset.
    const home = await mkdtemp(join(tmpdir(), 'quarry-e2e-pinning-cli-'));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'), 'analytics', 'versions', NAME],
        {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: home,
            XDG_CONFIG_HOME: home,
            QUARRY_URL: gateway.url,
            QUARRY_API_KEY: owner.key,
          },
        },
      );
      // The header, its rule, then one row per version.
      const rows = stdout.trim().split('\n');
      expect(rows[0]).toMatch(/version\s+price\s+sunset\s+created\s+sql/);
      expect(rows).toHaveLength(4);
      expect(rows[2]).toMatch(
        new RegExp(`^\\s*3\\s+2\\s+${new Date(sunsetMs).toISOString().replace(/\./g, '\\.')}\\s`),
      );
      expect(rows[3]).toMatch(/^\s*4\s+5\s+\S+Z\s+SELECT 4/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
    const listing = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/marketplace/listings/${NAME}`, {}),
      200,
      'listing',
    ).body;
    expect(listing.deprecated_versions).toEqual([deprecated.body.deprecated_version]);
    const usage = expectStatus(
      await http.request(gateway.url, 'GET', '/v1/account/usage', { key: caller.key }),
      200,
      'usage',
    ).body;
    expect(usage.deprecated_versions).toEqual([deprecated.body.deprecated_version]);

    // Past the sunset: refused, naming the current version, nothing charged.
    await sleep(Math.max(0, sunsetMs - Date.now()) + 300);
    const used = await creditsUsed();
    for (const response of [await post(`${NAME}@3`), await get(`${NAME}@3`)]) {
      expectErrorEnvelope(response, 410, 'VERSION_SUNSET');
      expect(response.body.error.message).toContain('current version is 4');
      expect(response.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'current_version', value: 4 })]),
      );
    }
    const client = createQuarryClient({ baseUrl: gateway.url, apiKey: caller.key }, { timeoutMs: 15_000 });
    await expect(client.query(`${NAME}@3`)).rejects.toMatchObject({ code: 'VERSION_SUNSET', status: 410 });
    expect(await creditsUsed()).toBe(used);
    expect(expectStatus(await post(NAME), 200, 'current after sunset').body.meta.version).toBe(4);

    // Withdrawn, the version answers again, without the headers.
    expect(
      (
        await http.request(gateway.url, 'DELETE', `/v1/owner/analytics/${NAME}/versions/3/deprecation`, {
          key: owner.key,
        })
      ).status,
    ).toBe(204);
    const again = expectStatus(await post(`${NAME}@3`), 200, 'after withdrawal');
    expect(again.headers.get('deprecation')).toBeNull();
    expect(again.body.meta.version).toBe(3);
  }, 60_000);
});
