// Test code: the Snowflake → DuckDB SQL translation of the fake Snowflake server
// (fake-snowflake-server.ts). It translates only what the connector's tests send and DuckDB
// would read differently, each on purpose:
//
// - '…' strings: Snowflake processes backslash escapes (\' \\ \n \t \r \b \f \0); DuckDB does
//   not, so each string is decoded and re-emitted with '' doubling.
// - `//` line comments (Snowflake) become `--`.
// - Type names after `::` or `AS`: NUMBER[(p,s)] → DECIMAL (bare NUMBER → DECIMAL(38,0)); FLOAT,
//   FLOAT4, FLOAT8, REAL → DOUBLE (DuckDB's FLOAT is 4 bytes, Snowflake's is a double);
//   TIMESTAMP_TZ/_LTZ/TIMESTAMPLTZ → TIMESTAMPTZ; TIMESTAMP_NTZ/TIMESTAMPNTZ → TIMESTAMP;
//   VARIANT → JSON. An alias spelled like one of these types would be renamed too.
// - SYSTEM$WAIT(n[, unit]) calls the macro quarry_fake_wait, a CPU-bound DuckDB query long enough
//   to outlast any test's time limit, so a "slow query" is a real running DuckDB query that only
//   interrupt() stops.
//
// It also reports what the server needs to answer like Snowflake: how many statements the text
// holds (MULTI_STATEMENT_COUNT) and which identifiers were double-quoted (Snowflake upper-cases
// unquoted names, so result columns keep their case only when quoted).

/** A translated statement. */
export interface TranslatedSql {
  readonly sql: string;
  /** Non-empty statements separated by `;`. */
  readonly statementCount: number;
  /** Identifiers written in double quotes, unquoted (`"v"` → `v`). */
  readonly quoted: ReadonlySet<string>;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  FLOAT: 'DOUBLE',
  FLOAT4: 'DOUBLE',
  FLOAT8: 'DOUBLE',
  REAL: 'DOUBLE',
  TIMESTAMP_TZ: 'TIMESTAMPTZ',
  TIMESTAMP_LTZ: 'TIMESTAMPTZ',
  TIMESTAMPLTZ: 'TIMESTAMPTZ',
  TIMESTAMP_NTZ: 'TIMESTAMP',
  TIMESTAMPNTZ: 'TIMESTAMP',
  VARIANT: 'JSON',
};

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  '0': '\u0000',
};

const WORD_START = /[A-Za-z_]/;
const WORD_PART = /[A-Za-z0-9_$]/;

/** The DuckDB macro SYSTEM$WAIT becomes; created once per fake database. */
export const FAKE_WAIT_MACRO =
  "CREATE OR REPLACE MACRO quarry_fake_wait(amount, unit := 'SECONDS') AS (" +
  "SELECT 'waited ' || amount || ' ' || lower(unit) FROM (" +
  'SELECT count(*) AS n FROM range(CAST(amount AS BIGINT) * 1000000000) WHERE hash(range) % 7 = 0' +
  ') WHERE n >= 0)';

class SqlError extends Error {}

/** Translates one Snowflake SQL text. Throws on an unterminated string, identifier or comment. */
export function translateSql(text: string): TranslatedSql {
  let out = '';
  let i = 0;
  let statementCount = 0;
  let statementHasContent = false;
  const quoted = new Set<string>();
  /** The last significant token, upper-cased, to recognise type positions (`::`, `AS`). */
  let previous = '';

  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === '-' && next === '-') {
      const end = lineEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (ch === '/' && next === '/') {
      const end = lineEnd(text, i);
      out += `--${text.slice(i + 2, end)}`;
      i = end;
    } else if (ch === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new SqlError('unterminated comment');
      out += text.slice(i, end + 2);
      i = end + 2;
    } else if (ch === "'") {
      const [value, end] = readString(text, i);
      out += `'${value.replaceAll("'", "''")}'`;
      i = end;
      statementHasContent = true;
      previous = "'";
    } else if (ch === '"') {
      const end = closingQuote(text, i);
      quoted.add(text.slice(i + 1, end).replaceAll('""', '"'));
      out += text.slice(i, end + 1);
      i = end + 1;
      statementHasContent = true;
      previous = '"';
    } else if (ch === '$' && next === '$') {
      const end = text.indexOf('$$', i + 2);
      if (end === -1) throw new SqlError('unterminated $$ string');
      out += text.slice(i, end + 2);
      i = end + 2;
      statementHasContent = true;
      previous = "'";
    } else if (ch === ';') {
      if (statementHasContent) statementCount++;
      statementHasContent = false;
      out += ch;
      i++;
      previous = ';';
    } else if (WORD_START.test(ch)) {
      let end = i + 1;
      while (end < text.length && WORD_PART.test(text[end] as string)) end++;
      const word = text.slice(i, end);
      const upper = word.toUpperCase();
      if (upper === 'SYSTEM$WAIT') out += 'quarry_fake_wait';
      else if (previous === '::' || previous === 'AS') out += typeName(upper, text, end) ?? word;
      else out += word;
      i = end;
      statementHasContent = true;
      previous = upper;
    } else if (ch === ':' && next === ':') {
      out += '::';
      i += 2;
      previous = '::';
    } else {
      out += ch;
      i++;
      if (!/\s/.test(ch)) {
        statementHasContent = true;
        previous = ch;
      }
    }
  }
  if (statementHasContent) statementCount++;
  return { sql: out, statementCount, quoted };
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf('\n', from);
  return end === -1 ? text.length : end;
}

function typeName(upper: string, text: string, end: number): string | undefined {
  if (upper === 'NUMBER') return /^\s*\(/.test(text.slice(end)) ? 'DECIMAL' : 'DECIMAL(38,0)';
  return TYPE_NAMES[upper];
}

/** The decoded value of the '…' string at `start` and the index just past it. */
function readString(text: string, start: number): [string, number] {
  let value = '';
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\') {
      const escaped = text[i + 1];
      if (escaped === undefined) break;
      value += ESCAPES[escaped] ?? escaped;
      i++;
    } else if (ch === "'") {
      if (text[i + 1] !== "'") return [value, i + 1];
      value += "'";
      i++;
    } else {
      value += ch;
    }
  }
  throw new SqlError('unterminated string');
}

function closingQuote(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] !== '"') continue;
    if (text[i + 1] === '"') {
      i++;
      continue;
    }
    return i;
  }
  throw new SqlError('unterminated quoted identifier');
}

/** True for errors translateSql raises about the statement text (a Snowflake syntax error). */
export function isSqlTextError(error: unknown): boolean {
  return error instanceof SqlError;
}
