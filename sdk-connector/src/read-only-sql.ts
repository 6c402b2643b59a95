// The run-time read-only rule (issue 29, item 5): before any statement reaches a warehouse, the
// SDK runtime checks its text, so "every call runs read-only" holds whatever the deploy flags
// were and whatever the engine's own read-only mode misses (a MySQL session in READ ONLY still
// writes `INTO OUTFILE`; a Postgres read-only transaction still runs `COPY … TO PROGRAM` and
// `pg_read_file`). A small tokenizer per SQL family, not regexes on raw text: comments, strings
// and quoted identifiers are skipped the way the engine skips them, so `'INTO OUTFILE'` in a
// string is data while the same words outside are refused. Where the engine and this lexer
// could disagree (a nested or MySQL executable comment, an unterminated quote, a Unicode-escaped
// identifier) the statement is refused: it fails closed. Lexical only: a function with side
// effects the owner defined is invisible here, which is why sessions stay read-only too.
import { ConnectorError } from './connector-error.js';

/**
 * The SQL families the read-only rule knows, which decide how text is tokenized and which
 * constructs are refused. `'ansi'` (the default) is for engines it does not know: ANSI strings
 * and comments, and the rules every family shares.
 */
export type SqlFamily = 'ansi' | 'bigquery' | 'duckdb' | 'mysql' | 'postgres' | 'snowflake' | 'trino';

interface Lexing {
  /** `--` starts a comment only before whitespace, a control character or the end (MySQL). */
  readonly dashNeedsSpace: boolean;
  readonly hashComments: boolean;
  readonly slashComments: boolean;
  /** Backslash escapes in '…' (and in "…" where that is a string). */
  readonly backslashStrings: boolean;
  /** `"…"` is a string, not an identifier (MySQL without ANSI_QUOTES, BigQuery). */
  readonly doubleQuoteStrings: boolean;
  readonly backticks: boolean;
  /** `$$…$$` (and `$tag$…$tag$` when `dollarTags`). */
  readonly dollarQuotes: boolean;
  readonly dollarTags: boolean;
  /** `E'…'` strings take backslash escapes (Postgres, DuckDB). */
  readonly escapeStrings: boolean;
  /** `'''…'''` and `"""…"""` (BigQuery). */
  readonly tripleQuotes: boolean;
}

const ANSI: Lexing = {
  dashNeedsSpace: false,
  hashComments: false,
  slashComments: false,
  backslashStrings: false,
  doubleQuoteStrings: false,
  backticks: false,
  dollarQuotes: false,
  dollarTags: false,
  escapeStrings: false,
  tripleQuotes: false,
};

const LEXING: Readonly<Record<SqlFamily, Lexing>> = {
  ansi: ANSI,
  trino: ANSI,
  // The MySQL session pins sql_mode without NO_BACKSLASH_ESCAPES and ANSI_QUOTES, so this holds.
  mysql: {
    ...ANSI,
    dashNeedsSpace: true,
    hashComments: true,
    backslashStrings: true,
    doubleQuoteStrings: true,
    backticks: true,
  },
  postgres: { ...ANSI, dollarQuotes: true, dollarTags: true, escapeStrings: true },
  duckdb: { ...ANSI, dollarQuotes: true, dollarTags: true, escapeStrings: true },
  snowflake: { ...ANSI, slashComments: true, backslashStrings: true, dollarQuotes: true },
  bigquery: {
    ...ANSI,
    hashComments: true,
    backslashStrings: true,
    doubleQuoteStrings: true,
    backticks: true,
    tripleQuotes: true,
  },
};

/** The keywords a statement may start with (after opening parentheses). */
const FIRST_WORDS: Readonly<Record<SqlFamily, ReadonlySet<string>>> = {
  ansi: new Set(['SELECT', 'WITH', 'VALUES']),
  trino: new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']),
  mysql: new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']),
  postgres: new Set(['SELECT', 'WITH', 'VALUES', 'TABLE']),
  // FROM-first queries (`FROM sales SELECT region`).
  duckdb: new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'FROM']),
  snowflake: new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC']),
  // Pipe syntax (`FROM sales |> …`).
  bigquery: new Set(['SELECT', 'WITH', 'FROM']),
};

/**
 * Statements that change something, refused right after an opening parenthesis (a
 * data-modifying CTE `AS (DELETE …)`) on every family.
 */
const WRITE_WORDS: ReadonlySet<string> = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'UPSERT',
  'REPLACE',
  'TRUNCATE',
  'CREATE',
  'DROP',
  'ALTER',
  'COPY',
  'CALL',
  'EXECUTE',
  'GRANT',
  'REVOKE',
  'LOAD',
]);

/** Functions that read or write the database host's files, run other SQL, or reach other hosts. */
const HOST_FUNCTIONS: Readonly<Partial<Record<SqlFamily, ReadonlySet<string>>>> = {
  mysql: new Set(['LOAD_FILE', 'SYS_EXEC', 'SYS_EVAL']),
  postgres: new Set([
    'PG_READ_FILE',
    'PG_READ_BINARY_FILE',
    'PG_LS_DIR',
    'PG_STAT_FILE',
    'PG_LS_LOGDIR',
    'PG_LS_WALDIR',
    'PG_LS_TMPDIR',
    'PG_LS_ARCHIVE_STATUSDIR',
    'PG_FILE_WRITE',
    'PG_FILE_RENAME',
    'PG_FILE_UNLINK',
    'LO_IMPORT',
    'LO_EXPORT',
    'LO_FROM_BYTEA',
    'LO_CREATE',
    'LO_CREAT',
    'LO_PUT',
    'LO_UNLINK',
    // Run the SQL in their string argument, out of this lexer's sight.
    'QUERY_TO_XML',
    'QUERY_TO_XMLSCHEMA',
    'QUERY_TO_XML_AND_XMLSCHEMA',
    'CURSOR_TO_XML',
    'SET_CONFIG',
    'PG_TERMINATE_BACKEND',
    'PG_CANCEL_BACKEND',
    'PG_RELOAD_CONF',
    'PG_ROTATE_LOGFILE',
    'PG_LOGICAL_EMIT_MESSAGE',
  ]),
};

/** Postgres' dblink family (`dblink`, `dblink_exec`, `dblink_connect`, …) reaches other servers. */
const POSTGRES_PREFIXES = ['DBLINK'];

type TokenKind = 'word' | 'ident' | 'string' | 'punct' | 'other';
interface Token {
  readonly kind: TokenKind;
  /** Upper-cased for words; the identifier's text for quoted identifiers; the character for punct. */
  readonly text: string;
}

class Refusal {
  constructor(readonly reason: string) {}
}

const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const DOLLAR_TAG = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/** Index just past a quoted run opening at `start` with `close`; throws when unterminated. */
function skipQuoted(sql: string, start: number, close: string, backslash: boolean): [number, string] {
  let text = '';
  let i = start;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (backslash && ch === '\\') {
      text += sql.slice(i, i + 2);
      i += 2;
    } else if (sql.startsWith(close, i)) {
      // A doubled single-character quote is that quote inside the run.
      if (close.length === 1 && sql[i + 1] === close) {
        text += close;
        i += 2;
      } else {
        return [i + close.length, text];
      }
    } else {
      text += ch;
      i++;
    }
  }
  throw new Refusal('the statement has an unterminated string or quoted identifier');
}

/** The tokens of `sql` outside comments and whitespace. Throws a Refusal where it fails closed. */
function tokenize(sql: string, family: SqlFamily): Token[] {
  const lex = LEXING[family];
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch <= ' ' || /\s/.test(ch)) {
      i++;
    } else if (
      (ch === '-' &&
        next === '-' &&
        (!lex.dashNeedsSpace || i + 2 >= sql.length || (sql[i + 2] as string) <= ' ')) ||
      (ch === '#' && lex.hashComments) ||
      (ch === '/' && next === '/' && lex.slashComments)
    ) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && next === '*') {
      if (family === 'mysql' && (sql[i + 2] === '!' || sql.startsWith('M!', i + 2))) {
        throw new Refusal('MySQL executable comments (/*! … */) are not allowed');
      }
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) throw new Refusal('the statement has an unterminated comment');
      // Engines disagree on nesting (Postgres nests, MySQL does not): refuse rather than guess.
      if (sql.slice(i + 2, end).includes('/*')) throw new Refusal('nested comments are not allowed');
      i = end + 2;
    } else if (lex.tripleQuotes && (sql.startsWith("'''", i) || sql.startsWith('"""', i))) {
      [i] = skipQuoted(sql, i + 3, sql.slice(i, i + 3), true);
      tokens.push({ kind: 'string', text: '' });
    } else if (ch === "'") {
      [i] = skipQuoted(sql, i + 1, "'", lex.backslashStrings);
      tokens.push({ kind: 'string', text: '' });
    } else if (ch === '"') {
      if (lex.doubleQuoteStrings) {
        [i] = skipQuoted(sql, i + 1, '"', lex.backslashStrings);
        tokens.push({ kind: 'string', text: '' });
      } else {
        let text: string;
        [i, text] = skipQuoted(sql, i + 1, '"', false);
        tokens.push({ kind: 'ident', text: text.toUpperCase() });
      }
    } else if (ch === '`' && lex.backticks) {
      let text: string;
      [i, text] = skipQuoted(sql, i + 1, '`', family === 'bigquery');
      tokens.push({ kind: 'ident', text: text.toUpperCase() });
    } else if (ch === '$' && lex.dollarQuotes && DOLLAR_TAG.test(sql.slice(i, i + 64))) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))?.[0] as string;
      if (!lex.dollarTags && tag !== '$$') {
        tokens.push({ kind: 'other', text: '$' });
        i++;
        continue;
      }
      const end = sql.indexOf(tag, i + tag.length);
      if (end === -1) throw new Refusal('the statement has an unterminated dollar-quoted string');
      i = end + tag.length;
      tokens.push({ kind: 'string', text: '' });
    } else if (WORD_START.test(ch)) {
      let end = i + 1;
      while (end < sql.length && WORD_PART.test(sql[end] as string)) end++;
      const word = sql.slice(i, end).toUpperCase();
      const after = sql[end];
      if (lex.escapeStrings && word === 'E' && after === "'") {
        [i] = skipQuoted(sql, end + 1, "'", true);
        tokens.push({ kind: 'string', text: '' });
      } else if (word === 'U' && after === '&' && (sql[end + 1] === '"' || sql[end + 1] === "'")) {
        // U&"…" can spell any identifier with escapes (U&"pg\005fread_file"): never decoded here.
        throw new Refusal('Unicode-escaped identifiers and strings (U&"…") are not allowed');
      } else if (
        (lex.backslashStrings || lex.tripleQuotes) &&
        /^(R|B|RB|BR|N|X|_[A-Z0-9]+)$/.test(word) &&
        (after === "'" || (lex.doubleQuoteStrings && after === '"'))
      ) {
        // Prefixed strings (r'…', b"…", N'…', _utf8mb4'…'): the prefix is no word of its own.
        i = end;
      } else {
        tokens.push({ kind: 'word', text: word });
        i = end;
      }
    } else if (/[0-9]/.test(ch)) {
      let end = i + 1;
      while (end < sql.length && /[0-9A-Za-z_.]/.test(sql[end] as string)) end++;
      tokens.push({ kind: 'other', text: sql.slice(i, end) });
      i = end;
    } else {
      tokens.push({ kind: 'punct', text: ch });
      i++;
    }
  }
  return tokens;
}

/** The reason a bare word (or quoted name) at `index` makes the statement a write, if it does. */
function wordViolation(tokens: readonly Token[], index: number, family: SqlFamily): string | undefined {
  const token = tokens[index] as Token;
  const previous = tokens[index - 1];
  const next = tokens[index + 1];
  const name = token.text;
  const functions = HOST_FUNCTIONS[family];
  const isHostFunction =
    (functions?.has(name) ?? false) ||
    (family === 'postgres' && POSTGRES_PREFIXES.some((prefix) => name.startsWith(prefix)));
  if (isHostFunction) {
    return `${name.toLowerCase()}() reaches the database host's files or other servers`;
  }
  if (token.kind !== 'word') return undefined;
  if (name === 'INTO') {
    const target = next?.kind === 'word' ? next.text : '';
    if (target === 'OUTFILE' || target === 'DUMPFILE')
      return `INTO ${target} writes a file on the database host`;
    return 'SELECT … INTO writes (a table or variables); an analytic may only return rows';
  }
  // `(REPLACE(…)` and `(INSERT(…)` are MySQL string functions, not statements.
  const call = next?.kind === 'punct' && next.text === '(';
  if (previous?.kind === 'punct' && previous.text === '(' && WRITE_WORDS.has(name) && !call) {
    return `${name} inside a query changes data`;
  }
  if (name === 'UPDATE' && previous?.text === 'FOR') return 'SELECT … FOR UPDATE is a locking read';
  if (name === 'UPDATE' && previous?.text === 'KEY' && tokens[index - 2]?.text === 'NO') {
    return 'SELECT … FOR NO KEY UPDATE is a locking read';
  }
  if (name === 'SHARE' && (previous?.text === 'FOR' || previous?.text === 'KEY' || previous?.text === 'IN')) {
    return 'a locking read (FOR SHARE, LOCK IN SHARE MODE) is not a plain read';
  }
  if ((name === 'OUTFILE' || name === 'DUMPFILE') && family === 'mysql') {
    return `${name} writes a file on the database host`;
  }
  return undefined;
}

/**
 * Why `sql` is not a single read-only statement in the given SQL family, or `undefined` when it
 * is one. The reason is safe to show to the analytic's owner and to its callers: it names the
 * construct, never quotes the statement.
 *
 * Refused on every family: anything but one statement (a `;` followed by more), a first keyword
 * other than the family's query keywords (SELECT, WITH, VALUES, TABLE; DuckDB and BigQuery also
 * FROM; Snowflake also SHOW and DESCRIBE), `SELECT … INTO` (a table, variables, or MySQL's
 * `INTO OUTFILE`/`INTO DUMPFILE`), a write right after `(` (a data-modifying CTE), locking reads
 * (`FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`), nested comments, unterminated strings or
 * comments. MySQL: also `LOAD_FILE()` and executable comments (`/*! … *\/`). Postgres: also the
 * functions that read or list server files (`pg_read_file`, `pg_ls_dir`, …), large objects
 * (`lo_import`, `lo_export`, …), `dblink*`, functions that run SQL given as a string
 * (`query_to_xml`), `set_config` and server signalling. `COPY`, `LOAD DATA`, `ATTACH`,
 * `INSTALL`, `EXPORT`, `PUT`, `GET`, `CALL` and every other statement fail the first-keyword rule.
 *
 * @example
 * readOnlyViolation("SELECT 'INTO OUTFILE' AS s", 'mysql')        // undefined
 * readOnlyViolation("SELECT 1 INTO OUTFILE '/tmp/x'", 'mysql')    // 'INTO OUTFILE writes a file …'
 * readOnlyViolation('SELECT 1; DROP TABLE t', 'postgres')          // 'the SQL holds more than one …'
 */
export function readOnlyViolation(sql: string, family: SqlFamily = 'ansi'): string | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(sql, family);
  } catch (error) {
    if (error instanceof Refusal) return error.reason;
    throw error;
  }
  const semicolon = tokens.findIndex((t) => t.kind === 'punct' && t.text === ';');
  if (semicolon !== -1) {
    if (tokens.slice(semicolon).some((t) => !(t.kind === 'punct' && t.text === ';'))) {
      return 'the SQL holds more than one statement; an analytic is a single query';
    }
    tokens = tokens.slice(0, semicolon);
  }
  const first = tokens.find((t) => !(t.kind === 'punct' && t.text === '('));
  if (first === undefined) return 'the SQL holds no statement';
  const allowed = FIRST_WORDS[family];
  if (first.kind !== 'word' || !allowed.has(first.text)) {
    const what = first.kind === 'word' ? `${first.text} statements` : 'this statement';
    return `only queries (${[...allowed].join(', ')}) run on a read-only connection, not ${what}`;
  }
  for (let i = 0; i < tokens.length; i++) {
    const reason = wordViolation(tokens, i, family);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * Throws `ConnectorError('QUERY_FAILED')` with driverCode `READ_ONLY` (the message says
 * "not read-only" and why) unless `sql` is a single read-only statement of `family`; see
 * {@link readOnlyViolation}. The SDK runtime calls it on every compiled statement before a
 * session sees it, for every connector; plugins need not call it themselves.
 */
export function assertReadOnlySql(sql: string, family: SqlFamily = 'ansi'): void {
  const violation = readOnlyViolation(sql, family);
  if (violation !== undefined) {
    throw new ConnectorError('QUERY_FAILED', `the SQL is not read-only: ${violation}`, {
      driverCode: 'READ_ONLY',
      warehouseMessage: `not read-only: ${violation}`,
    });
  }
}
