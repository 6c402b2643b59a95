// GCRA on Redis, shared by every gateway instance: one Lua script reads the TAT, decides and
// writes it back atomically (Redis runs a script alone), using Redis's own `TIME`, so instances
// with skewed clocks still agree. ioredis `defineCommand` sends it by EVALSHA and falls back to
// EVAL on NOSCRIPT (after a Redis restart or failover). Keys carry a PX expiry equal to the time
// until their bucket is full again, so idle keys disappear on their own.
//
// Fallback: rate limiting must never turn a Redis outage into a 5xx or into "unlimited". The
// client fails fast (no offline queue, no per-request retries, a 500 ms command timeout), and any
// failure switches this instance to a per-instance memory limiter with the same policy, logged
// once. A probe PINGs Redis every second (the client itself reconnects at most 1 s apart), and
// the first success switches back, so the shared limit returns within a few seconds of Redis.
// Trade-off, accepted on purpose: while falling back each instance limits on its own, so N
// instances may admit up to N × (limit + burst) for one key; and a single slow reply (> 500 ms)
// moves one instance to memory for about a second. Both beat failing requests.

import { Redis } from 'ioredis';
import { capacityMicros, decisionFromMicros, emissionIntervalMicros } from './gcra.js';
import {
  createMemoryRateLimiter,
  type MemoryRateLimiter,
  type MemoryRateLimiterOptions,
} from './memory-rate-limiter.js';
import type { RateLimitDecision, RateLimiter, RateLimitLogger } from './rate-limiter.js';
import { fastFailRedisOptions } from './redis-options.js';

export interface RedisRateLimiterOptions {
  readonly redisUrl: string;
  readonly logger: RateLimitLogger;
  /** Prefix of every Redis key; default `quarry:rl:`. */
  readonly keyPrefix?: string;
  /** A reply slower than this counts as Redis being down; default 500 ms (50 ms timed out under load). */
  readonly commandTimeoutMs?: number;
  /** How often to probe Redis while falling back; default 1000 ms. */
  readonly probeIntervalMs?: number;
  /** Options of the per-instance fallback limiter. */
  readonly fallback?: MemoryRateLimiterOptions;
}

export interface RedisRateLimiter extends RateLimiter {
  /** Which store answers right now: `redis` (shared) or `memory` (per-instance fallback). */
  readonly backend: 'redis' | 'memory';
}

export const DEFAULT_KEY_PREFIX = 'quarry:rl:';

// Mirrors gcra.ts and memory-rate-limiter.ts; all times are integer microseconds.
// KEYS[1] the key; ARGV: emission interval, capacity (both µs), cost.
// Returns {allowed 0|1, remaining, reset µs, retry-after µs}.
const GCRA_SCRIPT = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]))
local base = now
if tat ~= nil and tat > now then base = tat end
local used = base + interval * cost - now
if used <= capacity then
  local ttl = math.ceil(used / 1000)
  if ttl < 1 then ttl = 1 end
  redis.call('SET', KEYS[1], string.format('%.0f', base + interval * cost), 'PX', ttl)
  return {1, math.floor((capacity - used) / interval), used, 0}
end
local retry = used - capacity
local remaining = math.floor((capacity - (base - now)) / interval)
if remaining < 0 then remaining = 0 end
return {0, remaining, retry, retry}
`;

type GcraReply = [number, number, number, number];

interface RedisWithGcra extends Redis {
  quarryGcra(key: string, interval: number, capacity: number, cost: number): Promise<GcraReply>;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  const { logger } = options;
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const probeIntervalMs = options.probeIntervalMs ?? 1000;
  const memory: MemoryRateLimiter = createMemoryRateLimiter(options.fallback);
  const redis = new Redis(options.redisUrl, fastFailRedisOptions(options.commandTimeoutMs)) as RedisWithGcra;
  redis.defineCommand('quarryGcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });

  let usingRedis = true;
  let everReady = false;
  let fallbacks = 0;
  let closed = false;
  let probeTimer: NodeJS.Timeout | undefined;

  function fallBack(reason: unknown): void {
    if (!usingRedis || closed) return;
    usingRedis = false;
    fallbacks += 1;
    logger.warn(
      { err: reason instanceof Error ? reason.message : String(reason) },
      'rate limiter: Redis unavailable, limiting per instance until it returns',
    );
    scheduleProbe();
  }

  function scheduleProbe(): void {
    if (closed) return;
    probeTimer = setTimeout(probe, probeIntervalMs);
    probeTimer.unref();
  }

  function probe(): void {
    probeTimer = undefined;
    if (closed) return;
    if (redis.status !== 'ready') {
      scheduleProbe();
      return;
    }
    redis.ping().then(
      () => {
        if (closed) return;
        usingRedis = true;
        logger.info({}, 'rate limiter: Redis is back, limits are shared again');
      },
      () => scheduleProbe(),
    );
  }

  // Connection errors arrive here (and must be listened to, or ioredis reports them as unhandled).
  redis.on('error', (error: unknown) => fallBack(error));
  redis.on('ready', () => {
    everReady = true;
  });

  return {
    check(key, policy, cost = 1) {
      if (!usingRedis || closed) return memory.check(key, policy, cost);
      if (redis.status !== 'ready') {
        // Before the first connection this is just start-up; answer locally without alarm.
        if (everReady) fallBack(new Error(`Redis connection ${redis.status}`));
        return memory.check(key, policy, cost);
      }
      const interval = emissionIntervalMicros(policy);
      return redis.quarryGcra(prefix + key, interval, capacityMicros(policy, interval), cost).then(
        ([allowed, remaining, reset, retryAfter]): RateLimitDecision =>
          decisionFromMicros(allowed === 1, policy.limit, remaining, reset, retryAfter),
        (error: unknown) => {
          fallBack(error);
          return memory.check(key, policy, cost);
        },
      );
    },
    get backend() {
      return usingRedis && !closed && redis.status === 'ready' ? 'redis' : 'memory';
    },
    state() {
      return {
        backend: 'redis',
        fallback: !(usingRedis && !closed && redis.status === 'ready'),
        fallbacks,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (probeTimer) clearTimeout(probeTimer);
      try {
        if (redis.status === 'ready') await redis.quit();
      } catch {
        // Closing anyway: a failed QUIT only means the connection is already gone.
      } finally {
        redis.disconnect();
      }
      await memory.close();
    },
  };
}
