// The failed-call window: in memory with a fake clock (the arithmetic), and through the real
// Redis (QUARRY_TEST_REDIS_URL), where two instances share one account's window.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createMemoryFailedCallWindow, waitSeconds } from './failed-call-window.js';
import { createRedisFailedCallWindow } from './redis-failed-call-window.js';

const POLICY = { budgetMs: 1_000, windowMs: 20_000 }; // 1 s a 20 s window: slots of 1 s
const REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = { warn() {}, info() {} };

describe('memory failed-call window', () => {
  it('locks an account once its failures reach the budget, until they slide out', async () => {
    let now = 1_000_000; // a slot boundary
    const window = createMemoryFailedCallWindow(POLICY, () => now);
    expect(window.lockedFor('acc_a')).toBe(0);
    await window.add('acc_a', 600);
    expect(window.lockedFor('acc_a')).toBe(0);
    now += 3_000;
    await window.add('acc_a', 500);
    // 1.1 s in the window: locked until the first failure's slot (at 1,000,000) leaves, 20 s on.
    expect(window.lockedFor('acc_a')).toBeCloseTo(17, 3);
    expect(window.lockedFor('acc_b')).toBe(0);
    now += 17_000;
    expect(window.lockedFor('acc_a')).toBe(0);
    // The second failure alone (0.5 s) stays under the budget until it leaves in turn.
    await window.add('acc_a', 500);
    expect(window.lockedFor('acc_a')).toBeCloseTo(3, 3);
  });

  it('waitSeconds ignores slots outside the window', () => {
    const slots = new Map([
      [10, 5_000],
      [40, 200],
    ]);
    expect(waitSeconds(slots, 40_500, POLICY)).toBe(0);
  });
});

async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const redisUp = await redisReachable();
if (!redisUp)
  console.warn(
    `\n!!! Redis at ${REDIS_URL} is unreachable: the Redis failed-call window test is SKIPPED !!!\n`,
  );

describe.runIf(redisUp || process.env.CI === 'true')('Redis failed-call window', () => {
  it('two instances share an account’s failures', async () => {
    const keyPrefix = `quarry:failed:test:${process.pid}:${Date.now()}:`;
    const one = createRedisFailedCallWindow({ redisUrl: REDIS_URL, policy: POLICY, logger, keyPrefix });
    const two = createRedisFailedCallWindow({ redisUrl: REDIS_URL, policy: POLICY, logger, keyPrefix });
    try {
      // Both connect at once; until then each would count in memory alone.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await one.add('acc_shared', 700);
      expect(await two.lockedFor('acc_shared')).toBe(0);
      await two.add('acc_shared', 400);
      const wait = await one.lockedFor('acc_shared');
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(20);
      expect(await two.lockedFor('acc_other')).toBe(0);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
