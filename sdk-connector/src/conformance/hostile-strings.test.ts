// The hostile-string generator is reused by the gateway's tests: it must stay large, varied,
// deterministic, NUL-free and within the string limit it is given.
import { describe, expect, it } from 'vitest';
import { hostileStrings } from './hostile-strings.js';

describe('hostileStrings', () => {
  it('gives at least 200 distinct strings, none empty, none with NUL, none longer than the limit', () => {
    const strings = hostileStrings();
    expect(strings.length).toBeGreaterThanOrEqual(200);
    expect(new Set(strings).size).toBe(strings.length);
    for (const s of strings) {
      expect(s.length).toBeGreaterThan(0);
      expect(s.length).toBeLessThanOrEqual(1000);
      expect(s.includes('\u0000')).toBe(false);
    }
  });

  it('covers every family the kit promises', () => {
    const all = hostileStrings({ table: 'fixture_t' }).join('\n');
    for (const needle of [
      "''",
      '\\',
      '--',
      '/*',
      '#',
      "'; DROP TABLE fixture_t; --",
      'UNION SELECT',
      'pg_sleep(5)',
      'SLEEP(5)',
      "WAITFOR DELAY '0:0:5'",
      'BENCHMARK(',
      'dbms_lock.sleep',
      'system$wait',
      '\u2019',
      '\uff07',
      '\u0001',
      '\u001f',
      ':x',
      ':v',
      '$1',
      '?',
      '@v',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is what we look for
      '${v}',
    ]) {
      expect(all, `family ${JSON.stringify(needle)}`).toContain(needle);
    }
    expect(hostileStrings().some((s) => s.length === 1000)).toBe(true);
  });

  it('is deterministic, honours maxLength, and never equals the known value', () => {
    expect(hostileStrings({ table: 't' })).toEqual(hostileStrings({ table: 't' }));
    const short = hostileStrings({ maxLength: 50, knownValue: 'beta' });
    expect(short.length).toBeGreaterThanOrEqual(200);
    expect(Math.max(...short.map((s) => s.length))).toBeLessThanOrEqual(50);
    expect(short).not.toContain('beta');
    expect(short).toContain("beta' OR '1'='1");
  });
});
