// How the gateway's Redis clients for limits (the rate limiter, the failed-call window) connect:
// fail fast, never queue, and reconnect within about a second, so a Redis outage turns into the
// in-memory fallback at once and a returning Redis is used again soon.
import type { RedisOptions } from 'ioredis';

export function fastFailRedisOptions(commandTimeoutMs = 500): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    // A Redis that accepts the connection and says nothing must not hold a connect for ioredis's
    // default 10 s.
    connectTimeout: Math.max(1_000, commandTimeoutMs),
    // ioredis backs off up to 5 s by default; cap it so a returning Redis is seen within ~1 s.
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
}
