// Owner patterns as an owner and a caller see them: catastrophic-for-backtracking patterns answer
// long values correctly (and at all), syntax the linear-time engine cannot run is refused with a
// reason, and the caps hold.
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  cachedOwnerPattern,
  compileOwnerPattern,
  estimateProgramSize,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_PROGRAM_SIZE,
  type OwnerPattern,
  ownerPatternCacheStats,
} from './owner-pattern.js';

function compiled(source: string): OwnerPattern {
  const result = compileOwnerPattern(source);
  if (!result.ok) throw new Error(`expected ${source} to compile, got: ${result.problem}`);
  return result.pattern;
}

function problem(source: string): string {
  const result = compileOwnerPattern(source);
  if (result.ok) throw new Error(`expected ${source} to be refused`);
  return result.problem;
}

/**
 * Only a hang guard: a backtracking engine would not finish these in the lifetime of the machine
 * (`(a+)+$` took 9 s on 32 characters), the linear one takes milliseconds. Synchronous code cannot
 * be interrupted, so a regression shows as this run hanging, and a slow one fails here.
 */
function guarded<T>(fn: () => T): T {
  const started = performance.now();
  const result = fn();
  expect(performance.now() - started).toBeLessThan(5000);
  return result;
}

describe('compileOwnerPattern', () => {
  it('answers catastrophic-for-backtracking patterns on long values, correctly', () => {
    const nested = compiled('(a+)+$');
    expect(guarded(() => nested.matches(`${'a'.repeat(31)}!`))).toBe(false);
    expect(guarded(() => nested.matches(`${'a'.repeat(4095)}!`))).toBe(false);
    expect(guarded(() => nested.matches('a'.repeat(4096)))).toBe(true);

    const alternation = compiled('(a|a)*b');
    expect(guarded(() => alternation.matches('a'.repeat(4096)))).toBe(false);
    expect(guarded(() => alternation.matches(`${'a'.repeat(4095)}b`))).toBe(true);

    const repeated = compiled('(.*a){20}');
    expect(guarded(() => repeated.matches(`${'a'.repeat(19)}${'b'.repeat(4077)}`))).toBe(false);
    expect(guarded(() => repeated.matches(`${'b'.repeat(4076)}${'a'.repeat(20)}`))).toBe(true);
  });

  it('matches the whole value, whatever the pattern says about lines or alternatives', () => {
    const alt = compiled('EU|US');
    expect([alt.matches('EU'), alt.matches('US'), alt.matches('EUROPE'), alt.matches('xUS')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    // (?m) makes ^ and $ match at line breaks inside the pattern; the value must still match whole.
    expect(compiled('(?m)^a$').matches('a\nb')).toBe(false);
    expect(compiled('^[A-Z]{2}$').matches('EU\n')).toBe(false);
    expect(compiled('^[A-Z]{2}$').matches('EU')).toBe(true);
  });

  it('works on code points: Unicode classes, astral characters, case folding', () => {
    expect(compiled('.').matches('😀')).toBe(true);
    expect(compiled('.{3}').matches('é😀x')).toBe(true);
    expect(compiled('.').matches('\n')).toBe(false);
    expect(compiled('\\p{L}+').matches('Zürich')).toBe(true);
    expect(compiled('\\p{L}+').matches('Zürich1')).toBe(false);
    expect(compiled('[😀-😂]').matches('😁')).toBe(true);
    expect(compiled('(?i)eu').matches('Eu')).toBe(true);
    // \d and \w are ASCII in RE2, as in JavaScript.
    expect(compiled('\\d+').matches('٣')).toBe(false);
    expect(compiled('(?P<year>\\d{4})-(?<month>\\d{2})').matches('2024-01')).toBe(true);
  });

  it('refuses what RE2 cannot run, saying why', () => {
    expect(problem('(ab)\\1')).toMatch(
      /^pattern \(ab\)\\1 uses a backreference, which RE2 syntax does not support .*invalid escape sequence/,
    );
    expect(problem('(?<x>a)\\k<x>')).toContain('uses a backreference');
    for (const lookaround of ['a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b']) {
      expect(problem(lookaround)).toContain(`pattern ${lookaround} uses lookahead or lookbehind`);
    }
    expect(problem('\\u00e9')).toBe(
      'pattern \\u00e9 is not valid RE2 syntax: invalid escape sequence: `\\u`',
    );
    expect(problem('([a-z')).toBe('pattern ([a-z is not valid RE2 syntax: missing closing ]: `[a-z`');
    // Not balanced on its own: it must not combine with the anchoring into something else.
    expect(problem('a)|(b')).toContain('is not valid RE2 syntax');
    expect(problem('a{1001}')).toContain('invalid repeat count');
  });

  it(`caps a pattern's length at ${MAX_PATTERN_LENGTH} characters`, () => {
    expect(compiled('a'.repeat(MAX_PATTERN_LENGTH)).matches('a'.repeat(MAX_PATTERN_LENGTH))).toBe(true);
    expect(problem('a'.repeat(MAX_PATTERN_LENGTH + 1))).toBe(
      `pattern is ${MAX_PATTERN_LENGTH + 1} characters long; at most ${MAX_PATTERN_LENGTH} are allowed`,
    );
  });

  it(`caps its compiled size at ${MAX_PATTERN_PROGRAM_SIZE} instructions`, () => {
    expect(compiled('[a-z]{1,400}').programSize).toBeLessThanOrEqual(MAX_PATTERN_PROGRAM_SIZE);
    expect(problem('[a-z]{1,1000}')).toBe(
      `pattern is too complex: it compiles to 2001 instructions, more than ${MAX_PATTERN_PROGRAM_SIZE}` +
        ' (bound the length with maxLength rather than a counted repetition like {1,1000})',
    );
    expect(problem('(.*a){1000}')).toContain('pattern is too complex');
    // 46,000 instructions: refused from the text, before spending half a second compiling it.
    expect(guarded(() => problem('\\p{L}{1000}'.repeat(46)))).toMatch(
      /^pattern is too complex: it compiles to about \d+ instructions/,
    );
  });
});

describe('estimateProgramSize', () => {
  it('stays within a small factor of the compiled size, and above it for counted repetitions', () => {
    const patterns = [
      '^[A-Z]{2}$',
      '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}',
      '\\p{L}{1,64}',
      '.{0,1000}',
      '(?i)[a-z ]{1,200}',
      '(?:(?:\\p{L}{10}){10}){10}',
      '(.*a){200}',
      '(a+)+$',
      '(?P<x>a{3})|b{2,}',
      '\\Q{1000}\\E',
      '[{]{5}',
      '[]a]{300}',
      '[[:alpha:]]{100}',
      '(a|b|c){100}',
    ];
    for (const source of patterns) {
      const actual = RE2JS.compile(source).programSize();
      const estimate = estimateProgramSize(source);
      expect(estimate, source).toBeGreaterThanOrEqual(actual / 2);
      expect(estimate, source).toBeLessThanOrEqual(actual * 3);
    }
  });
});

describe('cachedOwnerPattern', () => {
  it('compiles once and fails closed on a pattern that cannot run', () => {
    const first = cachedOwnerPattern('^[A-Z]{2}$');
    expect(cachedOwnerPattern('^[A-Z]{2}$')).toBe(first);
    expect(cachedOwnerPattern('(ab)\\1')).toBeUndefined();
    const entries = ownerPatternCacheStats().entries;
    expect(cachedOwnerPattern('a'.repeat(MAX_PATTERN_LENGTH + 1))).toBeUndefined();
    expect(ownerPatternCacheStats().entries).toBe(entries);
  });

  it('stays bounded in entries and in total program size', () => {
    for (let i = 0; i < 1200; i++) cachedOwnerPattern(`x${i}|[A-Z]{2}`);
    expect(ownerPatternCacheStats().entries).toBeLessThanOrEqual(1000);
    // 40 patterns of about 900 instructions: 36,000 in all, more than the cache keeps.
    for (let i = 0; i < 40; i++) expect(cachedOwnerPattern(`[a-z]{${440 + i}}y${i}`)).toBeDefined();
    expect(ownerPatternCacheStats().programSize).toBeLessThanOrEqual(20_000);
    expect(ownerPatternCacheStats().programSize).toBeGreaterThan(10_000);
  });
});
