import { describe, expect, it } from 'vitest';
import { leadingKeyword, READ_ONLY_KEYWORDS } from './statement-keyword.js';

describe('leadingKeyword', () => {
  it('skips comments, whitespace and parentheses', () => {
    expect(leadingKeyword('  -- a\n/* b */ ((select 1))')).toBe('SELECT');
    expect(leadingKeyword('# mysql\nDELETE FROM t', { hashComments: true })).toBe('DELETE');
    expect(leadingKeyword('with x as (select 1) select * from x')).toBe('WITH');
  });

  it('does not take # for a comment unless asked, and finds nothing in an empty statement', () => {
    expect(leadingKeyword('# x\nSELECT 1')).toBe('');
    expect(leadingKeyword('  /* only a comment */ ')).toBe('');
  });

  it('lists reads, not writes', () => {
    expect(READ_ONLY_KEYWORDS.has('SELECT')).toBe(true);
    for (const word of ['INSERT', 'UPDATE', 'DELETE', 'CREATE', 'DROP', 'EXPLAIN', 'CALL']) {
      expect(READ_ONLY_KEYWORDS.has(word)).toBe(false);
    }
  });
});
