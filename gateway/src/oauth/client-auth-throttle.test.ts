// The failed-authentication throttle over the real in-memory GCRA limiter with a test clock:
// failures (only failures) fill a client_id's bucket; once full, the client is locked out with
// the time to wait, other client_ids are not, and the lock lifts as the bucket drains.
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../rate-limit/memory-rate-limiter.js';
import { createClientAuthThrottle } from './client-auth-throttle.js';

const POLICY = { limit: 10, windowSeconds: 60, burst: 10 };
const ADDRESS = '203.0.113.7';

function setup() {
  let ms = 1_000_000;
  const limiter = createMemoryRateLimiter({ clock: () => ms });
  return {
    throttle: createClientAuthThrottle(limiter, POLICY),
    advance(seconds: number) {
      ms += seconds * 1000;
    },
  };
}

describe('client authentication throttle', () => {
  it('locks a client_id out after its burst of failures, and only that one', async () => {
    const { throttle } = setup();
    for (let i = 0; i < 10; i += 1) {
      expect(await throttle.lockedFor('qci_a', ADDRESS)).toBe(0);
      await throttle.recordFailure('qci_a', ADDRESS);
    }
    const wait = await throttle.lockedFor('qci_a', ADDRESS);
    // One failure drains every 6 s.
    expect(wait).toBeGreaterThan(5.9);
    expect(wait).toBeLessThanOrEqual(6);
    expect(await throttle.lockedFor('qci_b', ADDRESS)).toBe(0);
    // The same client from another address is not locked: failures lock out their own address.
    expect(await throttle.lockedFor('qci_a', '198.51.100.9')).toBe(0);
  });

  it('does not count checks, only failures', async () => {
    const { throttle } = setup();
    for (let i = 0; i < 50; i += 1) expect(await throttle.lockedFor('qci_a', ADDRESS)).toBe(0);
    await throttle.recordFailure('qci_a', ADDRESS);
    expect(await throttle.lockedFor('qci_a', ADDRESS)).toBe(0);
  });

  it('lets the client try again once a failure has drained', async () => {
    const { throttle, advance } = setup();
    for (let i = 0; i < 10; i += 1) await throttle.recordFailure('qci_a', ADDRESS);
    expect(await throttle.lockedFor('qci_a', ADDRESS)).toBeGreaterThan(0);
    advance(6);
    expect(await throttle.lockedFor('qci_a', ADDRESS)).toBe(0);
    await throttle.recordFailure('qci_a', ADDRESS);
    expect(await throttle.lockedFor('qci_a', ADDRESS)).toBeGreaterThan(0);
  });
});
