import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './create-rate-limiter.js';
import type { RateLimitLogger } from './rate-limiter.js';

const logger: RateLimitLogger = { warn: () => {}, info: () => {} };

describe('createRateLimiter', () => {
  it('limits in memory, synchronously, when no Redis URL is configured', async () => {
    const limiter = await createRateLimiter({ logger });
    const policy = { limit: 1, windowSeconds: 60, burst: 2 };
    const first = limiter.check('k', policy);
    expect(first).not.toBeInstanceOf(Promise);
    expect(first).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.check('k', policy)).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.check('k', policy)).toMatchObject({ allowed: false });
    await limiter.close();
  });

  it('still answers, limited, when the configured Redis is unreachable', async () => {
    const warnings: string[] = [];
    const limiter = await createRateLimiter({
      redisUrl: 'redis://127.0.0.1:1',
      logger: { warn: (_o, msg) => warnings.push(msg ?? ''), info: () => {} },
    });
    const policy = { limit: 2, windowSeconds: 60, burst: 2 };
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.check('k', policy));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false]);
    // The refused connection is reported once, however many checks it affects.
    const deadline = Date.now() + 3_000;
    while (warnings.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 3; i++) await limiter.check('k', policy);
    expect(warnings).toHaveLength(1);
    await limiter.close();
  });
});
