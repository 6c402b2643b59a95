import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-id.js';

describe('newRequestId', () => {
  it('is req_ and 32 hex digits, starting with the Unix time in milliseconds', () => {
    const before = Date.now();
    const id = newRequestId();
    const after = Date.now();
    expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    const ms = Number.parseInt(id.slice(4, 16), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  });

  it('never repeats and sorts in the order the ids were made (the ledger appends at its right edge)', () => {
    const ids = Array.from({ length: 200_000 }, () => newRequestId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
