// Helpers the Trino test suites share: the conformance fixture as SQL for the fake's DuckDB or for
// a real Trino, the `slow` query, and the running-queries probe over Trino's REST API (the same
// probe works against the fake and a live coordinator).
import {
  CONFORMANCE_ROWS,
  type ConformanceRow,
  conformanceFixtureSql,
} from '@quarry/sdk-connector/conformance';

/**
 * A query that runs far longer than 10 s unless cancelled: a 10^12-row cross join (Trino has no
 * sleep(); `sequence` is capped at 10,000 elements), with `marker` in a comment.
 */
export function slowTrinoQuery(marker: string): string {
  return (
    'SELECT count(*) AS n FROM UNNEST(sequence(1, 10000)) AS a(x) ' +
    'CROSS JOIN UNNEST(sequence(1, 10000)) AS b(y) ' +
    `CROSS JOIN UNNEST(sequence(1, 10000)) AS c(z) /* ${marker} */`
  );
}

function trinoText(value: string | null): string {
  return value === null ? 'NULL' : `'${value.replaceAll("'", "''")}'`;
}

function trinoRow(row: ConformanceRow): string {
  const typed = (type: string, value: string | null): string =>
    value === null ? 'NULL' : `${type} ${trinoText(value)}`;
  return `(${[
    String(row.id),
    trinoText(row.name),
    row.amount === null ? 'NULL' : `CAST(${trinoText(row.amount)} AS decimal(18,2))`,
    typed('BIGINT', row.big === null ? null : row.big.toString()),
    typed('DOUBLE', row.ratio === null ? null : String(row.ratio)),
    row.flag === null ? 'NULL' : String(row.flag),
    typed('DATE', row.day),
    typed('TIMESTAMP', row.ts === null ? null : row.ts.replace('T', ' ').replace('Z', '')),
    trinoText(row.note),
  ].join(', ')})`;
}

/**
 * Statements that create and fill the conformance fixture table: the SDK's portable SQL for the
 * fake's DuckDB, or typed Trino literals for a real Trino (which refuses to insert a varchar
 * into a timestamp column and has no `text` or `double precision` types).
 */
export function createFixtureSql(table: string, engine: 'duckdb' | 'trino'): string[] {
  if (engine === 'duckdb') {
    const fixture = conformanceFixtureSql(table);
    return [fixture.createTable, fixture.insertRows];
  }
  return [
    `CREATE TABLE ${table} (id integer, name varchar(200), amount decimal(18,2), big bigint, ` +
      'ratio double, flag boolean, day date, ts timestamp(3), note varchar)',
    `INSERT INTO ${table} (id, name, amount, big, ratio, flag, day, ts, note) VALUES ${CONFORMANCE_ROWS.map(trinoRow).join(', ')}`,
  ];
}

/** Credentials for the probe: basic, a bearer token, or none. */
export type ProbeAuth = { readonly user: string; readonly password?: string; readonly token?: string };

/** Headers for Trino's REST API with `auth`. */
export function restHeaders(auth: ProbeAuth): Record<string, string> {
  const headers: Record<string, string> = { 'X-Trino-User': auth.user };
  if (auth.password !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  } else if (auth.token !== undefined) {
    headers.Authorization = `Bearer ${auth.token}`;
  }
  return headers;
}

const DONE_STATES = new Set(['FINISHED', 'FAILED']);

/** How many queries containing `marker` are not finished, from `GET /v1/query` (Trino's query list). */
export async function runningQueriesOver(server: string, auth: ProbeAuth, marker: string): Promise<number> {
  const response = await fetch(`${server.replace(/\/+$/, '')}/v1/query`, { headers: restHeaders(auth) });
  if (!response.ok) throw new Error(`GET /v1/query answered HTTP ${response.status}`);
  const list = (await response.json()) as readonly { readonly state?: string; readonly query?: string }[];
  return list.filter((q) => !DONE_STATES.has(q.state ?? '') && (q.query ?? '').includes(marker)).length;
}
