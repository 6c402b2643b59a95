// The webhook outbox on both store backends: an event is written once per dedupe key, with a
// delivery for each enabled endpoint subscribed to its type; concurrent claims never hand one
// delivery to two instances; a lapsed lease is taken over and the late holder's record is
// ignored; rotation keeps the previous secret during the overlap; key.expiring is written once.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../security/api-key.js';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from './control-plane-store.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';
import { createWebhookRepository } from './webhook-repository.js';

const backends = await storeBackends('webhook outbox', 'quarry_webhooks');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');
const OK = { statusCode: 200, error: null, latencyMs: 1, delivered: true, retryAt: null } as const;

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`webhook outbox on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = createControlPlaneStore(sql, { secretBox });
    });
    afterAll(() => backend.teardown());

    const newAccount = () => store.accounts.create({ email: `w-${unique()}@example.com`, name: 'w' });
    const endpoint = (accountId: string, eventTypes: string[] = []) =>
      store.webhooks.create({
        accountId,
        url: 'https://example.com/hook',
        description: '',
        eventTypes,
        secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
      });

    it('writes an event once per dedupe key, to the subscribed and enabled endpoints only', async () => {
      const account = await newAccount();
      const all = await endpoint(account.id);
      const usage = await endpoint(account.id, ['usage.threshold']);
      const other = await endpoint(account.id, ['payout.paid']);
      const off = await endpoint(account.id);
      await store.webhooks.update(account.id, off.id, { enabled: false });
      const event = {
        accountId: account.id,
        type: 'usage.threshold',
        data: { a: 1 },
        dedupeKey: `t-${unique()}`,
      };
      const id = await store.webhooks.emit(event);
      expect(id).toMatch(/^msg_/);
      expect(await store.webhooks.emit(event)).toBeUndefined();
      const rows = await sql.query<{ endpoint_id: string }>(
        'SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1',
        [id],
      );
      expect(new Set(rows.map((r) => r.endpoint_id))).toEqual(new Set([all.id, usage.id]));
      expect(rows.map((r) => r.endpoint_id)).not.toContain(other.id);
      // Written in a transaction that rolls back: no event, no delivery.
      await sql
        .transaction(async (tx) => {
          await store.webhooks.emit(
            { accountId: account.id, type: 'quota.exhausted', data: {}, dedupeKey: 'rb' },
            tx,
          );
          throw new Error('rolled back');
        })
        .catch(() => {});
      expect(await sql.query("SELECT 1 FROM webhook_events WHERE dedupe_key = 'rb'")).toHaveLength(0);
      // Drain what this test queued, for the claim tests below.
      for (
        let c = await store.webhooks.claim('drain', 100, 60_000);
        c.length > 0;
        c = await store.webhooks.claim('drain', 100, 60_000)
      ) {
        for (const d of c) await store.webhooks.record(d, 'drain', OK);
      }
    });

    it('two instances claiming at once never get the same delivery; a lapsed lease is taken over', async () => {
      const account = await newAccount();
      await endpoint(account.id);
      for (let i = 0; i < 40; i++)
        await store.webhooks.emit({ accountId: account.id, type: 'webhook.test', data: { i } });
      const other = createWebhookRepository(await backend.pool(sql), secretBox);
      const [a, b] = await Promise.all([store.webhooks.claim('a', 30, 60_000), other.claim('b', 30, 60_000)]);
      const ids = [...a, ...b].map((d) => d.id);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      // Nothing is due while the leases hold.
      expect(await store.webhooks.claim('c', 100, 60_000)).toHaveLength(0);
      for (const d of b) await other.record(d, 'b', OK);
      // `a` stops; its leases lapse and `c` takes them over as a second attempt.
      await sql.query(
        "UPDATE webhook_deliveries SET lease_until = now() - interval '1 second' WHERE leased_by = 'a'",
      );
      const taken = await store.webhooks.claim('c', 100, 60_000);
      expect(taken.map((d) => d.id).sort()).toEqual(a.map((d) => d.id).sort());
      expect(taken.every((d) => d.attempt === 2)).toBe(true);
      // The late holder's record changes nothing; the new holder's does.
      const first = a[0] as (typeof a)[number];
      await store.webhooks.record(first, 'a', OK);
      const [row] = await sql.query<{ status: string }>(
        'SELECT status FROM webhook_deliveries WHERE id = $1',
        [first.id],
      );
      expect(row?.status).toBe('pending');
      for (const d of taken) await store.webhooks.record(d, 'c', OK);
      const [done] = await sql.query<{ n: number }>(
        "SELECT count(*)::integer AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.account_id = $1 AND d.status = 'delivered'",
        [account.id],
      );
      expect(Number(done?.n)).toBe(40);
    });

    // Two sessions at once: PGlite runs one transaction at a time, so the race exists only here.
    if (backend.name === 'postgres') {
      it('an event written while its account is deleted (or its endpoint removed) is never sent', async () => {
        for (const end of ['account closed', 'endpoint removed'] as const) {
          const account = await newAccount();
          const e = await endpoint(account.id);
          // The event is written in a transaction that is still open while the deletion runs,
          // as when a call served on another instance writes it.
          let wrote!: () => void;
          const written = new Promise<void>((resolve) => {
            wrote = resolve;
          });
          let deletion: Promise<unknown> | undefined;
          await sql.transaction(async (tx) => {
            await store.webhooks.emit({ accountId: account.id, type: 'webhook.test', data: { end } }, tx);
            wrote();
            deletion = written.then(
              (): Promise<unknown> =>
                end === 'account closed'
                  ? store.closures.close(account.id)
                  : store.webhooks.remove(account.id, e.id),
            );
            // Long enough for a deletion that does not wait for this transaction to finish first.
            await new Promise((r) => setTimeout(r, 300));
          });
          await deletion;
          const [pending] = await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
            [e.id],
          );
          expect(pending?.n, end).toBe(0);
          const claimed = await store.webhooks.claim(`i-${unique()}`, 100, 60_000);
          expect(
            claimed.filter((c) => c.endpointId === e.id),
            end,
          ).toEqual([]);
        }
        // A delivery left pending for an endpoint deleted by hand (or by an older build) is not
        // handed out either.
        const account = await newAccount();
        const e = await endpoint(account.id);
        await store.webhooks.emit({ accountId: account.id, type: 'webhook.test', data: {} });
        await sql.query('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [e.id]);
        const claimed = await store.webhooks.claim(`i-${unique()}`, 100, 60_000);
        expect(claimed.filter((c) => c.endpointId === e.id)).toEqual([]);
      });
    }

    it('a rotated secret signs with the previous one too until the overlap ends', async () => {
      const account = await newAccount();
      const e = await endpoint(account.id);
      await store.webhooks.rotate(
        account.id,
        e.id,
        'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3',
        new Date(Date.now() + 60_000),
      );
      await store.webhooks.emit({ accountId: account.id, type: 'webhook.test', data: {}, endpointId: e.id });
      const [claimed] = (await store.webhooks.claim('r', 100, 60_000)).filter((d) => d.endpointId === e.id);
      expect(claimed?.secrets).toEqual({
        current: 'whsec_bmV3bmV3bmV3bmV3bmV3bmV3bmV3bmV3',
        previous: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0',
      });
      await store.webhooks.record(claimed as NonNullable<typeof claimed>, 'r', OK);
      await store.webhooks.rotate(
        account.id,
        e.id,
        'whsec_dGhpcmR0aGlyZHRoaXJkdGhpcmR0aGly',
        new Date(Date.now() - 1),
      );
      await store.webhooks.emit({ accountId: account.id, type: 'webhook.test', data: {}, endpointId: e.id });
      const [later] = (await store.webhooks.claim('r', 100, 60_000)).filter((d) => d.endpointId === e.id);
      expect(later?.secrets).toEqual({ current: 'whsec_dGhpcmR0aGlyZHRoaXJkdGhpcmR0aGly' });
      // The secrets are sealed at rest.
      const [stored] = await sql.query<{ secrets: Buffer }>(
        'SELECT secrets FROM webhook_endpoints WHERE id = $1',
        [e.id],
      );
      expect(Buffer.from(stored?.secrets ?? []).toString('latin1')).not.toContain('whsec_');
    });

    it('writes listing.price_scheduled with the deploy that raises a price, to the owner', async () => {
      const owner = await newAccount();
      await store.analytics.create({
        accountId: owner.id,
        name: `priced-${unique()}`,
        definition: { sql: 'SELECT 1', params: {}, price: 1 },
        visibility: 'public',
      });
      const [analytic] = await store.analytics.listByOwner(owner.id);
      const name = analytic?.name as string;
      await store.analytics.update(owner.id, name, {
        definition: { sql: 'SELECT 1', params: {}, price: 5 },
        price: 5,
        priceNoticeMs: 86_400_000,
      });
      // A deploy that changes nothing about the schedule writes nothing more.
      await store.analytics.update(owner.id, name, {
        definition: { sql: 'SELECT 2', params: {}, price: 5 },
        price: 5,
        priceNoticeMs: 86_400_000,
      });
      const events = await sql.query<{ payload: Record<string, unknown> }>(
        "SELECT payload FROM webhook_events WHERE type = 'listing.price_scheduled' AND account_id = $1",
        [owner.id],
      );
      expect(events.map((e) => e.payload)).toEqual([
        expect.objectContaining({ analytic: name, price: 1, next_price: 5 }),
      ]);
    });

    it('writes key.expiring once for a key that expires within the notice', async () => {
      const account = await newAccount();
      const generated = generateApiKey('live');
      const key = await store.keys.create({
        accountId: account.id,
        name: 'soon',
        prefix: generated.prefix,
        digest: generated.digest,
        scopes: ['query'],
        expiresAt: new Date(Date.now() + 3 * 86_400_000),
      });
      const week = 7 * 86_400_000;
      expect(await store.webhooks.announceExpiringKeys(week)).toBeGreaterThanOrEqual(1);
      await store.webhooks.announceExpiringKeys(week);
      const events = await sql.query<{ payload: { key_id: string } }>(
        "SELECT payload FROM webhook_events WHERE type = 'key.expiring' AND account_id = $1",
        [account.id],
      );
      expect(events.map((e) => e.payload.key_id)).toEqual([key.id]);
    });
  });
}
