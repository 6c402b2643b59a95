import { ConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { createConnectionBreakers } from './connection-breakers.js';

const unreachable = () => Promise.reject(new ConnectorError('CONNECT_FAILED', 'down'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createConnectionBreakers', () => {
  it('opens after the configured faults in a row, fails fast with retry_after, and one probe closes it', async () => {
    const changes: string[] = [];
    const breakers = createConnectionBreakers({
      failures: 3,
      halfOpenAfterMs: 200,
      onChange: (id, state) => changes.push(`${id} ${state}`),
    });
    for (let i = 0; i < 3; i++)
      await expect(breakers.run('c1', unreachable)).rejects.toBeInstanceOf(ConnectorError);
    expect(breakers.status('c1').state).toBe('open');
    let calls = 0;
    const error = await breakers
      .run('c1', async () => {
        calls++;
        return 1;
      })
      .catch((e: unknown) => e);
    expect(calls).toBe(0);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('SOURCE_UNAVAILABLE');
    expect((error as ApiError).retryAfter).toBeGreaterThan(0);
    expect((error as ApiError).retryAfter).toBeLessThanOrEqual(0.2);
    // Another connection is not affected.
    expect(await breakers.run('c2', async () => 2)).toBe(2);
    await sleep(220);
    expect(await breakers.run('c1', async () => 3)).toBe(3);
    expect(breakers.status('c1')).toEqual({ state: 'closed', consecutive_failures: 0 });
    expect(changes).toEqual(['c1 open', 'c1 closed']);
  });

  it("never counts a caller's or the owner's mistakes, and does not reset on them", async () => {
    const breakers = createConnectionBreakers({ failures: 2, halfOpenAfterMs: 1_000 });
    await expect(breakers.run('c', unreachable)).rejects.toThrow();
    for (const code of ['PARAM_INVALID', 'QUERY_FAILED', 'RESULT_TOO_LARGE', 'QUERY_ABORTED'] as const) {
      await expect(breakers.run('c', () => Promise.reject(new ConnectorError(code, 'x')))).rejects.toThrow();
    }
    expect(breakers.status('c')).toEqual({ state: 'closed', consecutive_failures: 1 });
    await expect(
      breakers.run('c', () => Promise.reject(new ConnectorError('QUERY_TIMEOUT', 'slow'))),
    ).rejects.toThrow();
    expect(breakers.status('c').state).toBe('open');
  });

  it('fails other calls fast while the probe runs', async () => {
    const breakers = createConnectionBreakers({ failures: 1, halfOpenAfterMs: 50 });
    await expect(breakers.run('c', unreachable)).rejects.toThrow();
    await sleep(60);
    let finish: (v: number) => void = () => {};
    const probe = breakers.run('c', () => new Promise<number>((resolve) => (finish = resolve)));
    expect(breakers.status('c').state).toBe('half_open');
    await expect(breakers.run('c', async () => 1)).rejects.toMatchObject({ code: 'SOURCE_UNAVAILABLE' });
    finish(7);
    expect(await probe).toBe(7);
    expect(breakers.status('c').state).toBe('closed');
  });
});
