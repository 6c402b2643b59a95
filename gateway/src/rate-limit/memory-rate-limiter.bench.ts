// Micro-benchmark of the in-memory limiter's hot path (run it by hand; it is not a test):
//   npx tsx --conditions=@quarry/source gateway/src/rate-limit/memory-rate-limiter.bench.ts
// Prints ns per check for one hot key, for 10k keys round-robin, and for 200k keys (past the
// 100k LRU bound, so every check evicts).
import { createMemoryRateLimiter } from './memory-rate-limiter.js';
import type { RateLimitPolicy } from './rate-limiter.js';

const policy: RateLimitPolicy = { limit: 600, windowSeconds: 60, burst: 100 };

function measure(label: string, keyCount: number, iterations: number): void {
  const limiter = createMemoryRateLimiter();
  const keys = Array.from({ length: keyCount }, (_, i) => `key_${i}`);
  let admitted = 0;
  for (let i = 0; i < 200_000; i++) if (limiter.check(keys[i % keyCount]!, policy).allowed) admitted++;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) if (limiter.check(keys[i % keyCount]!, policy).allowed) admitted++;
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  console.log(`${label.padEnd(34)} ${ns.toFixed(0).padStart(5)} ns/check  (admitted ${admitted})`);
}

measure('1 hot key', 1, 2_000_000);
measure('10k keys round-robin', 10_000, 2_000_000);
measure('200k keys (evicting past 100k)', 200_000, 2_000_000);
