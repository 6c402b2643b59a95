// Builds the demo DuckDB warehouse the gateway serves on first start: a `sales` fact table from
// the seeded generator, a `products` dimension, and a `quarry_demo_meta` row naming the dataset
// version. The file is written under a temporary name in the same directory and renamed into
// place, so a crash (or two gateways starting at once) never leaves a half-written warehouse.
// A template made at install time (`npm ci`, `npm run build`: ensureDemoTemplate) holds the
// default 120,000 rows, so a new data directory gets a copy of it instead of generating them.
// DuckDB is loaded only when a file is generated or has to be read: a file this module wrote is
// recognised by a stamp beside it (its dataset version, size, inode and mtime), without opening it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
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
  /**
   * Rows in `sales` (default 120,000). A demo file of the current dataset version with another
   * row count is rebuilt, unless `keepAnySize`.
   */
  readonly rows?: number;
  /**
   * Keep a current demo file whatever its row count (the gateway's start: a file someone seeded
   * with `--rows` stays as they made it). Default false.
   */
  readonly keepAnySize?: boolean;
  /**
   * A template file (ensureDemoTemplate, named by what it holds) copied instead of generating the
   * rows when it exists. Default: the installed template for `rows` (demoTemplateFile), if any;
   * null to always generate.
   */
  readonly template?: string | null;
}

/** What {@link seedDemoWarehouse} did. */
export interface SeedDemoWarehouseResult {
  /** False when a demo file of the same dataset version (and size) was already there (untouched). */
  readonly created: boolean;
  /** Rows in the file's `sales` table. */
  readonly rows: number;
  /** How the file was made: `template` (copied), `generated`, or `kept` (created false). */
  readonly how: 'template' | 'generated' | 'kept';
}

/** Why an existing file was not reused: absent, or a demo file of another version or size. */
type ExistingState =
  | { readonly kind: 'current'; readonly rows: number }
  | { readonly kind: 'absent' | 'stale' };

/** Where install-time templates live (same path from src/ and dist/). */
export const DEMO_TEMPLATE_DIR = fileURLToPath(new URL('../demo-template/', import.meta.url));

/** The installed @duckdb/node-api's version: a template is read by the DuckDB that wrote it. */
function duckdbVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@duckdb/node-api');
  let dir = dirname(entry);
  for (let i = 0; i < 4; i++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === '@duckdb/node-api' && manifest.version !== undefined) return manifest.version;
    } catch {
      // No package.json at this level: look one up.
    }
    dir = dirname(dir);
  }
  return 'unknown';
}

/** The template file for `rows` rows of the current dataset with the installed DuckDB (may not exist). */
export function demoTemplateFile(rows: number = DEFAULT_DEMO_ROWS, dir: string = DEMO_TEMPLATE_DIR): string {
  return join(dir, `demo-${DEMO_DATASET_VERSION}-${rows}-duckdb-${duckdbVersion()}.duckdb`);
}

/**
 * Makes the template of the default demo warehouse unless it is there (npm ci, npm run build);
 * templates of other dataset or DuckDB versions in `dir` are removed.
 */
export async function ensureDemoTemplate(
  dir: string = DEMO_TEMPLATE_DIR,
): Promise<{ readonly file: string; readonly created: boolean }> {
  const file = demoTemplateFile(DEFAULT_DEMO_ROWS, dir);
  const { created } = await seedDemoWarehouse(file, { rows: DEFAULT_DEMO_ROWS, template: null });
  const keep = new Set([basename(file), basename(stampFile(file))]);
  for (const name of await readdir(dir)) {
    if (/^\.?demo-.+\.duckdb(\.stamp)?$/.test(name) && !keep.has(name))
      await rm(join(dir, name), { force: true });
  }
  return { file, created };
}

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

/**
 * Creates the demo warehouse at `path` unless a demo file of the same dataset version and row
 * count (any row count with `keepAnySize`) is already there, in which case it returns
 * `created: false` without touching it. Refuses to replace a file that is not a Quarry demo
 * warehouse.
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
  if (existing.kind === 'current' && (existing.rows === rows || options.keepAnySize === true))
    return { created: false, rows: existing.rows, how: 'kept' };

  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  await removeAbandonedTempFiles(target);
  const temp = join(dir, `.${basename(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const template = options.template === undefined ? demoTemplateFile(rows) : options.template;
  let how: SeedDemoWarehouseResult['how'] = 'generated';
  try {
    if (template !== null && resolve(template) !== target && (await isTemplateOf(template))) {
      await copyFile(template, temp);
      how = 'template';
    } else {
      await writeWarehouse(temp, rows);
    }
    await fsyncFile(temp);
    // A WAL left beside the old file would be replayed against the new one on next open.
    await rm(`${target}.wal`, { force: true });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    await rm(`${temp}.wal`, { force: true });
    throw error;
  }
  await writeStamp(target, rows);
  return { created: true, rows, how };
}

/** What the stamp beside a demo file records of the file it was written for. */
interface Stamp {
  readonly dataset_version: string;
  readonly rows: number;
  readonly size: number;
  readonly ino: number;
  readonly mtime_ms: number;
}

const stampFile = (target: string) => join(dirname(target), `.${basename(target)}.stamp`);

async function writeStamp(target: string, rows: number): Promise<void> {
  const info = await stat(target);
  const stamp: Stamp = {
    dataset_version: DEMO_DATASET_VERSION,
    rows,
    size: info.size,
    ino: info.ino,
    mtime_ms: info.mtimeMs,
  };
  // Written under a temporary name and renamed: a reader sees a whole stamp or none.
  const temp = `${stampFile(target)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(temp, JSON.stringify(stamp));
  await rename(temp, stampFile(target));
}

/** The stamp's dataset version and rows when it describes exactly this file (else undefined). */
async function readStamp(
  target: string,
  info: { size: number; ino: number; mtimeMs: number },
): Promise<Stamp | undefined> {
  try {
    const stamp = JSON.parse(await readFile(stampFile(target), 'utf8')) as Partial<Stamp>;
    if (
      stamp.size === info.size &&
      stamp.ino === info.ino &&
      stamp.mtime_ms === info.mtimeMs &&
      typeof stamp.dataset_version === 'string' &&
      typeof stamp.rows === 'number'
    )
      return stamp as Stamp;
  } catch {
    // No stamp, or not one of ours: the file itself is read.
  }
  return undefined;
}

/**
 * Whether `template` is there. Its name says what it holds (dataset version, rows, DuckDB
 * version: demoTemplateFile), and it was renamed into place whole, so it is not opened.
 */
async function isTemplateOf(template: string): Promise<boolean> {
  return stat(template).then(
    (info) => info.isFile(),
    () => false,
  );
}

async function inspectExisting(target: string): Promise<ExistingState> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw error;
  }
  const stamp = await readStamp(target, info);
  if (stamp !== undefined) {
    return stamp.dataset_version === DEMO_DATASET_VERSION
      ? { kind: 'current', rows: stamp.rows }
      : { kind: 'stale' };
  }
  const { DuckDBInstance } = await import('@duckdb/node-api');
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
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(file);
  try {
    const connection = await instance.connect();
    try {
      await connection.run(SCHEMA_SQL);
      await appendProducts(connection);
      await loadSales(connection, file, rows);
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
  const { decimalValue } = await import('@duckdb/node-api');
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

/** A CSV field: quoted, with its quotes doubled, when it holds a comma, a quote or a newline. */
function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const SALES_CSV_COLUMNS = `{'id': 'INTEGER', 'sold_at': 'DATE', 'year': 'INTEGER', 'month': 'DATE',
  'region': 'VARCHAR', 'country': 'VARCHAR', 'channel': 'VARCHAR', 'category': 'VARCHAR',
  'product_id': 'INTEGER', 'product': 'VARCHAR', 'quantity': 'INTEGER',
  'unit_price': 'DECIMAL(12,2)', 'amount': 'DECIMAL(12,2)'}`;

/**
 * The generated sales, written as CSV beside the new file and loaded by DuckDB's CSV reader in
 * one statement: about a third of the time of appending them value by value through the driver.
 * Dates are `YYYY-MM-DD` and money 2-place decimal text, so every value arrives exact.
 */
async function loadSales(connection: DuckDBConnection, file: string, rows: number): Promise<void> {
  const csv = `${file}.sales.csv`;
  const handle = await open(csv, 'w');
  try {
    let chunk: string[] = [];
    for (const s of generateSales({ rows, seed: DEFAULT_SALES_SEED })) {
      chunk.push(
        `${s.id},${s.sold_at},${s.year},${s.month},${s.region},${s.country},${s.channel},${csvField(s.category)},${s.product_id},${csvField(s.product)},${s.quantity},${s.unit_price},${s.amount}\n`,
      );
      if (chunk.length === 10_000) {
        await handle.write(chunk.join(''));
        chunk = [];
      }
    }
    await handle.write(chunk.join(''));
    await handle.close();
    await connection.run(
      `INSERT INTO sales SELECT * FROM read_csv($1, header = false, auto_detect = false, delim = ',',
         quote = '"', escape = '"', columns = ${SALES_CSV_COLUMNS})`,
      [csv],
    );
  } finally {
    await handle.close().catch(() => {});
    await rm(csv, { force: true });
  }
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
