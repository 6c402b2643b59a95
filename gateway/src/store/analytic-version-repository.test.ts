// Versions callers pin (issue 31), on both store backends: each version keeps the price schedule
// it was deployed with (a later rise of the analytic never reaches it); a deploy drops versions
// past QUARRY_MAX_VERSIONS_KEPT only when nothing keeps them (a live pin, a call by version in the
// last 30 days, a sunset ahead); owners deprecate superseded versions only, with a sunset ahead.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import { DEFAULT_ACCOUNT_LIMITS } from './account-limits.js';
import { createAnalyticRepository } from './analytic-repository.js';
import { createAnalyticVersionRepository } from './analytic-version-repository.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';

const backends = await storeBackends('analytic versions', 'quarry_versions');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function newAccount(sql: SqlClient): Promise<string> {
  const id = `acct_${randomBytes(6).toString('hex')}`;
  await sql.query('INSERT INTO accounts (id, email, name) VALUES ($1, $2, $3)', [
    id,
    `${id}@example.com`,
    'V',
  ]);
  return id;
}

const definition = (n: number, price: number) => ({ connection: 'c', sql: `SELECT ${n} AS v`, price });

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isStoreError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`analytic versions on ${backend.name}`, () => {
    let sql: SqlClient;
    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
    }, 120_000);
    afterAll(() => backend.teardown());

    it('a version keeps the price schedule it was deployed with', async () => {
      const owner = await newAccount(sql);
      const analytics = createAnalyticRepository(sql);
      const name = `priced-${randomBytes(3).toString('hex')}`;
      const now = Date.now();
      await analytics.create({ accountId: owner, name, definition: definition(1, 2) });
      // A rise with a week's notice: version 2 pays 2 until then, 5 after; version 1 stays at 2.
      await analytics.update(owner, name, {
        definition: definition(2, 5),
        priceNoticeMs: 7 * DAY,
        nowMs: now,
      });
      // A decrease applies at once to the current version (3) only.
      await analytics.update(owner, name, {
        definition: definition(3, 1),
        priceNoticeMs: 7 * DAY,
        nowMs: now,
      });
      expect((await analytics.get(name))?.pricing).toEqual({ price: 1 });
      expect((await analytics.get(name, { version: 1 }))?.pricing).toEqual({ price: 2 });
      expect((await analytics.get(name, { version: 2 }))?.pricing).toEqual({
        price: 2,
        nextPrice: 5,
        nextPriceAt: now + 7 * DAY,
      });
      const listed = await analytics.listVersions(owner, name);
      expect(listed.map((v) => [v.version, v.pricing.price, v.deprecation])).toEqual([
        [1, 2, undefined],
        [2, 2, undefined],
        [3, 1, undefined],
      ]);
      // A version from before migration 024 (no price of its own) pays the analytic's schedule.
      await sql.query(
        'UPDATE analytic_versions SET price = NULL, next_price = NULL, next_price_at = NULL WHERE version = 1 AND analytic_id = (SELECT id FROM analytics WHERE name = $1)',
        [name],
      );
      expect((await analytics.get(name, { version: 1 }))?.pricing).toEqual({ price: 1 });
    });

    it('a deploy keeps pinned, lately called and not yet sunset versions past the bound, and only them', async () => {
      const owner = await newAccount(sql);
      const caller = await newAccount(sql);
      const analytics = createAnalyticRepository(sql, { ...DEFAULT_ACCOUNT_LIMITS, versionsKept: 1 });
      const versions = createAnalyticVersionRepository(sql);
      const name = `kept-${randomBytes(3).toString('hex')}`;
      const t0 = Date.now();
      const kept = async () => (await analytics.listVersions(owner, name)).map((v) => v.version);
      const deploy = (n: number, at: number) =>
        analytics.update(owner, name, { definition: definition(n, 1), nowMs: at });

      const created = await analytics.create({ accountId: owner, name, definition: definition(1, 1) });
      await versions.pin({
        name,
        version: 1,
        ref: 'token-a',
        accountId: caller,
        expiresAt: new Date(t0 + HOUR),
      });
      // Pinning again with the same ref extends the pin, never shortens it.
      await versions.pin({
        name,
        version: 1,
        ref: 'token-a',
        accountId: caller,
        expiresAt: new Date(t0 + 60_000),
      });
      await deploy(2, t0);
      expect(await kept()).toEqual([1, 2]);
      await versions.recordCalls([
        { analyticId: created.id, version: 2, accountId: caller, at: new Date(t0) },
      ]);
      await deploy(3, t0);
      expect(await kept()).toEqual([1, 2, 3]);
      await versions.deprecate(owner, name, 2, new Date(t0 + 40 * DAY), t0);
      // 31 days on: the pin expired (version 1 goes), version 2's last call is too old but its
      // sunset is ahead (kept), version 3 was never called by version (goes).
      await deploy(4, t0 + 31 * DAY);
      expect(await kept()).toEqual([2, 4]);
      const [pins] = await sql.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM analytic_version_pins WHERE analytic_id = $1',
        [created.id],
      );
      expect(pins?.n).toBe(0);
      // Past the sunset nothing keeps version 2.
      await deploy(5, t0 + 41 * DAY);
      expect(await kept()).toEqual([5]);
      expect(
        await refusal(
          versions.pin({ name, version: 2, ref: 't', accountId: caller, expiresAt: new Date(t0 + HOUR) }),
        ),
      ).toBe('NOT_FOUND');
    });

    it('owners deprecate superseded versions with a sunset ahead; callers see the deprecations they use', async () => {
      const owner = await newAccount(sql);
      const stranger = await newAccount(sql);
      const analytics = createAnalyticRepository(sql);
      const versions = createAnalyticVersionRepository(sql);
      const name = `dep-${randomBytes(3).toString('hex')}`;
      const now = Date.now();
      const created = await analytics.create({ accountId: owner, name, definition: definition(1, 1) });
      expect(await refusal(versions.deprecate(owner, name, 1, new Date(now + DAY), now))).toBe('CONFLICT');
      await analytics.update(owner, name, { definition: definition(2, 1) });
      expect(await refusal(versions.deprecate(owner, name, 1, new Date(now - 1), now))).toBe('INVALID');
      expect(await refusal(versions.deprecate(owner, name, 1, new Date(now + 400 * DAY), now))).toBe(
        'INVALID',
      );
      expect(await refusal(versions.deprecate(owner, name, 9, new Date(now + DAY), now))).toBe('NOT_FOUND');
      expect(await refusal(versions.deprecate(stranger, name, 1, new Date(now + DAY), now))).toBe(
        'NOT_FOUND',
      );

      const first = await versions.deprecate(owner, name, 1, new Date(now + DAY), now);
      expect(first).toEqual({
        name,
        version: 1,
        currentVersion: 2,
        deprecatedAt: new Date(now),
        sunsetAt: new Date(now + DAY),
      });
      // Moving the sunset keeps the first deprecation date.
      const moved = await versions.deprecate(owner, name, 1, new Date(now + 2 * DAY), now + HOUR);
      expect(moved.deprecatedAt).toEqual(new Date(now));
      expect(moved.sunsetAt).toEqual(new Date(now + 2 * DAY));
      expect((await analytics.get(name, { version: 1 }))?.deprecation).toEqual({
        deprecatedAt: new Date(now),
        sunsetAt: new Date(now + 2 * DAY),
      });
      expect(await versions.deprecationsOf(name)).toEqual([moved]);

      // The stranger called version 1 by version: its usage lists the deprecation.
      expect(await versions.deprecatedCalledBy(stranger, now)).toEqual([]);
      await versions.recordCalls([
        { analyticId: created.id, version: 1, accountId: stranger, at: new Date(now) },
      ]);
      expect(await versions.deprecatedCalledBy(stranger, now)).toEqual([
        { ...moved, lastCalledAt: new Date(now) },
      ]);
      expect(await versions.deprecatedCalledBy(stranger, now + 31 * DAY)).toEqual([]);

      await versions.undeprecate(owner, name, 1);
      expect(await versions.deprecationsOf(name)).toEqual([]);
      expect((await analytics.get(name, { version: 1 }))?.deprecation).toBeUndefined();
    });
  });
}
