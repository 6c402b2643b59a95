// The start-up warning for a thread pool too small to keep queries' threads beside the hashes.
import { describe, expect, it } from 'vitest';
import { threadpoolWarning } from './threadpool-check.js';

describe('thread-pool check', () => {
  it('warns when node started with fewer threads than 4 + the hash concurrency, naming the value to set', () => {
    expect(threadpoolWarning({}, 1)).toMatch(/UV_THREADPOOL_SIZE is 4.*UV_THREADPOOL_SIZE=5/);
    expect(threadpoolWarning({ UV_THREADPOOL_SIZE: '5' }, 2)).toMatch(/UV_THREADPOOL_SIZE=6/);
    expect(threadpoolWarning({ UV_THREADPOOL_SIZE: '5' }, 1)).toBeUndefined();
    expect(threadpoolWarning({ UV_THREADPOOL_SIZE: '16' }, 4)).toBeUndefined();
  });
});
