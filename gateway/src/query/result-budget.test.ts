import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { createResultBudget } from './result-budget.js';

describe('createResultBudget', () => {
  it('grants at once while it fits, queues past it, and serves the queue as bytes come back', async () => {
    const budget = createResultBudget({ limitBytes: 100, waitMs: 1_000 });
    const a = budget.take(60);
    expect(typeof a).toBe('function');
    const b = budget.take(60);
    expect(b).toBeInstanceOf(Promise);
    expect(budget.stats()).toEqual({ limitBytes: 100, inFlightBytes: 60, waiting: 1 });
    (a as () => void)();
    const release = await b;
    expect(budget.stats()).toEqual({ limitBytes: 100, inFlightBytes: 60, waiting: 0 });
    release();
    release();
    expect(budget.stats().inFlightBytes).toBe(0);
  });

  it('always admits one query when nothing is in flight, however large', () => {
    const budget = createResultBudget({ limitBytes: 10 });
    expect(typeof budget.take(1_000)).toBe('function');
  });

  it('refuses with 503 SOURCE_UNAVAILABLE and retry_after once the wait is over', async () => {
    const budget = createResultBudget({ limitBytes: 100, waitMs: 50 });
    budget.take(100);
    const error = await (budget.take(10) as Promise<() => void>).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'SOURCE_UNAVAILABLE', retryAfter: 1 });
    expect(budget.stats().waiting).toBe(0);
  });

  it('stops waiting when the caller leaves', async () => {
    const budget = createResultBudget({ limitBytes: 100, waitMs: 5_000 });
    budget.take(100);
    const controller = new AbortController();
    const waiting = budget.take(10, controller.signal) as Promise<() => void>;
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
  });
});
