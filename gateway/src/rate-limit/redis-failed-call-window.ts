// The failed-call window (failed-call-window.ts) shared by every instance through Redis: one hash
// per account, a field per slot holding its ms, expiring a window after the last failure. Reading
// it is one HGETALL; a call of an account with no failures finds nothing. When Redis does not
// answer, this instance counts on its own (the memory window) rather than fail a call.

import { Redis } from 'ioredis';
import {
  createMemoryFailedCallWindow,
  type FailedCallWindow,
  type FailedCallWindowPolicy,
  SLOTS,
  slotOf,
  waitSeconds,
} from './failed-call-window.js';
import type { RateLimitLogger } from './rate-limiter.js';
import { fastFailRedisOptions } from './redis-options.js';

export interface RedisFailedCallWindowOptions {
  readonly redisUrl: string;
  readonly policy: FailedCallWindowPolicy;
  readonly logger: RateLimitLogger;
  /** Key prefix (default `quarry:failed:`). */
  readonly keyPrefix?: string;
  readonly commandTimeoutMs?: number;
}

export function createRedisFailedCallWindow(options: RedisFailedCallWindowOptions): FailedCallWindow {
  const { policy, logger } = options;
  const prefix = options.keyPrefix ?? 'quarry:failed:';
  const memory = createMemoryFailedCallWindow(policy);
  const redis = new Redis(options.redisUrl, fastFailRedisOptions(options.commandTimeoutMs));
  let warned = false;
  const degrade = (error: unknown) => {
    if (warned) return;
    warned = true;
    logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'failed-call window: Redis unavailable, counting per instance until it returns',
    );
  };
  redis.on('error', degrade);
  redis.on('ready', () => {
    warned = false;
  });
  const ttlMs = policy.windowMs + Math.ceil(policy.windowMs / SLOTS);

  return {
    async lockedFor(accountId) {
      if (redis.status !== 'ready') return memory.lockedFor(accountId);
      try {
        const fields = await redis.hgetall(prefix + accountId);
        const slots = new Map<number, number>();
        for (const slot in fields) slots.set(Number(slot), Number(fields[slot]));
        if (slots.size === 0) return 0;
        const now = Date.now();
        const stale = [...slots.keys()].filter((slot) => slot <= slotOf(now, policy) - SLOTS);
        if (stale.length > 0) void redis.hdel(prefix + accountId, ...stale.map(String)).catch(degrade);
        return waitSeconds(slots, now, policy);
      } catch (error) {
        degrade(error);
        return memory.lockedFor(accountId);
      }
    },
    async add(accountId, ms) {
      const key = prefix + accountId;
      try {
        if (redis.status !== 'ready') throw new Error(`Redis is ${redis.status}`);
        await redis
          .multi()
          .hincrby(key, String(slotOf(Date.now(), policy)), Math.round(ms))
          .pexpire(key, ttlMs)
          .exec();
      } catch (error) {
        degrade(error);
        await memory.add(accountId, ms);
      }
    },
    async close() {
      redis.disconnect();
      await memory.close();
    },
  };
}
