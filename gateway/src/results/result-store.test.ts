// The result store on a real temp folder: rows written as JSON lines and read back by page
// from any byte offset, the byte cap with least-recently-used eviction, a result too large to
// fit alone refused, expiry, and the cursors that point into it.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { createResultCursors } from './result-cursor.js';
import { createResultStore, type ResultStore } from './result-store.js';

let dir: string;
let clock: number;
const stores: ResultStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-result-store-'));
  clock = 1_000_000;
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function storeOf(maxBytes: number, ttlMs = 60_000): Promise<ResultStore> {
  const store = await createResultStore({ dir, maxBytes, ttlMs, now: () => clock });
  stores.push(store);
  return store;
}

const columns = [
  { name: 'id', type: 'integer' as const },
  { name: 'name', type: 'string' as const },
];
const rowsOf = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: from + i, name: `n,"${from + i}"\nx` }));

async function written(store: ResultStore, total: number, accountId = 'acc_1') {
  const spool = store.spool({ accountId, source: 'rows', version: 3 });
  spool.columns(columns);
  for (let at = 0; at < total; at += 1_000) await spool.rows(rowsOf(at, Math.min(1_000, total - at)));
  return spool.finish({ columns, rowCount: total, truncated: false, durationMs: 1 });
}

describe('result store', () => {
  it('reads every row once, in order, page by page from byte offsets', async () => {
    const store = await storeOf(64 * 1024 * 1024);
    const snapshot = await written(store, 25_003);
    expect(snapshot).toMatchObject({ rowCount: 25_003, source: 'rows', version: 3, accountId: 'acc_1' });
    let offset = 0;
    let seen = 0;
    while (seen < snapshot.rowCount) {
      const page = await store.readRows(snapshot, offset, 7_000);
      expect(page).toBeDefined();
      for (const line of page?.lines ?? [])
        expect(JSON.parse(line)).toEqual({ id: seen, name: `n,"${seen++}"\nx` });
      offset = page?.end ?? 0;
    }
    expect(seen).toBe(25_003);
    expect(offset).toBe(snapshot.bytes);
  });

  it('evicts the least recently used results to make room, and refuses one larger than the cap', async () => {
    const store = await storeOf(3 * 1024 * 1024);
    // ~1.4 MB each: two fit under 3 MiB, a third does not.
    const first = await written(store, 40_000);
    const second = await written(store, 40_000);
    // Reading the first makes the second the least recently used.
    expect(store.get(first.id)).toBeDefined();
    const third = await written(store, 40_000);
    expect(store.get(second.id)).toBeUndefined();
    expect(store.get(first.id)).toBeDefined();
    expect(store.get(third.id)).toBeDefined();
    expect(store.bytes()).toBeLessThanOrEqual(3 * 1024 * 1024);
    const spool = store.spool({ accountId: 'acc_1', source: 'rows', version: 1 });
    spool.columns(columns);
    let refused: unknown;
    try {
      for (let at = 0; at < 100_000; at += 1_000) await spool.rows(rowsOf(at, 1_000));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('RESULT_TOO_LARGE');
    await spool.discard();
    expect(store.bytes()).toBeLessThanOrEqual(3 * 1024 * 1024);
    // Only finished results are left on disk.
    const [own] = await readdir(dir);
    expect((await readdir(join(dir, own as string))).length).toBe(
      [first, second, third].filter((s) => store.get(s.id) !== undefined).length,
    );
  });

  it('forgets a result once its time is up', async () => {
    const store = await storeOf(64 * 1024 * 1024, 10_000);
    const snapshot = await written(store, 10);
    clock += 9_999;
    expect(store.get(snapshot.id)).toBeDefined();
    clock += 2;
    expect(store.get(snapshot.id)).toBeUndefined();
    expect(store.bytes()).toBe(0);
  });
});

describe('result cursors', () => {
  const cursors = createResultCursors('instance-a');
  const state = { snapshot: 'snap', accountId: 'acc_1', row: 10_000, byte: 123_456, pageSize: 10_000 };

  it('round-trips for its account only', () => {
    const cursor = cursors.encode(state);
    expect(cursors.decode(cursor, 'acc_1')).toEqual(state);
    expect(() => cursors.decode(cursor, 'acc_2')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });

  it('refuses an altered cursor, and one another process made', () => {
    const cursor = cursors.encode(state);
    const [instance, payload, mac] = cursor.split('.') as [string, string, string];
    const moved = Buffer.from(JSON.stringify(['snap', 'acc_1', 0, 0, 10_000])).toString('base64url');
    expect(() => cursors.decode(`${instance}.${moved}.${mac}`, 'acc_1')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
    expect(() => cursors.decode('garbage', 'acc_1')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
    // The same instance name in another process (a restart): its key differs.
    expect(() => createResultCursors('instance-a').decode(cursor, 'acc_1')).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
    expect(() => createResultCursors('instance-b').decode(`${instance}.${payload}.${mac}`, 'acc_1')).toThrow(
      expect.objectContaining({ code: 'CURSOR_EXPIRED' }),
    );
  });
});
