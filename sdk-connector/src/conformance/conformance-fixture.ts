// The fixture table every connector's conformance run reads: its columns, its rows, and the SQL
// to create it. The connector under test is read-only, so the caller's `setup` writes this table
// with write access of its own; `conformanceFixtureSql` renders portable SQL for that.
import type { ColumnType } from '../connector-plugin.js';

/** Names of the fixture table's columns, in table order. */
export type ConformanceColumnName =
  | 'id'
  | 'name'
  | 'amount'
  | 'big'
  | 'ratio'
  | 'flag'
  | 'day'
  | 'ts'
  | 'note';

/** One column of the fixture table. */
export interface ConformanceColumn {
  readonly name: ConformanceColumnName;
  /** A portable SQL type for `CREATE TABLE`; engines may substitute their own (see conformanceFixtureSql). */
  readonly sqlType: string;
  /** The logical type the connector must report for this column by default. */
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/**
 * One fixture row. `big` is a bigint because several values are beyond 2^53; `amount` is an exact
 * decimal string; `day` is `YYYY-MM-DD`; `ts` is an ISO-8601 UTC instant to be stored as the
 * wall-clock time in UTC in a `timestamp` (without time zone) column.
 */
export interface ConformanceRow {
  readonly id: number;
  readonly name: string | null;
  readonly amount: string | null;
  readonly big: bigint | null;
  readonly ratio: number | null;
  readonly flag: boolean | null;
  readonly day: string | null;
  readonly ts: string | null;
  readonly note: string | null;
}

/** The fixture table's columns: create them in this order with these (or equivalent) types. */
export const CONFORMANCE_COLUMNS: readonly ConformanceColumn[] = [
  { name: 'id', sqlType: 'integer', type: 'integer', nullable: false },
  { name: 'name', sqlType: 'varchar(200)', type: 'string', nullable: true },
  { name: 'amount', sqlType: 'decimal(18,2)', type: 'decimal', nullable: true },
  { name: 'big', sqlType: 'bigint', type: 'integer', nullable: true },
  { name: 'ratio', sqlType: 'double precision', type: 'number', nullable: true },
  { name: 'flag', sqlType: 'boolean', type: 'boolean', nullable: true },
  { name: 'day', sqlType: 'date', type: 'date', nullable: true },
  { name: 'ts', sqlType: 'timestamp', type: 'timestamp', nullable: true },
  { name: 'note', sqlType: 'text', type: 'string', nullable: true },
];

/**
 * The fixture rows, ordered by `id`. They include int64 extremes, decimals that do not fit a
 * double, a leap day, the epoch, a timestamp past 2038, unicode and a quote in a name, and one row
 * of NULLs. No name contains a backslash, so the rendered literals are portable.
 */
export const CONFORMANCE_ROWS: readonly ConformanceRow[] = [
  {
    id: 1,
    name: 'alpha',
    amount: '0.00',
    big: 0n,
    ratio: 0.5,
    flag: true,
    day: '2024-02-29',
    ts: '2024-01-31T12:34:56.789Z',
    note: 'first',
  },
  {
    id: 2,
    name: 'beta',
    amount: '1234.50',
    big: 1n,
    ratio: -1.25,
    flag: false,
    day: '1970-01-01',
    ts: '1970-01-01T00:00:00.000Z',
    note: null,
  },
  {
    id: 3,
    name: "O'Brien",
    amount: '-99.99',
    big: -1n,
    ratio: Math.PI,
    flag: true,
    day: '1999-12-31',
    ts: '1999-12-31T23:59:59.999Z',
    note: "it's quoted",
  },
  {
    id: 4,
    name: 'Zoë 🚀 日本',
    amount: '9999999999999999.99',
    big: 9007199254740991n,
    ratio: 1e-10,
    flag: false,
    day: '2100-06-15',
    ts: '2038-01-19T03:14:08.000Z',
    note: null,
  },
  {
    id: 5,
    name: 'gamma',
    amount: '0.01',
    big: 9007199254740993n,
    ratio: 12345.678,
    flag: true,
    day: '2000-01-01',
    ts: '2000-02-29T06:07:08.009Z',
    note: 'past 2^53',
  },
  {
    id: 6,
    name: 'delta',
    amount: '-9999999999999999.99',
    big: -9223372036854775808n,
    ratio: -2.5e100,
    flag: false,
    day: '1969-07-20',
    ts: '1969-07-20T20:17:40.000Z',
    note: 'int64 min',
  },
  {
    id: 7,
    name: 'epsilon',
    amount: '42.00',
    big: 9223372036854775807n,
    ratio: 0,
    flag: true,
    day: '2024-12-31',
    ts: '2024-12-31T23:59:59.000Z',
    note: 'int64 max',
  },
  {
    id: 8,
    name: 'zeta',
    amount: null,
    big: null,
    ratio: null,
    flag: null,
    day: null,
    ts: null,
    note: null,
  },
];

/** Options for {@link conformanceFixtureSql}. */
export interface ConformanceFixtureSqlOptions {
  /**
   * Engine-specific column types. MySQL/MariaDB need `{ ts: 'datetime(3)' }` (their `timestamp`
   * drops milliseconds and stops at 2038); Postgres and DuckDB take the defaults as they are.
   */
  readonly columnTypes?: Partial<Record<ConformanceColumnName, string>>;
}

/** SQL statements that create and fill the fixture table. */
export interface ConformanceFixtureSql {
  /** `CREATE TABLE <table> (…)`. */
  readonly createTable: string;
  /** One multi-row `INSERT INTO <table> (…) VALUES …` with every fixture row. */
  readonly insertRows: string;
  /** `DROP TABLE IF EXISTS <table>`. */
  readonly dropTable: string;
}

/**
 * Renders portable SQL (Postgres, MySQL/MariaDB, DuckDB accept it) that creates and fills the
 * fixture table; run it with your own read-write connection in `setup`. The values are the
 * kit's fixed data rendered as plain literals, so this is not a pattern for user input.
 */
export function conformanceFixtureSql(
  table: string,
  options: ConformanceFixtureSqlOptions = {},
): ConformanceFixtureSql {
  const columns = CONFORMANCE_COLUMNS.map((column) => {
    const type = options.columnTypes?.[column.name] ?? column.sqlType;
    return `${column.name} ${type}${column.nullable ? '' : ' NOT NULL'}`;
  });
  const names = CONFORMANCE_COLUMNS.map((column) => column.name).join(', ');
  const values = CONFORMANCE_ROWS.map(
    (row) =>
      `(${[
        String(row.id),
        text(row.name),
        row.amount ?? 'NULL',
        row.big === null ? 'NULL' : row.big.toString(),
        row.ratio === null ? 'NULL' : String(row.ratio),
        row.flag === null ? 'NULL' : row.flag ? 'TRUE' : 'FALSE',
        text(row.day),
        // Stored as the UTC wall-clock time: "2024-01-31 12:34:56.789".
        row.ts === null ? 'NULL' : text(row.ts.replace('T', ' ').replace('Z', '')),
        text(row.note),
      ].join(', ')})`,
  );
  return {
    createTable: `CREATE TABLE ${table} (${columns.join(', ')})`,
    insertRows: `INSERT INTO ${table} (${names}) VALUES ${values.join(', ')}`,
    dropTable: `DROP TABLE IF EXISTS ${table}`,
  };
}

function text(value: string | null): string {
  return value === null ? 'NULL' : `'${value.replaceAll("'", "''")}'`;
}
