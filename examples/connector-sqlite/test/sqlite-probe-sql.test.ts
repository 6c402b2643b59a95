// The probe text: parameters become NULL, and nothing that only looks like a parameter changes.
import { describe, expect, it } from 'vitest';
import { probeSqlFor } from '../src/sqlite-probe-sql.js';

describe('probeSqlFor', () => {
  it('replaces every SQLite parameter form with a padded NULL', () => {
    expect(probeSqlFor('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).toBe(
      'SELECT * FROM t WHERE a =  NULL  AND b IN ( NULL ,  NULL )',
    );
    expect(probeSqlFor('SELECT ?12, :name, @at, $dollar')).toBe('SELECT  NULL ,  NULL ,  NULL ,  NULL ');
    // Padding keeps tokens apart; `?` takes digits only, as in SQLite's tokenizer.
    expect(probeSqlFor('x=?AND y=?7OR')).toBe('x= NULL AND y= NULL OR');
  });

  it('leaves strings, quoted identifiers, comments and names containing $ untouched', () => {
    const untouched = [
      `SELECT '?', 'it''s :a ?' AS "?col", "say ""?""", \`?\`, [?x] FROM t`,
      'SELECT 1 -- what? :a\n',
      'SELECT 1 /* @b ? */',
      'SELECT price$usd, _x$1 FROM t',
      "SELECT x'3f3f'",
    ];
    for (const sql of untouched) expect(probeSqlFor(sql)).toBe(sql);
    expect(probeSqlFor("SELECT '?', ? -- ?\n, ?")).toBe("SELECT '?',  NULL  -- ?\n,  NULL ");
  });

  it('reads unterminated strings and comments to the end, as SQLite does', () => {
    expect(probeSqlFor("SELECT ? , 'open ?")).toBe("SELECT  NULL  , 'open ?");
    expect(probeSqlFor('SELECT ? /* open ?')).toBe('SELECT  NULL  /* open ?');
  });
});
