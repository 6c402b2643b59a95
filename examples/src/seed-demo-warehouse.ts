// Builds the demo DuckDB warehouse the gateway serves on first start: a `sales` fact table from
// the seeded generator, a `products` dimension, and a `quarry_demo_meta` row naming the dataset
// version. The file is written under a temporary name in the same directory and renamed into
// place, so a crash (or two gateways starting at once) never leaves a half-written warehouse.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { type DuckDBConnection, DuckDBInstance, dateValue, decimalValue } from '@duckdb/node-api';
import { DEMO_PRODUCTS } from './demo-catalog.js';
import { DEFAULT_SALES_SEED, generateSales } from './sales-generator.js';

/**
 * Names the generator's output. Bump it whenever generateSales or the schema changes, so existing
 * demo files are rebuilt instead of silently serving old data.
 */
export const DEMO_DATASET_VERSION = 'sales-v1';

/** Rows in the demo `sales` table unless the caller asks otherwise. */
export const DEFAULT_DEMO_ROWS = 120_000;

/** Options for {@link seedDemoWarehouse}. */
export interface SeedDemoWarehouseOptions {
  /** Rows in `sales` (default 120,000). A file with another row count is rebuilt. */
  readonly rows?: number;
}

/** What {@link seedDemoWarehouse} did. */
export interface SeedDemoWarehouseResult {
  /** False when a demo file of the same dataset version and size was already there (untouched). */
  readonly created: boolean;
  /** Rows in the file's `sales` table. */
  readonly rows: number;
}

/** Why an existing file was not reused: absent, or a demo file of another version or size. */
type ExistingState =
  | { readonly kind: 'current'; readonly rows: number }
  | { readonly kind: 'absent' | 'stale' };

const SCHEMA_SQL = `
CREATE TABLE products (
  product_id INTEGER PRIMARY KEY,
  name VARCHAR NOT NULL UNIQUE,
  category VARCHAR NOT NULL,
  min_price DECIMAL(12,2) NOT NULL,
  max_price DECIMAL(12,2) NOT NULL
);
-- No secondary indexes: rows are appended in sold_at order, so DuckDB's per-block min/max
-- (zonemaps) already prune date and year filters; ART indexes only help point lookups.
CREATE TABLE sales (
  id INTEGER PRIMARY KEY,
  sold_at DATE NOT NULL,
  year INTEGER NOT NULL,
  month DATE NOT NULL,
  region VARCHAR NOT NULL,
  country VARCHAR NOT NULL,
  channel VARCHAR NOT NULL,
  category VARCHAR NOT NULL,
  product_id INTEGER NOT NULL,
  product VARCHAR NOT NULL,
  quantity INTEGER NOT NULL,
  unit_price DECIMAL(12,2) NOT NULL,
  amount DECIMAL(12,2) NOT NULL
);
CREATE TABLE quarry_demo_meta (
  dataset_version VARCHAR NOT NULL,
  rows BIGINT NOT NULL,
  seed BIGINT NOT NULL,
  created_at TIMESTAMP NOT NULL
);`;

const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 for a `YYYY-MM-DD` string, as DuckDB's DATE stores them. */
function epochDays(isoDate: string): number {
  return Date.parse(`${isoDate}T00:00:00Z`) / MS_PER_DAY;
}

/**
 * Creates the demo warehouse at `path` unless a demo file of the same dataset version and row
 * count is already there, in which case it returns `created: false` without touching it. Refuses
 * to replace a file that is not a Quarry demo warehouse.
 */
export async function seedDemoWarehouse(
  path: string,
  options: SeedDemoWarehouseOptions = {},
): Promise<SeedDemoWarehouseResult> {
  const rows = options.rows ?? DEFAULT_DEMO_ROWS;
  if (!Number.isSafeInteger(rows) || rows < 0)
    throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
  const target = resolve(path);
  const existing = await inspectExisting(target);
  if (existing.kind === 'current' && existing.rows === rows) return { created: false, rows };

  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  await removeAbandonedTempFiles(target);
  const temp = join(dir, `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeWarehouse(temp, rows);
    await fsyncFile(temp);
    // A WAL left beside the old file would be replayed against the new one on next open.
    await rm(`${target}.wal`, { force: true });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    await rm(`${temp}.wal`, { force: true });
    throw error;
  }
  return { created: true, rows };
}

async function inspectExisting(target: string): Promise<ExistingState> {
  try {
    await stat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  // Read-only, so inspecting never modifies the file (or takes a write lock on it).
  const instance = await DuckDBInstance.create(target, { access_mode: 'READ_ONLY' });
  try {
    const connection = await instance.connect();
    try {
      const tables = await connection.runAndReadAll(
        "SELECT count(*)::INTEGER AS n FROM information_schema.tables WHERE table_name = 'quarry_demo_meta'",
      );
      if (tables.getRowObjectsJS()[0]?.n !== 1) {
        throw new Error(`${target} exists and is not a Quarry demo warehouse; refusing to replace it`);
      }
      const meta = await connection.runAndReadAll(
        'SELECT dataset_version, rows::INTEGER AS rows FROM quarry_demo_meta',
      );
      const row = meta.getRowObjectsJS()[0];
      if (row?.dataset_version !== DEMO_DATASET_VERSION) return { kind: 'stale' };
      return { kind: 'current', rows: Number(row.rows) };
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

async function writeWarehouse(file: string, rows: number): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  try {
    const connection = await instance.connect();
    try {
      await connection.run(SCHEMA_SQL);
      await appendProducts(connection);
      await appendSales(connection, rows);
      await connection.run('INSERT INTO quarry_demo_meta VALUES ($1, $2, $3, now()::TIMESTAMP)', [
        DEMO_DATASET_VERSION,
        rows,
        DEFAULT_SALES_SEED,
      ]);
      // Fold the WAL into the file so the renamed file is complete on its own.
      await connection.run('CHECKPOINT');
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

async function appendProducts(connection: DuckDBConnection): Promise<void> {
  const appender = await connection.createAppender('products');
  for (const p of DEMO_PRODUCTS) {
    appender.appendInteger(p.id);
    appender.appendVarchar(p.name);
    appender.appendVarchar(p.category);
    appender.appendDecimal(decimalValue(BigInt(p.minPriceCents), 12, 2));
    appender.appendDecimal(decimalValue(BigInt(p.maxPriceCents), 12, 2));
    appender.endRow();
  }
  appender.closeSync();
}

async function appendSales(connection: DuckDBConnection, rows: number): Promise<void> {
  const appender = await connection.createAppender('sales');
  for (const sale of generateSales({ rows, seed: DEFAULT_SALES_SEED })) {
    appender.appendInteger(sale.id);
    appender.appendDate(dateValue(epochDays(sale.sold_at)));
    appender.appendInteger(sale.year);
    appender.appendDate(dateValue(epochDays(sale.month)));
    appender.appendVarchar(sale.region);
    appender.appendVarchar(sale.country);
    appender.appendVarchar(sale.channel);
    appender.appendVarchar(sale.category);
    appender.appendInteger(sale.product_id);
    appender.appendVarchar(sale.product);
    appender.appendInteger(sale.quantity);
    appender.appendDecimal(decimalValue(BigInt(sale.unit_price_cents), 12, 2));
    appender.appendDecimal(decimalValue(BigInt(sale.amount_cents), 12, 2));
    appender.endRow();
  }
  appender.closeSync();
}

async function fsyncFile(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Deletes temp files (and their WALs) left by seeders that died; live seeders' files are kept. */
async function removeAbandonedTempFiles(target: string): Promise<void> {
  const prefix = `.${basename(target)}.tmp-`;
  const dir = dirname(target);
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number.parseInt(name.slice(prefix.length), 10);
    if (Number.isInteger(pid) && pid !== process.pid && !isProcessAlive(pid)) {
      await rm(join(dir, name), { force: true });
    }
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
