// The pure parts of asynchronous queries: reading `Prefer`, and a job's time limit. The jobs
// themselves run end to end in test/async-jobs.test.ts (real gateways, real PostgreSQL).
import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../catalog/catalog.js';
import { jobTimeoutMs } from './jobs.js';
import { prefersAsync } from './query-call.js';

const entryWith = (limits: Record<string, number> | undefined) =>
  ({ definition: { limits } }) as unknown as CatalogEntry;

describe('Prefer: respond-async', () => {
  it('is found among other preferences, in any case, with or without parameters', () => {
    expect(prefersAsync('respond-async')).toBe(true);
    expect(prefersAsync('return=minimal, Respond-Async; wait=10')).toBe(true);
    expect(prefersAsync(' respond-async ')).toBe(true);
  });
  it('is not read into other preferences or values', () => {
    expect(prefersAsync(undefined)).toBe(false);
    expect(prefersAsync('')).toBe(false);
    expect(prefersAsync('return=respond-async')).toBe(false);
    expect(prefersAsync('respond-asynchronously')).toBe(false);
    expect(prefersAsync('wait=respond-async')).toBe(false);
  });
});

describe("a job's time limit", () => {
  it("is the analytic's async_timeout_ms, else its timeout_ms, else 30 s, within the gateway's bound", () => {
    expect(jobTimeoutMs(entryWith({ timeout_ms: 5000, async_timeout_ms: 600_000 }), 1_800_000)).toBe(600_000);
    expect(jobTimeoutMs(entryWith({ timeout_ms: 5000 }), 1_800_000)).toBe(5000);
    expect(jobTimeoutMs(entryWith(undefined), 1_800_000)).toBe(30_000);
    expect(jobTimeoutMs(entryWith({ async_timeout_ms: 1_800_000 }), 840_000)).toBe(840_000);
  });
});
