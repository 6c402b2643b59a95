import { describe, expect, it } from 'vitest';
import { cacheKeyPrefix } from './cache-key.js';
import { type Answer, answerOf, type CachePolicy, createResultCache } from './result-cache.js';

const FIVE_MIN: CachePolicy = { ttlSeconds: 300, staleSeconds: 0 };
const WITH_STALE: CachePolicy = { ttlSeconds: 60, staleSeconds: 30 };

function answer(text: string, storedAt = 0): Answer {
  return answerOf(JSON.stringify({ results: [text] }), `"${text}"`, storedAt);
}

/** A load that waits for `gate`, remembering the signal it ran with. */
function gatedLoad() {
  const gate = deferred<Answer>();
  let seen: AbortSignal | undefined;
  const load = (signal: AbortSignal) => {
    seen = signal;
    return gate.promise;
  };
  return { gate, load, signal: () => seen };
}

function fakeClock(start = 1_700_000_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number): void => {
      t += ms;
    },
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('createResultCache', () => {
  it('serves a stored answer as a HIT without loading again', async () => {
    const cache = createResultCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return answer('EU');
    };
    const first = await cache.get('k', FIVE_MIN, load);
    const second = await cache.get('k', FIVE_MIN, load);
    expect(first.outcome).toBe('MISS');
    expect(second.outcome).toBe('HIT');
    expect(second.answer.body).toBe('{"results":["EU"]}');
    expect(second.answer.etag).toBe('"EU"');
    expect(loads).toBe(1);
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1, stale: 0 });
  });

  it('returns the very same stored result object on every hit', async () => {
    const cache = createResultCache();
    await cache.get('k', FIVE_MIN, async () => answer('EU'));
    const a = await cache.get('k', FIVE_MIN, async () => answer('other'));
    const b = await cache.get('k', FIVE_MIN, async () => answer('other'));
    expect(a).toBe(b);
    expect(a.answer.body).toBe(b.answer.body);
  });

  it('runs load exactly once for 1,000 concurrent misses of one key', async () => {
    const cache = createResultCache();
    const gate = deferred<Answer>();
    let loads = 0;
    const load = () => {
      loads++;
      return gate.promise;
    };
    const pending = Array.from({ length: 1000 }, () => cache.get('cold', FIVE_MIN, load));
    gate.resolve(answer('once'));
    const results = await Promise.all(pending);
    expect(loads).toBe(1);
    expect(new Set(results.map((r) => r.answer.body))).toEqual(new Set(['{"results":["once"]}']));
    expect(results.every((r) => r.outcome === 'MISS')).toBe(true);
    expect((await cache.get('cold', FIVE_MIN, load)).outcome).toBe('HIT');
    expect(loads).toBe(1);
  });

  it('keeps a coalesced load running for the callers left when the one that started it leaves', async () => {
    const cache = createResultCache();
    const { gate, load, signal: loadSignal } = gatedLoad();
    const leader = new AbortController();
    const follower = new AbortController();
    const first = cache.get('k', FIVE_MIN, load, { signal: leader.signal });
    const second = cache.get('k', FIVE_MIN, load, { signal: follower.signal });
    leader.abort();
    // The one that left stops waiting at once, as its own query would have stopped.
    await expect(first).rejects.toMatchObject({ code: 'QUERY_ABORTED' });
    expect(loadSignal()?.aborted).toBe(false);
    gate.resolve(answer('kept'));
    expect((await second).answer.body).toBe('{"results":["kept"]}');
    expect((await cache.get('k', FIVE_MIN, load)).outcome).toBe('HIT');
  });

  it('cancels a load once every caller waiting on it has left, and a later caller loads afresh', async () => {
    const cache = createResultCache();
    const signals: AbortSignal[] = [];
    const gates: ReturnType<typeof deferred<Answer>>[] = [];
    const load = (signal: AbortSignal) => {
      signals.push(signal);
      const gate = deferred<Answer>();
      gates.push(gate);
      signal.addEventListener('abort', () => gate.reject(new Error('cancelled')));
      return gate.promise;
    };
    const callers = [new AbortController(), new AbortController()];
    const waiting = callers.map((c) =>
      cache.get('k', FIVE_MIN, load, { signal: c.signal }).catch((error: unknown) => error),
    );
    await new Promise((resolve) => setImmediate(resolve));
    callers[0]?.abort();
    expect(signals[0]?.aborted).toBe(false);
    callers[1]?.abort();
    expect(signals[0]?.aborted).toBe(true);
    for (const w of waiting) expect(await w).toMatchObject({ code: 'QUERY_ABORTED' });
    // A caller arriving now does not join the cancelled load.
    const later = cache.get('k', FIVE_MIN, load);
    await new Promise((resolve) => setImmediate(resolve));
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(false);
    gates[1]?.resolve(answer('again'));
    expect((await later).answer.body).toBe('{"results":["again"]}');
  });

  it('never cancels a load a caller without a signal waits on', async () => {
    const cache = createResultCache();
    const { gate, load, signal: loadSignal } = gatedLoad();
    const leaving = new AbortController();
    const staying = cache.get('k', FIVE_MIN, load);
    const left = cache.get('k', FIVE_MIN, load, { signal: leaving.signal });
    leaving.abort();
    await expect(left).rejects.toMatchObject({ code: 'QUERY_ABORTED' });
    expect(loadSignal()?.aborted).toBe(false);
    gate.resolve(answer('stayed'));
    expect((await staying).outcome).toBe('MISS');
  });

  it('skips the stored answer on refresh, and stores the fresh one for later hits', async () => {
    const cache = createResultCache();
    await cache.get('k', FIVE_MIN, async () => answer('old'));
    const fresh = await cache.get('k', FIVE_MIN, async () => answer('new'), { refresh: true });
    expect(fresh).toMatchObject({ outcome: 'MISS', answer: { etag: '"new"' } });
    expect(await cache.get('k', FIVE_MIN, async () => answer('x'))).toMatchObject({
      outcome: 'HIT',
      answer: { etag: '"new"' },
    });
  });

  it('keeps different keys apart', async () => {
    const cache = createResultCache();
    await cache.get('a', FIVE_MIN, async () => answer('A'));
    const b = await cache.get('b', FIVE_MIN, async () => answer('B'));
    expect(b.outcome).toBe('MISS');
    expect((await cache.get('a', FIVE_MIN, async () => answer('x'))).answer.etag).toBe('"A"');
  });

  it('rejects every coalesced caller with the same error and caches nothing', async () => {
    const cache = createResultCache();
    const gate = deferred<Answer>();
    const failure = new Error('warehouse down');
    const pending = Array.from({ length: 10 }, () => cache.get('k', FIVE_MIN, () => gate.promise));
    gate.reject(failure);
    const settled = await Promise.allSettled(pending);
    expect(settled.every((s) => s.status === 'rejected' && s.reason === failure)).toBe(true);
    expect(cache.stats().entries).toBe(0);
    const retry = await cache.get('k', FIVE_MIN, async () => answer('back'));
    expect(retry.outcome).toBe('MISS');
    expect(retry.answer.etag).toBe('"back"');
  });

  it('treats a load that throws synchronously like a failed load', async () => {
    const cache = createResultCache();
    const load = (): Promise<Answer> => {
      throw new Error('bad template');
    };
    await expect(cache.get('k', FIVE_MIN, load)).rejects.toThrow('bad template');
    expect(cache.stats().entries).toBe(0);
  });

  it('expires an answer after its TTL when there is no stale window', async () => {
    const clock = fakeClock();
    const cache = createResultCache({ now: clock.now });
    await cache.get('k', FIVE_MIN, async () => answer('old'));
    clock.advance(299_999);
    expect((await cache.get('k', FIVE_MIN, async () => answer('new'))).outcome).toBe('HIT');
    clock.advance(1);
    const after = await cache.get('k', FIVE_MIN, async () => answer('new'));
    expect(after.outcome).toBe('MISS');
    expect(after.answer.etag).toBe('"new"');
  });

  it('serves STALE within the stale window while one background load refreshes it', async () => {
    const clock = fakeClock();
    const cache = createResultCache({ now: clock.now });
    await cache.get('k', WITH_STALE, async () => answer('v1'));
    clock.advance(61_000);
    const gate = deferred<Answer>();
    let refreshes = 0;
    const refresh = () => {
      refreshes++;
      return gate.promise;
    };
    const during = await Promise.all(Array.from({ length: 5 }, () => cache.get('k', WITH_STALE, refresh)));
    expect(during.every((r) => r.outcome === 'STALE' && r.answer.etag === '"v1"')).toBe(true);
    expect(refreshes).toBe(1);
    gate.resolve(answer('v2'));
    await gate.promise;
    await new Promise((r) => setImmediate(r));
    const after = await cache.get('k', WITH_STALE, refresh);
    expect(after).toMatchObject({ outcome: 'HIT', answer: { etag: '"v2"' } });
    expect(refreshes).toBe(1);
    expect(cache.stats().stale).toBe(5);
  });

  it('is a MISS once both the TTL and the stale window have passed', async () => {
    const clock = fakeClock();
    const cache = createResultCache({ now: clock.now });
    await cache.get('k', WITH_STALE, async () => answer('v1'));
    clock.advance(90_000);
    const result = await cache.get('k', WITH_STALE, async () => answer('v2'));
    expect(result).toMatchObject({ outcome: 'MISS', answer: { etag: '"v2"' } });
  });

  it('keeps serving the stale answer when a refresh fails, and reports the failure', async () => {
    const clock = fakeClock();
    const failures: unknown[] = [];
    const cache = createResultCache({ now: clock.now, onRefreshError: (_key, e) => failures.push(e) });
    await cache.get('k', WITH_STALE, async () => answer('v1'));
    clock.advance(70_000);
    const boom = new Error('timeout');
    const first = await cache.get('k', WITH_STALE, async () => {
      throw boom;
    });
    expect(first.outcome).toBe('STALE');
    await new Promise((r) => setImmediate(r));
    expect(failures).toEqual([boom]);
    const second = await cache.get('k', WITH_STALE, async () => answer('v2'));
    expect(second).toMatchObject({ outcome: 'STALE', answer: { etag: '"v1"' } });
    await new Promise((r) => setImmediate(r));
    expect(await cache.get('k', WITH_STALE, async () => answer('v3'))).toMatchObject({
      outcome: 'HIT',
      answer: { etag: '"v2"' },
    });
  });

  it('delete(prefix) drops only that analytic version, including a load still in flight', async () => {
    const cache = createResultCache();
    const v1 = cacheKeyPrefix('sales', 1);
    await cache.get(`${v1}:a`, FIVE_MIN, async () => answer('s1a'));
    await cache.get(`${cacheKeyPrefix('sales', 2)}:a`, FIVE_MIN, async () => answer('s2a'));
    await cache.get(`${cacheKeyPrefix('sales-eu', 1)}:a`, FIVE_MIN, async () => answer('eu'));
    const gate = deferred<Answer>();
    const inFlight = cache.get(`${v1}:b`, FIVE_MIN, () => gate.promise);
    cache.delete(v1);
    gate.resolve(answer('s1b-old'));
    expect((await inFlight).answer.etag).toBe('"s1b-old"');
    expect(cache.stats().entries).toBe(2);
    expect((await cache.get(`${v1}:a`, FIVE_MIN, async () => answer('s1a-new'))).outcome).toBe('MISS');
    expect((await cache.get(`${v1}:b`, FIVE_MIN, async () => answer('s1b-new'))).answer.etag).toBe(
      '"s1b-new"',
    );
    expect(
      (await cache.get(`${cacheKeyPrefix('sales', 2)}:a`, FIVE_MIN, async () => answer('x'))).outcome,
    ).toBe('HIT');
    expect(
      (await cache.get(`${cacheKeyPrefix('sales-eu', 1)}:a`, FIVE_MIN, async () => answer('x'))).outcome,
    ).toBe('HIT');
  });

  it('stores nothing for a policy with no TTL and no stale window, but still coalesces', async () => {
    const cache = createResultCache();
    const gate = deferred<Answer>();
    let loads = 0;
    const none: CachePolicy = { ttlSeconds: 0, staleSeconds: 0 };
    const pending = [1, 2, 3].map(() =>
      cache.get('k', none, () => {
        loads++;
        return gate.promise;
      }),
    );
    gate.resolve(answer('x'));
    await Promise.all(pending);
    expect(loads).toBe(1);
    expect(cache.stats().entries).toBe(0);
    expect((await cache.get('k', none, async () => answer('y'))).outcome).toBe('MISS');
  });

  it('stays within its byte bound, evicting the least recently used', async () => {
    const cache = createResultCache({ maxBytes: 20_000 });
    for (let i = 0; i < 100; i++) {
      await cache.get(`k${i}`, FIVE_MIN, async () => answer('x'.repeat(1000)));
      expect(cache.stats().bytes).toBeLessThanOrEqual(20_000);
    }
    const { entries, evictions, maxBytes } = cache.stats();
    expect(entries).toBeGreaterThan(5);
    expect(entries).toBeLessThan(20);
    expect(maxBytes).toBe(20_000);
    // Every answer stored and not kept was evicted for room.
    expect(evictions).toBe(100 - entries);
    expect((await cache.get('k99', FIVE_MIN, async () => answer('y'))).outcome).toBe('HIT');
    expect((await cache.get('k0', FIVE_MIN, async () => answer('y'))).outcome).toBe('MISS');
  });

  it('counts only evictions for room as evictions, not expiry, a purge or a refresh', async () => {
    const clock = fakeClock();
    const cache = createResultCache({ now: clock.now });
    await cache.get('a', FIVE_MIN, async () => answer('a'));
    await cache.get('b', FIVE_MIN, async () => answer('b'));
    await cache.get('a', FIVE_MIN, async () => answer('a2'), { refresh: true });
    cache.delete('b');
    clock.advance(301_000);
    expect((await cache.get('a', FIVE_MIN, async () => answer('a3'))).outcome).toBe('MISS');
    expect(cache.stats()).toMatchObject({ entries: 1, evictions: 0, hits: 0, misses: 4 });
  });

  it('returns an answer larger than the whole cache without storing it', async () => {
    const cache = createResultCache({ maxBytes: 10_000 });
    await cache.get('small', FIVE_MIN, async () => answer('s'));
    const big = await cache.get('big', FIVE_MIN, async () => answer('x'.repeat(20_000)));
    expect(big.answer.body.length).toBeGreaterThan(20_000);
    expect((await cache.get('big', FIVE_MIN, async () => answer('y'))).outcome).toBe('MISS');
    expect((await cache.get('small', FIVE_MIN, async () => answer('y'))).outcome).toBe('HIT');
  });

  it('stores a body as one flat string with its UTF-8 length', async () => {
    const cache = createResultCache();
    // Built from pieces, as storedAnswer builds it: the stored copy is the same text.
    const text = `${'{"results":[{"region":"Zürich €"}]'.slice(0, -1)}]}`;
    await cache.get('k', FIVE_MIN, async () => answerOf(text, '"e"', 1));
    const hit = await cache.get('k', FIVE_MIN, async () => answer('y'));
    expect(hit.outcome).toBe('HIT');
    expect(hit.answer.body).toBe(text);
    expect(hit.answer.bodyBytes).toBe(Buffer.byteLength(text));
    expect(hit.answer.bodyBytes).toBe(text.length + 1 + 2);
    expect(hit.answer.storedAt).toBe(1);
  });

  it('charges a non-ASCII body two bytes a character, as V8 may store it', async () => {
    const ascii = createResultCache({ maxBytes: 1_000_000 });
    const wide = createResultCache({ maxBytes: 1_000_000 });
    await ascii.get('k', FIVE_MIN, async () => answerOf('a'.repeat(10_000), '"e"', 1));
    await wide.get('k', FIVE_MIN, async () => answerOf(`€${'a'.repeat(9_999)}`, '"e"', 1));
    expect(wide.stats().bytes - ascii.stats().bytes).toBe(10_000);
  });
});
