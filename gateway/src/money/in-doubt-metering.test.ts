// Usage writes in doubt: asked again by request id until the store answers, so a served call is
// answered with exactly its one event or refused with none; writes that surely failed, and the
// store's own refusals, are not retried.
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import { StoreUnavailableError } from '../errors/store-error.js';
import { settleInDoubt } from './in-doubt-metering.js';
import type { Charge, Metering } from './metering.js';

const charge: Charge = { credits: 1, remaining: 10, limit: 20, resetSeconds: 100 };
const principal = {} as Principal;
const entry = {} as CatalogEntry;
const quiet = { error: () => {}, warn: () => {} };

/** A Metering whose chargeServed fails with each of `failures` in turn, then charges. */
function flaky(failures: unknown[]): Metering & { attempts: string[] } {
  const attempts: string[] = [];
  return {
    attempts,
    async chargeServed(_p, _e, requestId) {
      attempts.push(requestId);
      const next = failures.shift();
      if (next !== undefined) throw next;
      return charge;
    },
    async begin() {
      throw new Error('unused');
    },
    creditsOf: () => 1,
    drain: async () => {},
    stats: () => ({}) as ReturnType<Metering['stats']>,
  };
}

const inDoubt = () => new StoreUnavailableError('stopped answering', { inDoubt: true });
const refused = () => new StoreUnavailableError('refused', { inDoubt: false });

describe('settleInDoubt', () => {
  it('asks again with the same request id until the store answers, through refusals while it is down', async () => {
    const inner = flaky([inDoubt(), refused(), inDoubt()]);
    const metering = settleInDoubt(inner, { logger: quiet, retryBaseMs: 5 });
    expect(await metering.chargeServed(principal, entry, 'req_1', 3)).toBe(charge);
    expect(inner.attempts).toEqual(['req_1', 'req_1', 'req_1', 'req_1']);
  });

  it('fails at once when nothing was sent, and takes the store’s refusal as the outcome', async () => {
    const surely = flaky([refused()]);
    await expect(
      settleInDoubt(surely, { logger: quiet }).chargeServed(principal, entry, 'req_2', 1),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(surely.attempts).toHaveLength(1);
    const quota = new ApiError('QUOTA_EXCEEDED', 'used up');
    const decided = flaky([inDoubt(), quota]);
    await expect(
      settleInDoubt(decided, { logger: quiet, retryBaseMs: 5 }).chargeServed(principal, entry, 'req_3', 1),
    ).rejects.toBe(quota);
  });

  it('gives up after maxWaitMs and says so at error level', async () => {
    const errors: object[] = [];
    const inner = flaky(Array.from({ length: 100 }, inDoubt));
    const metering = settleInDoubt(inner, {
      logger: { error: (obj) => errors.push(obj), warn: () => {} },
      maxWaitMs: 60,
      retryBaseMs: 10,
    });
    await expect(metering.chargeServed(principal, entry, 'req_4', 1)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(errors).toEqual([expect.objectContaining({ request_id: 'req_4' })]);
  });
});
