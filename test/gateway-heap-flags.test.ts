// The V8 flags `npm start` gives the gateway: a wrong young-generation size is either resident
// memory nobody asked for or a GC cliff under many connections (bench/README.md, "Many
// connections"), so the setting is read strictly.
import { describe, expect, it } from 'vitest';
import { gatewayHeapFlags, semiSpaceMb } from '../scripts/gateway-heap-flags.mjs';

describe('gatewayHeapFlags', () => {
  it('caps old space at the cache bound + 96 MiB and semi-spaces at 8 MiB by default', () => {
    expect(gatewayHeapFlags({})).toEqual(['--max-old-space-size=160', '--max-semi-space-size=8']);
    expect(gatewayHeapFlags({ QUARRY_CACHE_MAX_BYTES: String(256 * 2 ** 20) })[0]).toBe(
      '--max-old-space-size=352',
    );
    expect(gatewayHeapFlags({ QUARRY_HEAP_MB: '512' })[0]).toBe('--max-old-space-size=512');
  });

  it('takes QUARRY_SEMI_SPACE_MB as a whole number of MiB from 1 to 256', () => {
    expect(gatewayHeapFlags({ QUARRY_SEMI_SPACE_MB: '32' })[1]).toBe('--max-semi-space-size=32');
    expect(semiSpaceMb('')).toBe(8);
    expect(semiSpaceMb('1')).toBe(1);
    expect(semiSpaceMb('256')).toBe(256);
    for (const bad of ['0', '257', '16.5', 'big', '-8', '32MB'])
      expect(() => semiSpaceMb(bad), bad).toThrow(
        /QUARRY_SEMI_SPACE_MB must be a whole number of MiB from 1 to 256/,
      );
  });
});
