// GET /v1/account/calls: served and failed calls newest first, filters by analytic and status,
// keyset paging with the cursor, another account's calls never shown, the 30-day window, and bad
// input refused in the error envelope. calls-test-broken deploys (the warehouse accepts its SQL)
// and fails when it runs (a scalar subquery of two rows): a failed call, recorded and free.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
const aliceIds: string[] = [];
let aliceFailedId = '';
let bobId = '';

const sales = (key: string, year: number) =>
  tg.call('POST', '/v1/query', { key, body: { source: 'sales-by-region', params: { year } } });

interface Call {
  request_id: string;
  analytic: string;
  version: number | null;
  status: string;
  error_code: string | null;
  credits: number;
  latency_ms: number | null;
  origin: string | null;
  at: string;
}

async function list(key: string, query = ''): Promise<{ items: Call[]; next_cursor: string | null }> {
  const res = await tg.call('GET', `/v1/account/calls${query}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

beforeAll(async () => {
  tg = await createTestGateway();
  const res = await tg.call('PUT', '/v1/owner/analytics/calls-test-broken', {
    key: tg.ownerKey,
    body: {
      connection: 'demo',
      sql: 'SELECT (SELECT 1 UNION ALL SELECT 2) AS two_rows',
      price: 1,
      visibility: 'public',
    },
  });
  expect(res.status, res.text).toBe(200);
  alice = await tg.signUp('Alice');
  bob = await tg.signUp('Bob');
  for (const year of [2023, 2024, 2025]) {
    const ok = await sales(alice.key, year);
    expect(ok.status, ok.text).toBe(200);
    aliceIds.push(ok.headers.get('x-request-id') ?? '');
  }
  const broken = await tg.call('GET', '/v1/analytics/calls-test-broken', { key: alice.key });
  expect(broken.status, broken.text).toBe(502);
  aliceFailedId = broken.headers.get('x-request-id') ?? '';
  // Refused before any work: not stored, never listed.
  const invalid = await sales(alice.key, Number.NaN);
  expect(invalid.status).toBe(400);
  const b = await sales(bob.key, 2024);
  expect(b.status).toBe(200);
  bobId = b.headers.get('x-request-id') ?? '';
  expect([...aliceIds, aliceFailedId, bobId].every((id) => id.length > 0)).toBe(true);
});
afterAll(async () => {
  vi.useRealTimers();
  await tg?.close();
});

describe('GET /v1/account/calls', () => {
  it('lists served and failed calls newest first, with what each cost', async () => {
    const { items, next_cursor } = await list(alice.key);
    expect(next_cursor).toBeNull();
    expect(items.map((c) => c.request_id)).toEqual([aliceFailedId, ...[...aliceIds].reverse()]);
    const [failed, served] = items as [Call, Call];
    expect(failed).toMatchObject({
      analytic: 'calls-test-broken',
      version: null,
      status: 'UPSTREAM_ERROR',
      error_code: 'UPSTREAM_ERROR',
      credits: 0,
      origin: null,
    });
    expect(served).toMatchObject({
      analytic: 'sales-by-region',
      status: 'ok',
      error_code: null,
      credits: 1,
      origin: 'free',
    });
    expect(served.version).toBeGreaterThanOrEqual(1);
    expect(served.latency_ms).toBeGreaterThanOrEqual(0);
    for (const c of items) expect(Date.now() - Date.parse(c.at)).toBeLessThan(5 * 60_000);
  });

  it("never shows another account's calls", async () => {
    const mine = await list(bob.key);
    expect(mine.items.map((c) => c.request_id)).toEqual([bobId]);
    const theirs = await list(alice.key, '?limit=100');
    expect(theirs.items.map((c) => c.request_id)).not.toContain(bobId);
  });

  it('filters by status and by analytic', async () => {
    expect((await list(alice.key, '?status=ok')).items.map((c) => c.request_id)).toEqual(
      [...aliceIds].reverse(),
    );
    expect((await list(alice.key, '?status=failed')).items.map((c) => c.request_id)).toEqual([aliceFailedId]);
    expect((await list(alice.key, '?status=UPSTREAM_ERROR')).items.map((c) => c.request_id)).toEqual([
      aliceFailedId,
    ]);
    expect((await list(alice.key, '?status=QUERY_TIMEOUT')).items).toEqual([]);
    expect((await list(alice.key, '?analytic=calls-test-broken')).items.map((c) => c.request_id)).toEqual([
      aliceFailedId,
    ]);
    expect((await list(alice.key, '?analytic=sales-by-region&status=failed')).items).toEqual([]);
  });

  it('pages with the cursor, each call once, in order', async () => {
    const all = (await list(alice.key)).items.map((c) => c.request_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(alice.key, `?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.items.length).toBe(1);
      seen.push(...page.items.map((c) => c.request_id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual(all);
    const two = await list(alice.key, '?limit=2&status=ok');
    expect(two.next_cursor).not.toBeNull();
    const rest = await list(alice.key, `?limit=2&status=ok&cursor=${two.next_cursor}`);
    expect(rest).toEqual({
      items: [expect.objectContaining({ request_id: aliceIds[0] })],
      next_cursor: null,
    });
  });

  it('reaches back 30 days only', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 29 * 86_400_000 });
    try {
      expect((await list(bob.key)).items.map((c) => c.request_id)).toEqual([bobId]);
      vi.setSystemTime(Date.now() + 2 * 86_400_000);
      expect((await list(bob.key)).items).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses bad input in the error envelope', async () => {
    for (const query of [
      '?limit=0',
      '?limit=101',
      '?limit=x',
      '?status=nope',
      '?cursor=not-a-cursor',
      '?cursor=%25%25',
    ]) {
      const res = await tg.call('GET', `/v1/account/calls${query}`, { key: alice.key });
      expect(res.status, query).toBe(400);
      expect(res.json.error.code, query).toBe('INVALID_REQUEST');
    }
    const res = await tg.call('GET', '/v1/account/calls');
    expect(res.status).toBe(401);
  });
});
