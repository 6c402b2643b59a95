// Chooses the limiter for this process: Redis (shared by every instance, with a per-instance
// memory fallback) when a Redis URL is configured, the in-process memory limiter otherwise.
import { createMemoryRateLimiter, type MemoryRateLimiterOptions } from './memory-rate-limiter.js';
import type { RateLimiter, RateLimitLogger } from './rate-limiter.js';
import { createRedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';

export interface RateLimiterConfig {
  /** `QUARRY_REDIS_URL`; absent or empty means a single instance limiting in memory. */
  readonly redisUrl?: string;
  readonly logger: RateLimitLogger;
  /** Tuning of the memory limiter (alone or as the Redis fallback). */
  readonly memory?: MemoryRateLimiterOptions;
  /** Tuning of the Redis limiter (key prefix, command timeout, probe interval). */
  readonly redis?: Omit<RedisRateLimiterOptions, 'redisUrl' | 'logger' | 'fallback'>;
}

export function createRateLimiter(config: RateLimiterConfig): RateLimiter {
  if (!config.redisUrl) {
    config.logger.info({}, 'rate limiter: in memory (single instance)');
    return createMemoryRateLimiter(config.memory);
  }
  config.logger.info({}, 'rate limiter: Redis, shared across instances');
  return createRedisRateLimiter({
    ...config.redis,
    redisUrl: config.redisUrl,
    logger: config.logger,
    ...(config.memory ? { fallback: config.memory } : {}),
  });
}
