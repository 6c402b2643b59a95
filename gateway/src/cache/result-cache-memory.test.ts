// The cache's byte bound holds for the process, not just on paper: many distinct keys through a
// small cache leave memory near the bound. Separate file so its GC and timing stay apart from
// the behaviour tests.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { answerOf, createResultCache } from './result-cache.js';

const MiB = 1024 * 1024;

// global.gc is only there under --expose-gc; this flag flip is the usual way to get it at
// runtime, so the measurement is after a full collection rather than at garbage's mercy.
function collect(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

function usedBytes(): number {
  collect();
  const m = process.memoryUsage();
  // Bodies are strings on the V8 heap; arrayBuffers is counted too, should any bytes live there.
  return m.heapUsed + m.arrayBuffers;
}

describe('result cache memory', () => {
  it('keeps 200,000 distinct ~1 KiB answers through a 16 MiB cache within its bound', async () => {
    const cache = createResultCache({ maxBytes: 16 * MiB });
    const policy = { ttlSeconds: 300, staleSeconds: 30 };
    const filler = 'x'.repeat(1000);
    const start = usedBytes();
    let maxSeen = 0;
    for (let i = 0; i < 200_000; i++) {
      const key = `top-products:3::"category"string="c${i}","limit"integer=10`;
      await cache.get(key, policy, async () =>
        answerOf(`{"results":[{"c":${i},"f":"${filler}"}]}`, `"etag-${i}"`, i),
      );
      if (i % 10_000 === 0) maxSeen = Math.max(maxSeen, cache.stats().bytes);
    }
    const stats = cache.stats();
    expect(Math.max(maxSeen, stats.bytes)).toBeLessThanOrEqual(16 * MiB);
    expect(stats.misses).toBe(200_000);
    // Full: the bound is actually used, so the test measures a full cache.
    expect(stats.bytes).toBeGreaterThan(15 * MiB);
    expect(stats.entries).toBeLessThan((16 * MiB) / 1000);
    const growth = usedBytes() - start;
    console.log(
      `result cache: ${stats.entries} entries, ${(stats.bytes / MiB).toFixed(1)} MiB accounted, ${(growth / MiB).toFixed(1)} MiB heap+arrayBuffers growth`,
    );
    // The accounted bytes are the memory: growth stays within the bound plus slack for the heap
    // around it (measured: about 14 MiB for this 16 MiB cache).
    expect(growth).toBeLessThan(16 * MiB + 8 * MiB);
  });
});
