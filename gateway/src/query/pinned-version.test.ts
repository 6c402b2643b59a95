// Pinned sources (`name@3`): how a pin is read, the headers of a deprecated version, the refusal
// after its sunset, and how often a pinned call is written to the store.
import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import type { PinnedCall } from '../store/analytic-version-repository.js';
import { createPinnedCalls, deprecationHeaders, parseSource, refuseSunset } from './pinned-version.js';

const entry = (deprecation?: CatalogEntry['deprecation']) =>
  ({
    analyticId: 'ana_1',
    name: 'sales',
    version: 3,
    currentVersion: 5,
    deprecation,
  }) as CatalogEntry;

describe('parseSource', () => {
  it('reads name@N and leaves a plain name alone', () => {
    expect(parseSource('sales')).toEqual({ name: 'sales', version: undefined });
    expect(parseSource('sales@3')).toEqual({ name: 'sales', version: 3 });
    expect(parseSource('sales@123456789')).toEqual({ name: 'sales', version: 123_456_789 });
  });

  it('refuses anything after @ that is not a version number with INVALID_REQUEST', () => {
    for (const source of [
      'sales@',
      'sales@0',
      'sales@03',
      'sales@-1',
      'sales@1.5',
      'sales@v3',
      'sales@3@3',
      'sales@1234567890',
    ]) {
      const error = (() => {
        try {
          parseSource(source);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, source).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('INVALID_REQUEST');
    }
  });
});

describe('deprecated versions', () => {
  const deprecatedAt = Date.UTC(2026, 10, 1, 12, 0, 0, 500);
  const sunsetAt = Date.UTC(2027, 0, 31);

  it('carry Deprecation as @<unix seconds> (RFC 9745) and Sunset as an HTTP-date (RFC 8594)', () => {
    const headers: Record<string, string> = {};
    deprecationHeaders(entry({ deprecatedAt, sunsetAt }), headers);
    expect(headers).toEqual({
      deprecation: `@${Math.floor(deprecatedAt / 1000)}`,
      sunset: 'Sun, 31 Jan 2027 00:00:00 GMT',
    });
    const none: Record<string, string> = {};
    deprecationHeaders(entry(), none);
    expect(none).toEqual({});
  });

  it('are refused from the sunset on, naming the current version', () => {
    expect(() => refuseSunset(entry({ deprecatedAt, sunsetAt }), sunsetAt - 1)).not.toThrow();
    expect(() => refuseSunset(entry(), sunsetAt + 1)).not.toThrow();
    try {
      refuseSunset(entry({ deprecatedAt, sunsetAt }), sunsetAt);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe('VERSION_SUNSET');
      expect((error as ApiError).message).toContain('current version is 5');
      expect((error as ApiError).message).toContain('"sales@5"');
    }
  });
});

describe('pinned calls', () => {
  it('are written once an hour per version and caller, and again after a failed write', async () => {
    const written: PinnedCall[] = [];
    let fail = false;
    let now = 1_000_000;
    const errors: unknown[] = [];
    const calls = createPinnedCalls(
      {
        async recordCalls(batch) {
          if (fail) throw new Error('store down');
          written.push(...batch);
        },
      },
      (error) => errors.push(error),
      () => now,
    );
    calls.record(entry(), 'acct_a');
    calls.record(entry(), 'acct_a');
    calls.record(entry(), 'acct_b');
    await Promise.resolve();
    expect(written.map((c) => [c.accountId, c.version])).toEqual([
      ['acct_a', 3],
      ['acct_b', 3],
    ]);
    now += 3_600_000;
    fail = true;
    calls.record(entry(), 'acct_a');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(errors).toHaveLength(1);
    fail = false;
    calls.record(entry(), 'acct_a');
    await Promise.resolve();
    expect(written).toHaveLength(3);
    expect(written[2]?.at).toEqual(new Date(now));
  });
});
