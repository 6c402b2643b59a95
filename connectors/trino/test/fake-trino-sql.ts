// The SQL side of the fake Trino coordinator (test code): a small Trino lexer, the parse of
// `EXECUTE IMMEDIATE '<sql>' USING <expr>, …`, and the few Trino → DuckDB translations the
// conformance kit and the protocol tests need. Every translation works on tokens, never inside
// string literals, so a hostile string in a USING literal stays a string:
// - `U&'…'` strings (Trino's escaped strings) → plain DuckDB strings (DuckDB has no U& form);
// - `TIMESTAMP '… UTC'` → `TIMESTAMPTZ '… UTC'` (DuckDB would drop the zone and type it TIMESTAMP);
// - `TIMESTAMP(3) WITH TIME ZONE` → `TIMESTAMPTZ`, `ARRAY(T)` (a type) → `T[]`;
// - `sequence(a, b)` → `generate_series(a, b)` (Trino has no generate_series, DuckDB no sequence);
// - each `?` of the prepared SQL → `CAST(? AS <type of its USING value>)`, so a NULL keeps its
//   type (DuckDB would bind an untyped NULL as INTEGER; Trino types `CAST(NULL AS T)` as T).

/** A lexical token of Trino SQL. */
export interface Token {
  readonly kind: 'space' | 'comment' | 'string' | 'ustring' | 'quoted' | 'number' | 'word' | 'punct';
  readonly text: string;
}

/** A Trino error the fake reports in the query's failure page. */
export class FakeTrinoError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
const WORD = /^[A-Za-z_][A-Za-z0-9_]*/;

function closeQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  for (;;) {
    const end = sql.indexOf(quote, i);
    if (end < 0) throw new FakeTrinoError('SYNTAX_ERROR', `line 1:${start + 1}: unterminated quoted text`);
    if (sql[end + 1] === quote) i = end + 2;
    else return end + 1;
  }
}

/** Splits Trino SQL into tokens; throws SYNTAX_ERROR for unterminated strings or comments. */
export function lexTrino(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const rest = sql.slice(i, i + 2);
    let end: number;
    let kind: Token['kind'];
    if (c <= ' ') {
      end = i + 1;
      while (end < sql.length && sql[end]! <= ' ') end++;
      kind = 'space';
    } else if (rest === '--') {
      const nl = sql.indexOf('\n', i);
      end = nl < 0 ? sql.length : nl;
      kind = 'comment';
    } else if (rest === '/*') {
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) throw new FakeTrinoError('SYNTAX_ERROR', `line 1:${i + 1}: unterminated comment`);
      end = close + 2;
      kind = 'comment';
    } else if (c === "'") {
      end = closeQuote(sql, i, "'");
      kind = 'string';
    } else if ((c === 'U' || c === 'u') && sql.slice(i + 1, i + 3) === "&'") {
      end = closeQuote(sql, i + 2, "'");
      kind = 'ustring';
    } else if (c === '"') {
      end = closeQuote(sql, i, '"');
      kind = 'quoted';
    } else if (/\d/.test(c) || (c === '.' && /\d/.test(sql[i + 1] ?? ''))) {
      end = i + NUMBER.exec(sql.slice(i))![0].length;
      kind = 'number';
    } else if (WORD.test(c)) {
      end = i + WORD.exec(sql.slice(i))![0].length;
      kind = 'word';
    } else {
      end = i + 1;
      kind = 'punct';
    }
    tokens.push({ kind, text: sql.slice(i, end) });
    i = end;
  }
  return tokens;
}

const isCode = (token: Token): boolean => token.kind !== 'space' && token.kind !== 'comment';
const isWord = (token: Token | undefined, word: string): boolean =>
  token?.kind === 'word' && token.text.toUpperCase() === word;

/** The value of a `'…'` string token. */
export function stringValue(token: Token): string {
  return token.text.slice(1, -1).replaceAll("''", "'");
}

/** Trino refuses a second statement: its parser expects the end of input at `;`. */
export function refuseStackedStatements(tokens: readonly Token[]): void {
  if (tokens.some((token) => token.kind === 'punct' && token.text === ';')) {
    throw new FakeTrinoError('SYNTAX_ERROR', "mismatched input ';'. Expecting: <EOF>");
  }
}

/** `EXECUTE IMMEDIATE '<inner>' [USING e1, e2, …]`, or undefined for any other statement. */
export interface ExecuteImmediate {
  readonly inner: string;
  /** The USING expressions' texts, split at top-level commas. */
  readonly using: readonly string[];
}

/** Recognises and splits an EXECUTE IMMEDIATE statement. */
export function parseExecuteImmediate(tokens: readonly Token[]): ExecuteImmediate | undefined {
  const code = tokens.filter(isCode);
  if (!isWord(code[0], 'EXECUTE') || !isWord(code[1], 'IMMEDIATE')) return undefined;
  const literal = code[2];
  if (literal?.kind !== 'string') {
    throw new FakeTrinoError('SYNTAX_ERROR', 'EXECUTE IMMEDIATE expects a string literal');
  }
  const start = tokens.indexOf(literal) + 1;
  const after = tokens.slice(start);
  const firstAfter = after.find(isCode);
  if (firstAfter === undefined) return { inner: stringValue(literal), using: [] };
  if (!isWord(firstAfter, 'USING')) {
    throw new FakeTrinoError(
      'SYNTAX_ERROR',
      `mismatched input '${firstAfter.text}'. Expecting: 'USING', <EOF>`,
    );
  }
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const token of after.slice(after.indexOf(firstAfter) + 1)) {
    if (token.kind === 'punct' && (token.text === '(' || token.text === '[')) depth++;
    if (token.kind === 'punct' && (token.text === ')' || token.text === ']')) depth--;
    if (depth === 0 && token.kind === 'punct' && token.text === ',') {
      items.push(current);
      current = '';
    } else {
      current += token.text;
    }
  }
  items.push(current);
  if (items.some((item) => item.trim() === '')) {
    throw new FakeTrinoError('SYNTAX_ERROR', 'USING expects a list of expressions');
  }
  return { inner: stringValue(literal), using: items };
}

/** A Trino `U&'…'` string (default escape `\`) as the text it denotes. */
function unicodeStringValue(token: Token): string {
  const body = token.text.slice(3, -1).replaceAll("''", "'");
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') out += c;
    else if (body[i + 1] === '\\') {
      out += '\\';
      i++;
    } else if (body[i + 1] === '+') {
      out += String.fromCodePoint(Number.parseInt(body.slice(i + 2, i + 8), 16));
      i += 7;
    } else {
      out += String.fromCharCode(Number.parseInt(body.slice(i + 1, i + 5), 16));
      i += 4;
    }
  }
  return out;
}

function duckString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Index of the `)` closing the `(` at `open`, or -1. */
function closing(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== 'punct') continue;
    if (token.text === '(') depth++;
    else if (token.text === ')' && --depth === 0) return i;
  }
  return -1;
}

/** The next code token's index at or after `from`. */
function nextCode(tokens: readonly Token[], from: number): number {
  let i = from;
  while (i < tokens.length && !isCode(tokens[i]!)) i++;
  return i;
}

/** Translates a Trino literal expression (a USING value) into DuckDB SQL. */
export function translateLiteral(text: string): string {
  return translateTokens(lexTrino(text));
}

function translateTokens(tokens: readonly Token[]): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'ustring') {
      out += duckString(unicodeStringValue(token));
    } else if (isWord(token, 'TIMESTAMP')) {
      let j = nextCode(tokens, i + 1);
      if (tokens[j]?.text === '(') j = nextCode(tokens, closing(tokens, j) + 1);
      const w = [j, nextCode(tokens, j + 1), nextCode(tokens, nextCode(tokens, j + 1) + 1)];
      if (isWord(tokens[w[0]!], 'WITH') && isWord(tokens[w[1]!], 'TIME') && isWord(tokens[w[2]!], 'ZONE')) {
        out += 'TIMESTAMPTZ';
        i = w[2]!;
      } else if (
        tokens[j]?.kind === 'string' &&
        /\s(UTC|Z|[+-]\d{2}:\d{2}|[A-Za-z]+\/[A-Za-z_]+)$/.test(stringValue(tokens[j]!))
      ) {
        out += 'TIMESTAMPTZ';
      } else {
        out += token.text;
      }
    } else if (isWord(token, 'ARRAY') && tokens[nextCode(tokens, i + 1)]?.text === '(') {
      const open = nextCode(tokens, i + 1);
      const close = closing(tokens, open);
      out += `${translateTokens(tokens.slice(open + 1, close))}[]`;
      i = close;
    } else {
      out += token.text;
    }
  }
  return out;
}

/** Translates a Trino query into DuckDB SQL (function names only; strings are never touched). */
export function translateQuery(tokens: readonly Token[]): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (isWord(token, 'SEQUENCE') && tokens[nextCode(tokens, i + 1)]?.text === '(') out += 'generate_series';
    else out += token.text;
  }
  return out;
}

/** Replaces the k-th `?` of `tokens` with `CAST(? AS types[k])`; checks the counts match, as Trino does. */
export function castPlaceholders(tokens: readonly Token[], types: readonly string[]): Token[] {
  let k = 0;
  const out = tokens.map((token): Token => {
    if (token.kind !== 'punct' || token.text !== '?') return token;
    const type = types[k++];
    return { kind: 'punct', text: type === undefined ? '?' : `CAST(? AS ${type})` };
  });
  if (k !== types.length) {
    throw new FakeTrinoError(
      'INVALID_PARAMETER_USAGE',
      `Incorrect number of parameters: expected ${k} but found ${types.length}`,
    );
  }
  return out;
}
