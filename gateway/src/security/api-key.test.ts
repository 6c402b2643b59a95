import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, digestKey, generateApiKey, parseApiKey } from './api-key.js';
import { BASE62_ALPHABET } from './base62.js';

describe('api keys', () => {
  it('look like qry_live_… with 128 random bits and a checksum, and parse back to their digest', () => {
    const key = generateApiKey();
    expect(key.secret).toMatch(/^qry_live_[0-9A-Za-z]{28}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(key.digest.equals(digestKey(key.secret))).toBe(true);
    expect(parseApiKey(key.secret)).toEqual({
      ok: true,
      digest: key.digest,
      prefix: key.prefix,
      environment: 'live',
    });
    const test = generateApiKey('test');
    expect(test.secret).toMatch(/^qry_test_/);
    expect(parseApiKey(test.secret)).toMatchObject({ ok: true, environment: 'test' });
  });

  it('never repeat', () => {
    const secrets = new Set(Array.from({ length: 2000 }, () => generateApiKey().secret));
    expect(secrets.size).toBe(2000);
  });

  it('refuse every single-character typo', () => {
    const typoChars = `${BASE62_ALPHABET}_-. `;
    fc.assert(
      fc.property(
        fc.constantFrom<'live' | 'test'>('live', 'test'),
        fc.nat(),
        fc.constantFrom(...typoChars),
        (environment, at, replacement) => {
          const { secret } = generateApiKey(environment);
          const index = at % secret.length;
          fc.pre(secret[index] !== replacement);
          const typo = secret.slice(0, index) + replacement + secret.slice(index + 1);
          expect(parseApiKey(typo).ok).toBe(false);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('refuse a key with a character dropped, doubled or two neighbours swapped', () => {
    fc.assert(
      fc.property(fc.nat(), (at) => {
        const { secret } = generateApiKey();
        const index = at % (secret.length - 1);
        const dropped = secret.slice(0, index) + secret.slice(index + 1);
        const doubled = secret.slice(0, index) + secret[index] + secret.slice(index);
        expect(parseApiKey(dropped).ok).toBe(false);
        expect(parseApiKey(doubled).ok).toBe(false);
        if (secret[index] !== secret[index + 1]) {
          const swapped =
            secret.slice(0, index) + secret[index + 1] + secret[index] + secret.slice(index + 2);
          expect(parseApiKey(swapped).ok).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuse other credentials with a reason', () => {
    for (const text of [
      '',
      'Bearer x',
      'sk_live_abc',
      `qry_prod_${'a'.repeat(28)}`,
      `qry_live_${'!'.repeat(28)}`,
    ]) {
      const parsed = parseApiKey(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.reason).not.toBe('');
    }
  });

  it('compare tokens in constant time without leaking length', () => {
    expect(constantTimeEqual('admin-token', 'admin-token')).toBe(true);
    expect(constantTimeEqual('admin-token', 'admin-tokeN')).toBe(false);
    expect(constantTimeEqual('admin-token', 'admin')).toBe(false);
  });
});
