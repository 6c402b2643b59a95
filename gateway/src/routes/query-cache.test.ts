// The result cache on the query path: MISS then HIT with the same data and ETag, 304 on a
// matching If-None-Match, `Cache-Control: no-cache` bypass, normalised params (a default spelled
// out hits the same entry), concurrent misses coalesced into one warehouse query, a new version
// never served an old answer, an owner's purge (here and, through the change log, from another
// instance), and every cached call metered like any other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { periodOf } from '../money/billing-period.js';
import { createTestGateway, type SignedUp, type TestGateway, withQueries } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;

beforeAll(async () => {
  tg = await createTestGateway();
  alice = await tg.signUp('Alice');
});
afterAll(async () => {
  await tg?.close();
});

const top = (params: Record<string, unknown>, headers?: Record<string, string>) =>
  tg.call('POST', '/v1/query', {
    key: alice.key,
    body: { source: 'top-products', params },
    ...(headers ? { headers } : {}),
  });
const counter = () => tg.gateway.services.money.usage.counter(alice.accountId, periodOf(new Date()));

/**
 * The gateway's app with warehouse queries counted, each starting only once `gate` opens (the
 * connector stops at once on a signal that has already fired).
 */
function countingApp(gate: Promise<void>) {
  const { services } = tg.gateway;
  let executions = 0;
  const app = createApp(
    withQueries(services, {
      ...services.queries,
      async execute(...args) {
        executions += 1;
        await gate;
        return services.queries.execute(...args);
      },
    }),
  );
  return {
    executions: () => executions,
    send: (params: Record<string, unknown>, signal?: AbortSignal) =>
      app.request('/v1/query', {
        method: 'POST',
        headers: { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'top-products', params }),
        ...(signal ? { signal } : {}),
      }),
  };
}

describe('result cache', () => {
  it('serves a repeat from the cache with the same data and ETag, and meters it', async () => {
    const before = await counter();
    const miss = await top({ category: 'Garden', limit: 3 });
    expect(miss.status).toBe(200);
    expect(miss.headers.get('x-cache')).toBe('MISS');
    expect(miss.json.meta.cached).toBe(false);
    const etag = miss.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const hit = await top({ limit: 3, category: 'Garden' });
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(hit.json.meta.cached).toBe(true);
    expect(hit.headers.get('etag')).toBe(etag);
    expect(hit.json.results).toEqual(miss.json.results);
    expect(hit.json.insights).toEqual(miss.json.insights);
    expect(hit.json.meta.request_id).toBe(hit.headers.get('x-request-id'));
    expect(hit.json.meta.request_id).not.toBe(miss.json.meta.request_id);
    expect(hit.json.meta.row_count).toBe(3);
    // A cached call is charged like any other.
    expect(await counter()).toBe(before + 2);
  });

  it('answers 304 to a matching If-None-Match (still a served, metered call)', async () => {
    const first = await top({ category: 'Toys' });
    const etag = first.headers.get('etag') as string;
    const before = await counter();
    const notModified = await top({ category: 'Toys' }, { 'if-none-match': `W/${etag}, "other"` });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.get('etag')).toBe(etag);
    expect(await counter()).toBe(before + 1);
    const changed = await top({ category: 'Toys' }, { 'if-none-match': '"something-else"' });
    expect(changed.status).toBe(200);
  });

  it('treats a default spelled out as the same request', async () => {
    await top({ category: 'Books' });
    const spelled = await top({ category: 'Books', limit: 10 });
    expect(spelled.headers.get('x-cache')).toBe('HIT');
  });

  it('bypasses the cache on Cache-Control: no-cache', async () => {
    await top({ category: 'Sports' });
    const bypass = await top({ category: 'Sports' }, { 'cache-control': 'no-cache' });
    expect(bypass.headers.get('x-cache')).toBe('MISS');
    expect(bypass.json.meta.cached).toBe(false);
  });

  it('coalesces concurrent misses into one warehouse query', async () => {
    const counted = countingApp(Promise.resolve());
    const send = () => counted.send({ category: 'Grocery', limit: 7 });
    const responses = await Promise.all(Array.from({ length: 50 }, send));
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(counted.executions()).toBe(1);
    const outcomes = responses.map((r) => r.headers.get('x-cache'));
    expect(outcomes.filter((o) => o === 'MISS').length).toBeGreaterThanOrEqual(1);
  });

  it('answers the callers still waiting when the one whose miss started the query hangs up', async () => {
    let release!: () => void;
    const counted = countingApp(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const send = (signal?: AbortSignal) => counted.send({ category: 'Sports', limit: 4 }, signal);
    const before = await counter();
    const leader = new AbortController();
    const first = send(leader.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const others = [send(), send()];
    await new Promise((resolve) => setTimeout(resolve, 50));
    leader.abort();
    release();
    const answers = await Promise.all(others);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(counted.executions()).toBe(1);
    // The caller that left is not charged; the two answered are.
    expect((await first).status).toBe(504);
    expect(await counter()).toBe(before + 2);
  });

  it("never serves an old version's answer after an update", async () => {
    const base = {
      connection: 'demo',
      sql: 'SELECT :n AS n',
      params: { n: { type: 'integer', required: true } },
      cache: { ttl: 300 },
      price: 1,
      visibility: 'public',
    };
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: { name: 'cache-versions', ...base },
    });
    expect(created.status, created.text).toBe(201);
    const q = () =>
      tg.call('POST', '/v1/query', { key: alice.key, body: { source: 'cache-versions', params: { n: 1 } } });
    expect((await q()).json.meta.version).toBe(1);
    expect((await q()).headers.get('x-cache')).toBe('HIT');
    const { resultCache } = tg.gateway.services;
    const entries = resultCache.stats().entries;
    const updated = await tg.call('PATCH', '/v1/owner/analytics/cache-versions', {
      key: tg.ownerKey,
      body: { ...base, sql: 'SELECT :n + 1 AS n' },
    });
    expect(updated.status, updated.text).toBe(200);
    const after = await q();
    expect(after.headers.get('x-cache')).toBe('MISS');
    expect(after.json.meta.version).toBe(2);
    expect(after.json.results).toEqual([{ n: 2 }]);
    // Version 1's answer is gone from the cache, not left to age out: one entry out, one in.
    expect(resultCache.stats().entries).toBe(entries);
    // The change feed's echo of this update (polled every 200 ms here) drops nothing more.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await q()).headers.get('x-cache')).toBe('HIT');
  });

  it("drops an analytic's cached answers when its owner asks, and no other analytic's", async () => {
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: tg.ownerKey,
      body: {
        name: 'cache-purge',
        connection: 'demo',
        sql: 'SELECT :n AS n',
        params: { n: { type: 'integer', required: true } },
        cache: { ttl: 300 },
        visibility: 'public',
      },
    });
    expect(created.status, created.text).toBe(201);
    const q = (n: number) =>
      tg.call('POST', '/v1/query', { key: alice.key, body: { source: 'cache-purge', params: { n } } });
    for (const n of [1, 2]) await q(n);
    expect((await q(1)).headers.get('x-cache')).toBe('HIT');
    await top({ category: 'Books', limit: 4 });
    expect((await top({ category: 'Books', limit: 4 })).headers.get('x-cache')).toBe('HIT');

    // Not the caller's analytic: refused as if it did not exist, and nothing is dropped.
    const foreign = await tg.call('DELETE', '/v1/owner/analytics/cache-purge/cache', { key: alice.key });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('NOT_FOUND');
    expect((await q(1)).headers.get('x-cache')).toBe('HIT');

    const purged = await tg.call('DELETE', '/v1/owner/analytics/cache-purge/cache', { key: tg.ownerKey });
    expect(purged.status, purged.text).toBe(204);
    // The purge was dropped here at once, and is in the change log for the other instances: this
    // instance's feed reading it back drops it again, so that echo is read before the refill.
    await tg.gateway.pollChanges();
    const [one, two] = [await q(1), await q(2)];
    expect([one.headers.get('x-cache'), two.headers.get('x-cache')]).toEqual(['MISS', 'MISS']);
    expect(one.json.results).toEqual([{ n: 1 }]);
    expect((await q(1)).headers.get('x-cache')).toBe('HIT');
    expect((await top({ category: 'Books', limit: 4 })).headers.get('x-cache')).toBe('HIT');

    // Another instance's purge reaches this one through the change log (polled every 200 ms here).
    const { id } = (await tg.call('GET', '/v1/owner/analytics/cache-purge', { key: tg.ownerKey })).json
      .analytic;
    await tg.gateway.services.store.changes.append('analytic_cache', id);
    const started = performance.now();
    let outcome: string | null = 'HIT';
    while (outcome === 'HIT' && performance.now() - started < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      outcome = (await q(1)).headers.get('x-cache');
    }
    expect(outcome).toBe('MISS');
    expect((await q(2)).headers.get('x-cache')).toBe('MISS');
  });
});
