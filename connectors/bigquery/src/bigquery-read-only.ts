// The read-only rule of BigQuery connections. BigQuery has no read-only session or job setting,
// so the connector refuses, before anything is sent, every statement that is not one query:
// the first keyword (after comments and opening parentheses) must be SELECT, WITH or FROM (pipe
// syntax), and there must be no `;` except a trailing one, because BigQuery runs several
// statements only as a script. Every GoogleSQL statement that writes (INSERT, UPDATE, DELETE,
// MERGE, TRUNCATE, CREATE, ALTER, DROP, EXPORT, LOAD, CALL, EXECUTE IMMEDIATE, BEGIN, DECLARE,
// SET, GRANT, …) starts with another keyword. The lexer follows GoogleSQL: `#`, `--` and
// `/* */` comments, '…' "…" '''…''' """…""" strings with backslash escapes,
// and backtick identifiers.
import { ConnectorError } from '@quarry/sdk-connector';

const QUERY_KEYWORDS = new Set(['SELECT', 'WITH', 'FROM']);
const WORD_START = /[A-Za-z_]/;
const WORD_PART = /[A-Za-z0-9_]/;
const FIRST_WORD = /^[A-Za-z_][A-Za-z0-9_]*/;
const STRING_PREFIX = /^(r|b|rb|br)$/i;

/** Index just past the end of the line comment starting at `i`. */
function skipLine(sql: string, i: number): number {
  const end = sql.indexOf('\n', i);
  return end < 0 ? sql.length : end + 1;
}

/**
 * Index just past the string or identifier whose opening quote is at `i`; -1 if unterminated. A
 * backslash always takes the next character with it, raw strings included (`r'\''` is valid).
 */
function skipQuoted(sql: string, i: number): number {
  const quote = sql[i] as string;
  const triple = quote !== '`' && sql.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  let j = i + close.length;
  while (j < sql.length) {
    if (sql[j] === '\\') j += 2;
    else if (sql.startsWith(close, j)) return j + close.length;
    else j++;
  }
  return -1;
}

/**
 * Why `sql` may not run on a read-only connection, or undefined when it is a single query.
 * Exported for tests; the session uses {@link assertReadOnly}.
 */
export function readOnlyViolation(sql: string): string | undefined {
  let firstWord: string | undefined;
  let afterSemicolon = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (c === '#' || (c === '-' && next === '-')) {
      i = skipLine(sql, i);
      continue;
    }
    if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return 'the SQL has an unterminated comment';
      i = end + 2;
      continue;
    }
    if (c <= ' ') {
      i++;
      continue;
    }
    if (afterSemicolon) return 'the SQL holds more than one statement (a script)';
    if (c === ';') {
      if (firstWord === undefined) return 'the SQL holds an empty statement';
      afterSemicolon = true;
      i++;
      continue;
    }
    if (firstWord === undefined) {
      // Only opening parentheses may come before the first keyword: `(SELECT …) UNION ALL …`.
      if (c === '(') {
        i++;
        continue;
      }
      firstWord = (FIRST_WORD.exec(sql.slice(i, i + 64))?.[0] ?? '').toUpperCase();
      if (!QUERY_KEYWORDS.has(firstWord)) {
        const what = firstWord === '' ? 'this statement' : `${firstWord} statements`;
        return `only queries (SELECT, WITH, FROM) can run, not ${what}`;
      }
      i += firstWord.length;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(sql, i);
      if (i < 0) return 'the SQL has an unterminated string or identifier';
      continue;
    }
    if (!WORD_START.test(c)) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < sql.length && WORD_PART.test(sql[end] as string)) end++;
    const prefix = sql.slice(i, end);
    const quote = sql[end];
    // r'…', b"…", rb'''…''': string prefixes.
    if ((quote === "'" || quote === '"') && STRING_PREFIX.test(prefix)) {
      i = skipQuoted(sql, end);
      if (i < 0) return 'the SQL has an unterminated string';
    } else {
      i = end;
    }
  }
  return firstWord === undefined ? 'the SQL holds no statement' : undefined;
}

/**
 * Throws QUERY_FAILED (driverCode `READ_ONLY`) unless `sql` is a single query. Runs before any
 * request, so a refused statement never reaches BigQuery.
 */
export function assertReadOnly(sql: string): void {
  const violation = readOnlyViolation(sql);
  if (violation !== undefined) {
    throw new ConnectorError('QUERY_FAILED', `BigQuery connections are read-only: ${violation}`, {
      driverCode: 'READ_ONLY',
    });
  }
}
