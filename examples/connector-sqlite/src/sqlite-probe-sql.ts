// The text the worker compiles as a temporary view (see probeDeclaredTypes in sqlite-worker.js):
// the query with every parameter replaced by NULL, because SQLite refuses parameters in a view.
// Only the lexical structure matters here, so this is a small scanner of SQLite's tokens that can
// hide a `?` (strings, quoted identifiers, comments), not a parser.

const WORD_START = /[A-Za-z0-9_\u0080-\uffff]/;
const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
const DIGIT = /[0-9]/;
const QUOTE_CLOSERS: Readonly<Record<string, string>> = { "'": "'", '"': '"', '`': '`', '[': ']' };

/**
 * `sql` with each SQLite parameter (`?`, `?NNN`, `:name`, `@name`, `$name`) outside strings,
 * quoted identifiers (`"…"`, `` `…` ``, `[…]`) and comments replaced by ` NULL `. The padding
 * keeps neighbouring tokens apart (`x=?AND` → `x= NULL AND`). Unterminated strings and comments
 * run to the end, as SQLite reads them (the statement then fails to compile anyway).
 */
export function probeSqlFor(sql: string): string {
  let out = '';
  let copied = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const closer = QUOTE_CLOSERS[c];
    if (closer !== undefined) {
      i = skipQuoted(sql, i + 1, closer, c !== '[');
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (WORD_START.test(c)) {
      // Identifiers, keywords and numbers, including `$` inside a name (`price$usd`).
      while (i < n && WORD.test(sql[i]!)) i++;
    } else if (c === '?' || ((c === ':' || c === '@' || c === '$') && WORD.test(sql[i + 1] ?? ''))) {
      // As SQLite's tokenizer reads them: `?` takes digits only, the named forms a whole name.
      const part = c === '?' ? DIGIT : WORD;
      let end = i + 1;
      while (end < n && part.test(sql[end]!)) end++;
      out += `${sql.slice(copied, i)} NULL `;
      copied = end;
      i = end;
    } else {
      i++;
    }
  }
  return copied === 0 ? sql : out + sql.slice(copied);
}

/** The index after the quote that closes a string or identifier starting at `from`. */
function skipQuoted(sql: string, from: number, closer: string, doubled: boolean): number {
  let i = from;
  for (;;) {
    const end = sql.indexOf(closer, i);
    if (end < 0) return sql.length;
    // `''` inside '…' (and `""`, ``` `` ```) is an escaped quote; `[…]` has no escape.
    if (doubled && sql[end + 1] === closer) i = end + 2;
    else return end + 1;
  }
}
