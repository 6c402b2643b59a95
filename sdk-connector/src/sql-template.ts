// Named-parameter templates: an owner writes `:name` placeholders once, parseTemplate scans the
// SQL a single time (skipping strings, quoted identifiers, comments and `::` casts), and
// compileTemplate turns the recorded segments into each engine's native placeholders with a join,
// so values are bound, never spliced, and the SQL text never depends on what a caller sent.
import { ConnectorError, type ConnectorErrorDetail } from './connector-error.js';
import type { BoundParam, CompiledQuery, SqlDialect } from './connector-plugin.js';
import type { ParamValues, ScalarParamType, ScalarValue, TypedValue } from './param-types.js';

/** A parsed analytic query: parse once with {@link parseTemplate}, compile per call. */
export interface SqlTemplate {
  /** The original SQL text. */
  readonly sql: string;
  /** Distinct parameter names in order of first use. */
  readonly names: readonly string[];
  /** The SQL text around the placeholders; always one element longer than `placeholders`. */
  readonly chunks: readonly string[];
  /** The parameter name of each placeholder occurrence, in order. */
  readonly placeholders: readonly string[];
  /** The lexical rules the text was scanned with (see {@link SqlDialect}); compile re-scans on a mismatch. */
  readonly lexicon: string;
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;
// A `:` right after one of these is part of the SQL (Snowflake `col:path`, `a:b`), not a placeholder.
const WORD_BEFORE = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/** ANSI lexical rules, for templates parsed before their dialect is known. */
const GENERIC: SqlDialect = { placeholders: 'literal' };

/** Dialects are long-lived constants: their lexicon is computed once, not on every compile. */
const lexicons = new WeakMap<SqlDialect, string>();

function lexiconOf(dialect: SqlDialect): string {
  let lexicon = lexicons.get(dialect);
  if (lexicon === undefined) {
    lexicon = computeLexicon(dialect);
    lexicons.set(dialect, lexicon);
  }
  return lexicon;
}

function computeLexicon(dialect: SqlDialect): string {
  return [
    dialect.backslashEscapes === true ? 'b' : '',
    dialect.backtickIdentifiers === true ? 't' : '',
    dialect.dollarQuotes === true ? 'd' : '',
    dialect.hashComments === true ? 'h' : '',
    dialect.placeholders,
  ].join('');
}

function invalid(message: string, details: readonly ConnectorErrorDetail[] = [{ message }]): ConnectorError {
  return new ConnectorError('PARAM_INVALID', message, { details });
}

/**
 * Scans an analytic's SQL once and records where its `:name` placeholders are. A `:name` counts
 * only outside single-quoted strings (`''` doubling; backslash escapes when
 * `dialect.backslashEscapes`, and in `E'…'` strings), double-quoted identifiers, backtick
 * identifiers (`dialect.backtickIdentifiers`), `$tag$…$tag$` (`dialect.dollarQuotes`), `--`, `#`
 * (`dialect.hashComments`) and `/* *\/` comments, and never as part of a `::` cast
 * (`:name::int` is `name` then a cast) or right after a word character (`col:field`).
 * Names match `[A-Za-z_][A-Za-z0-9_]*`. Without a dialect the text is scanned with ANSI rules;
 * compileTemplate re-scans it with its dialect's rules when they differ.
 *
 * @throws ConnectorError `PARAM_INVALID` for an unterminated string, identifier or comment, or
 * when the text already holds the engine's own placeholders (`$1`, `?`, `@p`), which would shift
 * the bindings.
 */
export function parseTemplate(sql: string, dialect: SqlDialect = GENERIC): SqlTemplate {
  const chunks: string[] = [];
  const placeholders: string[] = [];
  let chunkStart = 0;
  let i = 0;
  const n = sql.length;
  // Postgres nests block comments; MySQL does not. Postgres-family dialects are the ones with dollar quotes.
  const nestedComments = dialect.dollarQuotes === true;

  const skipQuoted = (quote: string, backslashes: boolean, what: string): void => {
    const start = i;
    i++;
    for (;;) {
      if (i >= n) throw invalid(`unterminated ${what} starting at offset ${start}`);
      const c = sql[i];
      if (backslashes && c === '\\') i += 2;
      else if (c === quote) {
        if (sql[i + 1] === quote) i += 2;
        else {
          i++;
          return;
        }
      } else i++;
    }
  };

  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "'") {
      const prev = sql[i - 1];
      const escapeString = (prev === 'E' || prev === 'e') && !WORD_BEFORE.test(sql[i - 2] ?? ' ');
      skipQuoted("'", dialect.backslashEscapes === true || escapeString, 'string');
    } else if (c === '"') {
      // MySQL reads "…" as a string with backslash escapes; elsewhere it is an identifier.
      skipQuoted('"', dialect.backslashEscapes === true, 'quoted identifier');
    } else if (c === '`' && dialect.backtickIdentifiers === true) {
      skipQuoted('`', false, 'quoted identifier');
    } else if (c === '-' && next === '-' && (dialect.hashComments !== true || isSpaceOrEnd(sql[i + 2]))) {
      i = skipLine(sql, i);
    } else if (c === '#' && dialect.hashComments === true) {
      i = skipLine(sql, i);
    } else if (c === '/' && next === '*') {
      // MySQL runs the body of `/*! … */`: scan it as SQL.
      if (dialect.hashComments === true && sql[i + 2] === '!') i += 3;
      else i = skipBlockComment(sql, i, nestedComments);
    } else if (c === '$' && dialect.dollarQuotes === true && !WORD_BEFORE.test(sql[i - 1] ?? ' ')) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 256));
      if (tag !== null) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        if (close < 0) throw invalid(`unterminated dollar-quoted string starting at offset ${i}`);
        i = close + tag[0].length;
      } else {
        refuseNativePlaceholder(sql, i, dialect);
        i++;
      }
    } else if (c === ':' && next === ':') {
      i += 2;
    } else if (
      c === ':' &&
      next !== undefined &&
      NAME_START.test(next) &&
      !WORD_BEFORE.test(sql[i - 1] ?? ' ')
    ) {
      let end = i + 2;
      while (end < n && NAME_PART.test(sql[end]!)) end++;
      chunks.push(sql.slice(chunkStart, i));
      placeholders.push(sql.slice(i + 1, end));
      chunkStart = end;
      i = end;
    } else {
      refuseNativePlaceholder(sql, i, dialect);
      i++;
    }
  }
  chunks.push(sql.slice(chunkStart));
  return Object.freeze({
    sql,
    names: Object.freeze([...new Set(placeholders)]),
    chunks: Object.freeze(chunks),
    placeholders: Object.freeze(placeholders),
    lexicon: lexiconOf(dialect),
  });
}

function isSpaceOrEnd(c: string | undefined): boolean {
  return c === undefined || c <= ' ';
}

function skipLine(sql: string, i: number): number {
  const end = sql.indexOf('\n', i);
  return end < 0 ? sql.length : end + 1;
}

function skipBlockComment(sql: string, start: number, nested: boolean): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*' && (nested || depth === 0)) {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  throw invalid(`unterminated comment starting at offset ${start}`);
}

/** An engine placeholder written by hand would take the next value and shift every binding after it. */
function refuseNativePlaceholder(sql: string, i: number, dialect: SqlDialect): void {
  const c = sql[i];
  const next = sql[i + 1] ?? '';
  const found =
    (dialect.placeholders === 'numbered' &&
      c === '$' &&
      /[0-9]/.test(next) &&
      !WORD_BEFORE.test(sql[i - 1] ?? ' ')) ||
    (dialect.placeholders === 'positional' && c === '?') ||
    (dialect.placeholders === 'named' && c === '@' && NAME_START.test(next) && sql[i - 1] !== '@');
  if (found)
    throw invalid(`the template uses a native placeholder at offset ${i}; write :name placeholders instead`);
}

/**
 * Compiles a parsed template for a dialect with validated values (see validateParams):
 * - `numbered`: `$1…$n`, one per occurrence, each followed by `dialect.castFor(type, array)`;
 *   arrays are bound as one value.
 * - `positional`: `?` per occurrence; an array expands to `?, ?, ?` (one scalar param per
 *   element) and an empty or NULL array to `NULL`, unless `dialect.wholeArrays` binds it as one
 *   `?` holding the whole array. Each `?` is followed by `dialect.castFor(type, array)` when the
 *   dialect has one (an expanded element is cast as a scalar).
 * - `named`: `@name` per occurrence, one bound param per distinct name.
 * - `literal`: values rendered with `dialect.renderLiteral`, and `params` is empty.
 *
 * Except for `literal`, the SQL text depends only on the template, the param types and array
 * lengths, never on the values.
 *
 * @throws ConnectorError `PARAM_INVALID` naming every template param missing from `params`, or
 * when a value's shape does not match its `array` flag; `CONFIG_INVALID` when a `literal`
 * dialect has no `renderLiteral`.
 */
export function compileTemplate(
  template: SqlTemplate,
  dialect: SqlDialect,
  params: ParamValues,
): CompiledQuery {
  const parsed = template.lexicon === lexiconOf(dialect) ? template : parseTemplate(template.sql, dialect);
  const missing: string[] = [];
  for (const name of parsed.names) if (!Object.hasOwn(params, name)) missing.push(name);
  if (missing.length > 0) {
    throw invalid(
      `missing value for ${missing.map((m) => `:${m}`).join(', ')}`,
      missing.map((param) => ({ param, message: 'has no value' })),
    );
  }
  const { chunks, placeholders } = parsed;
  const count = placeholders.length;
  const typedValues: TypedValue[] = new Array(count);
  for (let k = 0; k < count; k++) typedValues[k] = checkShape(placeholders[k]!, params[placeholders[k]!]);
  const cacheable = dialect.placeholders !== 'literal';
  if (cacheable) {
    // Analytics run the same template with the same param types call after call: reuse its SQL
    // text (the same string, already flat) and only bind the values.
    const cached = compiledSql.get(template);
    if (cached !== undefined && cached.dialect === dialect && sameShape(cached, typedValues)) {
      const bound: BoundParam[] = [];
      for (let k = 0; k < count; k++) bindOnly(dialect, placeholders[k]!, typedValues[k]!, bound);
      return { sql: cached.sql, params: bound };
    }
  }
  const bound: BoundParam[] = [];
  let sql = chunks[0]!;
  for (let k = 0; k < count; k++) {
    const after = chunks[k + 1]!;
    sql += placeholderFor(dialect, placeholders[k]!, typedValues[k]!, bound, sql.at(-1), after[0]) + after;
  }
  if (cacheable) {
    compiledSql.set(template, {
      dialect,
      types: typedValues.map((t) => t.type),
      arrays: typedValues.map((t) => t.array),
      lengths: typedValues.map(expandedLength),
      sql,
    });
  }
  return { sql, params: bound };
}

/** The SQL compiled last for a template and the param shape it was compiled for. */
interface CompiledSql {
  readonly dialect: SqlDialect;
  readonly types: readonly ScalarParamType[];
  readonly arrays: readonly boolean[];
  /** Elements of each array occurrence (they change `positional` SQL); -1 for scalars. */
  readonly lengths: readonly number[];
  readonly sql: string;
}

const compiledSql = new WeakMap<SqlTemplate, CompiledSql>();

function expandedLength(typed: TypedValue): number {
  return typed.array ? ((typed.value ?? []) as readonly unknown[]).length : -1;
}

/** Whether values of these types (and, for arrays, lengths) compile to the cached SQL text. */
function sameShape(cached: CompiledSql, typedValues: readonly TypedValue[]): boolean {
  for (let k = 0; k < typedValues.length; k++) {
    const typed = typedValues[k]!;
    if (typed.type !== cached.types[k] || typed.array !== cached.arrays[k]) return false;
    if (typed.array && expandedLength(typed) !== cached.lengths[k]) return false;
  }
  return true;
}

/** The bound params placeholderFor would push, without the SQL text (the cached text matches). */
function bindOnly(dialect: SqlDialect, name: string, typed: TypedValue, bound: BoundParam[]): void {
  const { type, array, value } = typed;
  if (dialect.placeholders === 'positional' && array && dialect.wholeArrays !== true) {
    for (const item of (value ?? []) as readonly ScalarValue[])
      bound.push({ name, type, array: false, value: item });
  } else if (dialect.placeholders !== 'named' || !bound.some((b) => b.name === name)) {
    bound.push({ name, type, array, value });
  }
}

function placeholderFor(
  dialect: SqlDialect,
  name: string,
  typed: TypedValue,
  bound: BoundParam[],
  before: string | undefined,
  after: string | undefined,
): string {
  const { type, array, value } = typed;
  switch (dialect.placeholders) {
    case 'numbered':
      bound.push({ name, type, array, value });
      return `$${bound.length}${dialect.castFor?.(type, array) ?? ''}`;
    case 'positional': {
      if (!array || dialect.wholeArrays === true) {
        bound.push({ name, type, array, value });
        return `?${dialect.castFor?.(type, array) ?? ''}`;
      }
      const items = (value ?? []) as readonly ScalarValue[];
      if (items.length === 0) return 'NULL';
      for (const item of items) bound.push({ name, type, array: false, value: item });
      const one = `?${dialect.castFor?.(type, false) ?? ''}`;
      return items.map(() => one).join(', ');
    }
    case 'named':
      if (!bound.some((b) => b.name === name)) bound.push({ name, type, array, value });
      return `@${name}`;
    case 'literal':
      if (dialect.renderLiteral === undefined) {
        throw new ConnectorError('CONFIG_INVALID', 'a literal dialect must provide renderLiteral');
      }
      return padLiteral(dialect.renderLiteral({ name, type, array, value }), before, after);
    default:
      throw new ConnectorError('CONFIG_INVALID', `unknown placeholder style ${String(dialect.placeholders)}`);
  }
}

// Characters a literal may touch without the two fusing into one token (`-` + `-5` is a comment,
// `'a'` + `'b'` one string).
const SAFE_NEIGHBOUR = /[\s(),=<>;[\]]/;

function padLiteral(literal: string, before: string | undefined, after: string | undefined): string {
  const left = before === undefined || SAFE_NEIGHBOUR.test(before) ? '' : ' ';
  const right = after === undefined || SAFE_NEIGHBOUR.test(after) ? '' : ' ';
  return left + literal + right;
}

function hasNul(value: unknown): boolean {
  return typeof value === 'string' && value.includes('\u0000');
}

function checkShape(name: string, typed: TypedValue | undefined): TypedValue {
  if (typeof typed !== 'object' || typed === null) {
    throw invalid(`:${name} has no typed value`, [{ param: name, message: 'has no typed value' }]);
  }
  const { array, value } = typed;
  if (value !== null && Array.isArray(value) !== array) {
    throw invalid(`:${name} ${array ? 'must be an array' : 'must not be an array'}`, [
      { param: name, message: array ? 'must be an array' : 'must not be an array' },
    ]);
  }
  // No engine stores NUL in text and some drivers crash on it: refuse it even from unvalidated callers.
  if (Array.isArray(value) ? value.some(hasNul) : hasNul(value)) {
    throw invalid(`:${name} must not contain NUL characters`, [
      { param: name, message: 'must not contain NUL characters' },
    ]);
  }
  return typed;
}
