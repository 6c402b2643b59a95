// Test helper: runs an example analytic's SQL directly on DuckDB, the way a connector would,
// so the example YAML is proven against the demo data without the gateway or the SDK. `:name`
// becomes `$n` (one number per distinct name, reused on repeats) and every value is bound with
// an explicit DuckDB type, a NULL included, so `:x IS NULL` and list parameters bind as typed.
// Deliberately small: the example SQL has no `:` inside string literals or comments.
import {
  BIGINT,
  BOOLEAN,
  DATE,
  DOUBLE,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
  dateValue,
  LIST,
  listValue,
  TIMESTAMP,
  timestampValue,
  VARCHAR,
} from '@duckdb/node-api';

/** The part of an analytic's param spec this helper needs. */
export interface ParamSpecLike {
  readonly type: string;
  readonly items?: { readonly type: string };
  readonly default?: unknown;
}

/** SQL with `$n` placeholders and the param name behind each number (index 0 is `$1`). */
export interface NumberedSql {
  readonly sql: string;
  readonly names: readonly string[];
}

// `:name` not preceded by another `:` (so `x::INTEGER` casts are left alone).
const NAMED_PARAM = /(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g;

/** Rewrites `:name` placeholders to DuckDB's `$n`, numbering names in order of first use. */
export function toNumberedPlaceholders(sql: string): NumberedSql {
  const names: string[] = [];
  const out = sql.replace(NAMED_PARAM, (_match, name: string) => {
    let index = names.indexOf(name);
    if (index === -1) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
  return { sql: out, names };
}

function scalarType(type: string): DuckDBType {
  switch (type) {
    case 'integer':
      return BIGINT;
    case 'number':
      return DOUBLE;
    case 'boolean':
      return BOOLEAN;
    case 'date':
      return DATE;
    case 'timestamp':
      return TIMESTAMP;
    case 'string':
    case 'enum':
      return VARCHAR;
    default:
      throw new Error(`unknown param type ${type}`);
  }
}

function scalarValue(type: string, value: unknown): DuckDBValue {
  switch (type) {
    case 'integer':
      return BigInt(value as number);
    case 'date':
      return dateValue(Date.parse(`${String(value)}T00:00:00Z`) / 86_400_000);
    case 'timestamp':
      return timestampValue(BigInt(Date.parse(String(value))) * 1000n);
    default:
      return value as DuckDBValue;
  }
}

/**
 * Runs `sql` with `values` (falling back to each spec's default, else a typed NULL) and returns
 * the rows as DuckDB's plain JS conversion gives them (DECIMAL → number, BIGINT → bigint,
 * DATE → Date): good enough to check shapes and sums, not the gateway's JSON-safe values.
 */
export async function runAnalyticSql(
  connection: DuckDBConnection,
  sql: string,
  params: Readonly<Record<string, ParamSpecLike>>,
  values: Readonly<Record<string, unknown>>,
): Promise<Record<string, unknown>[]> {
  const numbered = toNumberedPlaceholders(sql);
  const bound: DuckDBValue[] = [];
  const types: DuckDBType[] = [];
  for (const name of numbered.names) {
    const spec = params[name];
    if (spec === undefined) throw new Error(`the SQL uses :${name}, which params does not declare`);
    const value = values[name] ?? spec.default ?? null;
    if (spec.type === 'array') {
      const itemType = spec.items?.type ?? 'string';
      types.push(LIST(scalarType(itemType)));
      bound.push(
        value === null ? null : listValue((value as unknown[]).map((v) => scalarValue(itemType, v))),
      );
    } else {
      types.push(scalarType(spec.type));
      bound.push(value === null ? null : scalarValue(spec.type, value));
    }
  }
  const prepared = await connection.prepare(numbered.sql);
  try {
    prepared.bind(bound, types);
    const reader = await prepared.runAndReadAll();
    return reader.getRowObjectsJS();
  } finally {
    prepared.destroySync();
  }
}
