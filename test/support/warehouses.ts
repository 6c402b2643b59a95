// The warehouses the end-to-end tests query: the same generated `sales` rows in a Postgres
// schema, a dedicated MariaDB database (read through a dedicated user with a password and
// SELECT only), and a seeded DuckDB demo file. Each fixture can be removed again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSales, type SaleRow, seedDemoWarehouse } from '@quarry/examples';
import mysql from 'mysql2/promise';
import { withPg } from './control-plane.js';
import { TEST_MYSQL_URL } from './test-services.js';

const COLUMNS = [
  'id',
  'sold_at',
  'year',
  'month',
  'region',
  'country',
  'channel',
  'category',
  'product_id',
  'product',
  'quantity',
  'unit_price',
  'amount',
] as const;

function values(row: SaleRow): unknown[] {
  return COLUMNS.map((c) => row[c]);
}

export interface PostgresWarehouse {
  readonly schema: string;
  drop(): Promise<void>;
}

/** Schema `schema` with a `sales` table of `rows` generated rows. */
export async function createPostgresWarehouse(schema: string, rows: number): Promise<PostgresWarehouse> {
  await withPg(async (c) => {
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.query(`CREATE TABLE ${schema}.sales (
      id integer PRIMARY KEY, sold_at date NOT NULL, year integer NOT NULL, month date NOT NULL,
      region text NOT NULL, country text NOT NULL, channel text NOT NULL, category text NOT NULL,
      product_id integer NOT NULL, product text NOT NULL, quantity integer NOT NULL,
      unit_price numeric(12,2) NOT NULL, amount numeric(12,2) NOT NULL)`);
    const all = [...generateSales({ rows })];
    for (let i = 0; i < all.length; i += 500) {
      const batch = all.slice(i, i + 500);
      const placeholders = batch.map(
        (_, r) => `(${COLUMNS.map((_c, k) => `$${r * COLUMNS.length + k + 1}`).join(', ')})`,
      );
      await c.query(
        `INSERT INTO ${schema}.sales (${COLUMNS.join(', ')}) VALUES ${placeholders.join(', ')}`,
        batch.flatMap(values),
      );
    }
  });
  return {
    schema,
    drop: () => withPg((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => {}),
  };
}

export interface MysqlWarehouse {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  drop(): Promise<void>;
}

async function withMysql<T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ uri: TEST_MYSQL_URL, connectTimeout: 3000 });
  try {
    return await fn(connection);
  } finally {
    await connection.end();
  }
}

/** Database `name` with a `sales` table, and a user of the same name allowed only to SELECT from it. */
export async function createMysqlWarehouse(
  name: string,
  password: string,
  rows: number,
): Promise<MysqlWarehouse> {
  const url = new URL(TEST_MYSQL_URL);
  await withMysql(async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    await c.query(`CREATE TABLE ${name}.sales (
      id int PRIMARY KEY, sold_at date NOT NULL, year int NOT NULL, month date NOT NULL,
      region varchar(8) NOT NULL, country varchar(8) NOT NULL, channel varchar(32) NOT NULL,
      category varchar(64) NOT NULL, product_id int NOT NULL, product varchar(128) NOT NULL,
      quantity int NOT NULL, unit_price decimal(12,2) NOT NULL, amount decimal(12,2) NOT NULL)`);
    const all = [...generateSales({ rows })];
    for (let i = 0; i < all.length; i += 500) {
      await c.query(`INSERT INTO ${name}.sales (${COLUMNS.join(', ')}) VALUES ?`, [
        all.slice(i, i + 500).map(values),
      ]);
    }
    await c.query(`CREATE USER '${name}'@'%' IDENTIFIED BY ?`, [password]);
    await c.query(`GRANT SELECT ON ${name}.* TO '${name}'@'%'`);
  });
  return {
    host: url.hostname,
    port: url.port === '' ? 3306 : Number(url.port),
    database: name,
    user: name,
    password,
    drop: () =>
      withMysql(async (c) => {
        await c.query(`DROP USER IF EXISTS '${name}'@'%'`);
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
      }),
  };
}

/** Queries the MariaDB server as root (SHOW PROCESSLIST and the like). */
export function mysqlAdminQuery<T>(sql: string): Promise<T> {
  return withMysql(async (c) => (await c.query(sql))[0] as T);
}

export interface DuckdbWarehouse {
  readonly path: string;
  drop(): Promise<void>;
}

/** A temp directory with the seeded demo DuckDB file. */
export async function createDuckdbWarehouse(rows: number): Promise<DuckdbWarehouse> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-duckdb-'));
  const path = join(dir, 'demo.duckdb');
  await seedDemoWarehouse(path, { rows });
  return { path, drop: () => rm(dir, { recursive: true, force: true }) };
}

/** Revenue per region of `year` in integer cents, straight from the generator. */
export function expectedRevenueCents(rows: number, year: number): Map<string, number> {
  const totals = new Map<string, number>();
  for (const sale of generateSales({ rows })) {
    if (sale.year === year) totals.set(sale.region, (totals.get(sale.region) ?? 0) + sale.amount_cents);
  }
  return totals;
}
