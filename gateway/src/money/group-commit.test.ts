// Group commit: callers of one turn share a write, later callers queue for the next, a write's
// per-item errors stay with their items, and a batch that fails as a whole is retried item by
// item so that only the bad item fails.
import { describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.js';

/** A writer that records its batches and lets the test decide when each write finishes. */
function gatedWriter(outcome: (item: number) => number | Error = (item) => item * 10) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  let inFlight = 0;
  let peak = 0;
  return {
    batches,
    peak: () => peak,
    release() {
      for (const open of gates.splice(0)) open();
    },
    async write(items: readonly number[]) {
      batches.push([...items]);
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((resolve) => gates.push(resolve));
      inFlight--;
      return items.map(outcome);
    },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('group commit', () => {
  it('writes the callers of one turn together and queues later ones for the next batch', async () => {
    const writer = gatedWriter();
    const group = createGroupCommit<number, number>({ write: (items) => writer.write(items) });
    const first = [1, 2, 3].map((i) => group.submit(i));
    await turn();
    const second = [4, 5].map((i) => group.submit(i));
    await turn();
    expect(writer.batches).toEqual([[1, 2, 3]]);
    writer.release();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    await turn();
    expect(writer.batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    writer.release();
    expect(await Promise.all(second)).toEqual([40, 50]);
    await group.drain();
    expect(group.stats()).toMatchObject({ items: 5, writes: 2, queued: 0, maxBatch: 3 });
  });

  it('keeps at most maxInFlight writes running and caps batches at maxBatch', async () => {
    const writer = gatedWriter();
    const group = createGroupCommit<number, number>({
      write: (items) => writer.write(items),
      maxBatch: 2,
      maxInFlight: 2,
    });
    const all = Array.from({ length: 7 }, (_, i) => group.submit(i));
    for (let i = 0; i < 6; i++) {
      await turn();
      writer.release();
    }
    await Promise.all(all);
    expect(writer.peak()).toBe(2);
    expect(writer.batches.every((b) => b.length <= 2)).toBe(true);
    expect(writer.batches.flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('starts a write beside the one in flight only once overlapAt items wait', async () => {
    const writer = gatedWriter();
    const group = createGroupCommit<number, number>({
      write: (items) => writer.write(items),
      maxInFlight: 2,
      overlapAt: 3,
    });
    const first = group.submit(0);
    await turn();
    expect(writer.batches).toEqual([[0]]);
    // Two wait: below the threshold, they wait for the write in flight.
    const few = [1, 2].map((i) => group.submit(i));
    await turn();
    expect(writer.batches).toEqual([[0]]);
    // A third: now a second write starts beside the first, with all three.
    const third = group.submit(3);
    await turn();
    expect(writer.batches).toEqual([[0], [1, 2, 3]]);
    expect(writer.peak()).toBe(2);
    writer.release();
    expect(await Promise.all([first, ...few, third])).toEqual([0, 10, 20, 30]);
    // Below the threshold again, the next items go as soon as nothing is in flight.
    const later = [4, 5].map((i) => group.submit(i));
    await turn();
    expect(writer.batches).toEqual([[0], [1, 2, 3], [4, 5]]);
    writer.release();
    expect(await Promise.all(later)).toEqual([40, 50]);
    await group.drain();
    expect(group.stats()).toMatchObject({ items: 6, writes: 3, queued: 0 });
  });

  it('lets fewer than overlapAt items go beside a write that has run overlapAfterMs', async () => {
    const writer = gatedWriter();
    const group = createGroupCommit<number, number>({
      write: (items) => writer.write(items),
      maxInFlight: 2,
      overlapAt: 100,
      overlapAfterMs: 40,
    });
    const first = group.submit(0);
    await turn();
    const waiting = [1, 2].map((i) => group.submit(i));
    await turn();
    // Far below overlapAt and the write in flight is young: they wait.
    expect(writer.batches).toEqual([[0]]);
    // Nothing else arrives; once the first write is overdue they go on their own.
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(writer.batches).toEqual([[0], [1, 2]]);
    expect(writer.peak()).toBe(2);
    // Another item now waits behind two writes in flight: maxInFlight still holds.
    const third = group.submit(3);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(writer.batches).toHaveLength(2);
    writer.release();
    expect(await Promise.all([first, ...waiting])).toEqual([0, 10, 20]);
    await turn();
    expect(writer.batches).toEqual([[0], [1, 2], [3]]);
    writer.release();
    expect(await third).toBe(30);
    await group.drain();
    expect(group.stats()).toMatchObject({ items: 4, writes: 3, queued: 0 });
  });

  it('rejects only the item whose outcome is an Error', async () => {
    const group = createGroupCommit<number, number>({
      write: async (items) => items.map((i) => (i === 2 ? new RangeError('two is refused') : i)),
    });
    const results = await Promise.allSettled([1, 2, 3].map((i) => group.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(RangeError);
  });

  it('retries a batch that failed as a whole item by item, so only the bad item fails', async () => {
    const writes: number[][] = [];
    const group = createGroupCommit<number, number>({
      write: async (items) => {
        writes.push([...items]);
        if (items.includes(13)) throw new Error('constraint violated');
        return items.map((i) => i);
      },
    });
    const results = await Promise.allSettled([12, 13, 14].map((i) => group.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(writes).toEqual([[12, 13, 14], [12], [13], [14]]);
  });

  it('drain waits for every submitted item', async () => {
    const writer = gatedWriter();
    const group = createGroupCommit<number, number>({ write: (items) => writer.write(items) });
    let settled = 0;
    for (const i of [1, 2]) void group.submit(i).then(() => settled++);
    const drained = group.drain().then(() => settled);
    await turn();
    writer.release();
    expect(await drained).toBe(2);
  });

  it('fails a batch together, without retrying item by item, when splitOnFailure says no', async () => {
    const down = new Error('store down');
    let writes = 0;
    const commit = createGroupCommit<number, number>({
      write: async () => {
        writes++;
        throw down;
      },
      splitOnFailure: (error) => error !== down,
    });
    const results = await Promise.allSettled([commit.submit(1), commit.submit(2), commit.submit(3)]);
    expect(results.map((r) => (r.status === 'rejected' ? r.reason : r.value))).toEqual([down, down, down]);
    expect(writes).toBe(1);
  });
});
