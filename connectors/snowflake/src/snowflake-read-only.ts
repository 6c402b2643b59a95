// The read-only gate every statement passes before it is sent. A Snowflake session cannot be made
// read-only by a flag, and the statement type the service reports (`statementTypeId`) arrives
// only after the statement ran, when a write would already have happened. So the text is checked
// first, lexically: one statement only, starting with SELECT, WITH, SHOW, DESCRIBE or DESC, and
// a WITH statement must not contain a data-changing keyword anywhere outside strings, quoted
// identifiers and comments. The session also sends MULTI_STATEMENT_COUNT=1, so Snowflake itself
// refuses stacked statements, and owners should connect with a role that has SELECT grants only:
// a function with side effects inside a SELECT (a stored procedure wrapper, an external function)
// cannot be seen from the text.

/** First keywords of the statements a read-only connection runs. */
const READ_STATEMENTS: ReadonlySet<string> = new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC']);

/**
 * Keywords that make a WITH statement a write (`WITH … INSERT`, `CREATE … AS WITH`, …). Checked
 * as whole words outside strings, identifiers in double quotes and comments; a bare column named
 * like one of them makes the statement fail closed.
 */
const WRITE_KEYWORDS: ReadonlySet<string> = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'UPSERT',
  'CREATE',
  'DROP',
  'ALTER',
  'TRUNCATE',
  'UNDROP',
  'COPY',
  'PUT',
  'REMOVE',
  'GRANT',
  'REVOKE',
  'CALL',
  'EXECUTE',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'USE',
]);

const WORD_START = /[A-Za-z_]/;
const WORD_PART = /[A-Za-z0-9_$]/;

/** Where the statement text ends up after lexing: the words seen and how the text ended. */
interface Scan {
  readonly words: string[];
  /** Text (other than comments and whitespace) after the first `;`. */
  readonly stacked: boolean;
  /** An unterminated string, identifier or comment. */
  readonly unterminated: boolean;
}

/** Index just past a quoted run starting at `start` (the opening quote), or -1 when unterminated. */
function skipQuoted(sql: string, start: number, quote: string, backslash: boolean): number {
  for (let i = start + 1; i < sql.length; i++) {
    const ch = sql[i];
    if (backslash && ch === '\\') {
      i++;
      continue;
    }
    if (ch === quote) {
      if (sql[i + 1] === quote) {
        i++;
        continue;
      }
      return i + 1;
    }
  }
  return -1;
}

function scan(sql: string): Scan {
  const words: string[] = [];
  let afterSemicolon = false;
  let stacked = false;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && next === '/') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) return { words, stacked, unterminated: true };
      i = end + 2;
    } else if (/\s/.test(ch)) {
      i++;
    } else if (afterSemicolon && ch !== ';') {
      stacked = true;
      break;
    } else if (ch === ';') {
      afterSemicolon = true;
      i++;
    } else if (ch === "'" || ch === '"') {
      const end = skipQuoted(sql, i, ch, ch === "'");
      if (end === -1) return { words, stacked, unterminated: true };
      i = end;
    } else if (ch === '$' && next === '$') {
      const end = sql.indexOf('$$', i + 2);
      if (end === -1) return { words, stacked, unterminated: true };
      i = end + 2;
    } else if (WORD_START.test(ch)) {
      let end = i + 1;
      while (end < sql.length && WORD_PART.test(sql[end] as string)) end++;
      words.push(sql.slice(i, end).toUpperCase());
      i = end;
    } else {
      i++;
    }
  }
  return { words, stacked, unterminated: false };
}

/**
 * Why `sql` may not run on a read-only connection, or `undefined` when it may. The reason is
 * safe to show: it never quotes the statement.
 */
export function readOnlyViolation(sql: string): string | undefined {
  const { words, stacked, unterminated } = scan(sql);
  if (unterminated) return 'the statement has an unterminated string, identifier or comment';
  if (stacked) return 'only one statement may run at a time';
  const first = words[0];
  if (first === undefined) return 'the statement is empty';
  if (!READ_STATEMENTS.has(first)) {
    return 'only SELECT, WITH … SELECT, SHOW and DESCRIBE statements run on a read-only connection';
  }
  if (first === 'WITH' && words.some((word) => WRITE_KEYWORDS.has(word))) {
    return 'a WITH statement may only select';
  }
  return undefined;
}
