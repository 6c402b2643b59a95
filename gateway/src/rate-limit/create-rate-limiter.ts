// Chooses the limiter for this process: Redis (shared by every instance, with a per-instance
// memory fallback) when a Redis URL is configured, the in-process memory limiter otherwise.
// The Redis limiter (and ioredis with it, ~8 MiB resident) is imported only when configured.
import {
  createMemoryFailedCallWindow,
  type FailedCallWindow,
  type FailedCallWindowPolicy,
} from './failed-call-window.js';
import { createMemoryRateLimiter, type MemoryRateLimiterOptions } from './memory-rate-limiter.js';
import type { RateLimiter, RateLimitLogger } from './rate-limiter.js';
import type { RedisRateLimiterOptions } from './redis-rate-limiter.js';

export interface RateLimiterConfig {
  /** `QUARRY_REDIS_URL`; absent or empty means a single instance limiting in memory. */
  readonly redisUrl?: string;
  readonly logger: RateLimitLogger;
  /** Tuning of the memory limiter (alone or as the Redis fallback). */
  readonly memory?: MemoryRateLimiterOptions;
  /** Tuning of the Redis limiter (key prefix, command timeout, probe interval). */
  readonly redis?: Omit<RedisRateLimiterOptions, 'redisUrl' | 'logger' | 'fallback'>;
}

export async function createRateLimiter(config: RateLimiterConfig): Promise<RateLimiter> {
  if (!config.redisUrl) {
    config.logger.info({}, 'rate limiter: in memory (single instance)');
    return createMemoryRateLimiter(config.memory);
  }
  config.logger.info({}, 'rate limiter: Redis, shared across instances');
  const { createRedisRateLimiter } = await import('./redis-rate-limiter.js');
  return createRedisRateLimiter({
    ...config.redis,
    redisUrl: config.redisUrl,
    logger: config.logger,
    ...(config.memory ? { fallback: config.memory } : {}),
  });
}

/** Chooses the failed-call window the same way: Redis when configured, memory otherwise. */
export async function createFailedCallWindow(config: {
  readonly redisUrl?: string;
  readonly policy: FailedCallWindowPolicy;
  readonly logger: RateLimitLogger;
  readonly commandTimeoutMs?: number;
}): Promise<FailedCallWindow> {
  if (!config.redisUrl) return createMemoryFailedCallWindow(config.policy);
  const { createRedisFailedCallWindow } = await import('./redis-failed-call-window.js');
  return createRedisFailedCallWindow({
    redisUrl: config.redisUrl,
    policy: config.policy,
    logger: config.logger,
    ...(config.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: config.commandTimeoutMs }),
  });
}
