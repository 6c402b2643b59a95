// Test code for fake-bigquery-server.ts: reads a job's typed query parameters and translates the
// GoogleSQL the connector sends into DuckDB SQL — only where the two differ for what the tests
// run, each translation listed here:
// - `@name` → `($name::T)`: a DuckDB named parameter cast to the declared BigQuery type (DuckDB
//   would otherwise bind a NULL as an untyped NULL); an undeclared name fails like BigQuery.
// - `x IN UNNEST(expr)` → `x IN (SELECT UNNEST(expr))`.
// - `GENERATE_ARRAY(a, b)` → `generate_series(a, b)` (both inclusive lists).
// Strings ('…', "…", triple-quoted, r/b prefixes), backtick identifiers and comments (`#`, `--`,
// `/* */`) are copied unchanged.
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  type DuckDBType,
  type DuckDBValue,
  dateValue,
  LIST,
  listValue,
  TIMESTAMPTZ,
  timestampTZValue,
  VARCHAR,
} from '@duckdb/node-api';
import { FakeJobError } from './fake-bigquery-rows.js';

/** One bound parameter, ready for DuckDB. */
export interface FakeParam {
  readonly duckType: DuckDBType;
  /** The DuckDB type name the placeholder is cast to. */
  readonly cast: string;
  readonly value: DuckDBValue;
}

interface ScalarKind {
  readonly type: DuckDBType;
  readonly cast: string;
  parse(text: string): DuckDBValue;
}

const INT64_TEXT = /^-?\d{1,19}$/;
const DATE_TEXT = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function invalid(message: string): FakeJobError {
  return new FakeJobError('invalid', message);
}

/** Microseconds since the epoch of a BigQuery timestamp text (ISO `T…Z`/offset, or `YYYY-MM-DD HH:MM:SS[.ffffff]`). */
function timestampMicros(text: string): bigint {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\s*(Z|[+-]\d{2}:?\d{2}|UTC)?$/i.exec(
    text.trim(),
  );
  if (m === null) throw invalid(`Invalid TIMESTAMP value: ${text}`);
  const zone = m[4] === undefined || /^(Z|UTC)$/i.test(m[4]) ? 'Z' : m[4];
  const ms = Date.parse(`${m[1]}T${m[2]}${zone}`);
  if (!Number.isFinite(ms)) throw invalid(`Invalid TIMESTAMP value: ${text}`);
  return BigInt(ms) * 1000n + BigInt((m[3] ?? '').padEnd(6, '0'));
}

const SCALARS: Readonly<Record<string, ScalarKind>> = {
  INT64: {
    type: BIGINT,
    cast: 'BIGINT',
    parse(text) {
      const n = INT64_TEXT.test(text) ? BigInt(text) : undefined;
      if (n === undefined || n < INT64_MIN || n > INT64_MAX) throw invalid(`Invalid INT64 value: ${text}`);
      return n;
    },
  },
  FLOAT64: {
    type: DOUBLE,
    cast: 'DOUBLE',
    parse(text) {
      const n = Number(text);
      if (Number.isNaN(n) && text !== 'NaN') throw invalid(`Invalid FLOAT64 value: ${text}`);
      return n;
    },
  },
  BOOL: {
    type: BOOLEAN,
    cast: 'BOOLEAN',
    parse(text) {
      if (/^true$/i.test(text)) return true;
      if (/^false$/i.test(text)) return false;
      throw invalid(`Invalid BOOL value: ${text}`);
    },
  },
  STRING: { type: VARCHAR, cast: 'VARCHAR', parse: (text) => text },
  DATE: {
    type: DATE,
    cast: 'DATE',
    parse(text) {
      const m = DATE_TEXT.exec(text);
      if (m === null) throw invalid(`Invalid DATE value: ${text}`);
      return dateValue({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) });
    },
  },
  TIMESTAMP: {
    type: TIMESTAMPTZ,
    cast: 'TIMESTAMPTZ',
    parse: (text) => timestampTZValue(timestampMicros(text)),
  },
};
const ALIASES: Readonly<Record<string, string>> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' };

function scalarKind(type: unknown): ScalarKind {
  const name = typeof type === 'string' ? type.toUpperCase() : '';
  const kind = SCALARS[ALIASES[name] ?? name];
  if (kind === undefined) throw invalid(`The fake does not support query parameters of type ${String(type)}`);
  return kind;
}

/** A `parameterValue.value` as text: BigQuery takes strings, and numbers/booleans from lenient clients. */
function valueText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw invalid('A query parameter value must be a string');
}

interface QueryParameterJson {
  readonly name?: unknown;
  readonly parameterType?: { readonly type?: unknown; readonly arrayType?: { readonly type?: unknown } };
  readonly parameterValue?: {
    readonly value?: unknown;
    readonly arrayValues?: readonly { readonly value?: unknown }[];
  };
}

/** Reads `configuration.query.queryParameters` (NAMED mode) into DuckDB values by name. */
export function readParameters(raw: unknown): Map<string, FakeParam> {
  const params = new Map<string, FakeParam>();
  if (raw === undefined) return params;
  if (!Array.isArray(raw)) throw invalid('queryParameters must be a list');
  for (const entry of raw as QueryParameterJson[]) {
    const name = typeof entry.name === 'string' ? entry.name : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw invalid('Named query parameters need a valid name');
    const type = entry.parameterType?.type;
    if (typeof type === 'string' && type.toUpperCase() === 'ARRAY') {
      const kind = scalarKind(entry.parameterType?.arrayType?.type);
      // REST has no NULL array: absent arrayValues and [] are the same empty array.
      const items = (entry.parameterValue?.arrayValues ?? []).map((item) => {
        const text = valueText(item.value);
        if (text === null) throw invalid(`Array parameter @${name} cannot hold a NULL element`);
        return kind.parse(text);
      });
      params.set(name.toLowerCase(), {
        duckType: LIST(kind.type),
        cast: `${kind.cast}[]`,
        value: listValue(items),
      });
    } else {
      const kind = scalarKind(type);
      const text = valueText(entry.parameterValue?.value);
      params.set(name.toLowerCase(), {
        duckType: kind.type,
        cast: kind.cast,
        value: text === null ? null : kind.parse(text),
      });
    }
  }
  return params;
}

/** Index just past the quoted text starting at `i` (a backslash always escapes the next character). */
function quotedEnd(sql: string, i: number): number {
  const quote = sql[i] as string;
  const close = quote !== '`' && sql.startsWith(quote.repeat(3), i) ? quote.repeat(3) : quote;
  let j = i + close.length;
  while (j < sql.length) {
    if (sql[j] === '\\') j += 2;
    else if (sql.startsWith(close, j)) return j + close.length;
    else j++;
  }
  throw new FakeJobError('invalidQuery', 'Syntax error: Unclosed string literal');
}

/** Translates GoogleSQL to DuckDB SQL (see the header); parameter names are case-insensitive. */
export function translateSql(sql: string, params: ReadonlyMap<string, FakeParam>): string {
  let out = '';
  let i = 0;
  let depth = 0;
  const unnestCloses: number[] = [];
  while (i < sql.length) {
    const c = sql[i] as string;
    const rest = sql.slice(i, i + 2);
    let end = i + 1;
    if (c === '#' || rest === '--') {
      const nl = sql.indexOf('\n', i);
      end = nl < 0 ? sql.length : nl + 1;
    } else if (rest === '/*') {
      const close = sql.indexOf('*/', i + 2);
      end = close < 0 ? sql.length : close + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      end = quotedEnd(sql, i);
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      const name = /^@([A-Za-z_][A-Za-z0-9_]*)/.exec(sql.slice(i))?.[1] as string;
      const param = params.get(name.toLowerCase());
      if (param === undefined) throw new FakeJobError('invalidQuery', `Query parameter '${name}' not found`);
      out += `($${name.toLowerCase()}::${param.cast})`;
      i += name.length + 1;
      continue;
    } else if (/[A-Za-z_]/.test(c)) {
      while (end < sql.length && /[A-Za-z0-9_]/.test(sql[end] as string)) end++;
      const word = sql.slice(i, end);
      const unnest = /^\s+UNNEST\s*\(/i.exec(sql.slice(end));
      if (/^IN$/i.test(word) && unnest !== null) {
        out += `${word} (SELECT UNNEST(`;
        depth++;
        unnestCloses.push(depth);
        i = end + unnest[0].length;
        continue;
      }
      out += /^GENERATE_ARRAY$/i.test(word) ? 'generate_series' : word;
      i = end;
      continue;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      if (unnestCloses.at(-1) === depth) {
        unnestCloses.pop();
        out += ')';
      }
      depth--;
    }
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}
