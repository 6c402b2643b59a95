// The password-hash limiter: never more hashes at once than its concurrency, the rest in order
// behind them up to the queue's bound, and past it an immediate 429 with a retry hint.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { createHashLimiter } from './hash-limiter.js';

/** A hash that finishes when the test says so. */
function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('password-hash limiter', () => {
  it('never runs more hashes at once than its concurrency, and runs the waiting ones in arrival order', async () => {
    const limiter = createHashLimiter({ concurrency: 2, queue: 10 });
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const gates = Array.from({ length: 6 }, gate);
    const calls = gates.map((g, i) =>
      limiter.run(async () => {
        started.push(i);
        running += 1;
        peak = Math.max(peak, running);
        await g.done;
        running -= 1;
        return i;
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(limiter.stats()).toEqual({ inFlight: 2, queued: 4, refused: 0 });
    // Finishing out of order still hands the slots to the oldest waiters first.
    gates[1]?.finish();
    await tick();
    gates[0]?.finish();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.finish();
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
    expect(limiter.stats()).toEqual({ inFlight: 0, queued: 0, refused: 0 });
  });

  it('refuses at once past the queue with 429 RATE_LIMIT_EXCEEDED and a retry hint, and admits again once there is room', async () => {
    const limiter = createHashLimiter({ concurrency: 1, queue: 2 });
    const g = gate();
    const admitted = [1, 2, 3].map(() => limiter.run(() => g.done));
    const startedAt = performance.now();
    const refusal = await limiter.run(() => Promise.resolve()).catch((error: unknown) => error);
    expect(performance.now() - startedAt).toBeLessThan(50);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 1 });
    expect(() => limiter.refuseIfFull()).toThrow(ApiError);
    expect(limiter.stats()).toEqual({ inFlight: 1, queued: 2, refused: 2 });
    g.finish();
    await Promise.all(admitted);
    expect(() => limiter.refuseIfFull()).not.toThrow();
    await expect(limiter.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('frees the slot of a hash that fails', async () => {
    const limiter = createHashLimiter({ concurrency: 1, queue: 0 });
    await expect(limiter.run(() => Promise.reject(new Error('scrypt failed')))).rejects.toThrow(
      'scrypt failed',
    );
    await expect(limiter.run(async () => 'next')).resolves.toBe('next');
    expect(limiter.stats().inFlight).toBe(0);
  });
});
