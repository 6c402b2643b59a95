// The demo warehouse is what a newcomer queries first: it must hold the generated data with
// proper types, be left alone when it is already current, never replace someone else's file,
// and never be left half-written by a crash.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PRODUCTS } from './demo-catalog.js';
import { formatCents, generateSales } from './sales-generator.js';
import { DEMO_DATASET_VERSION, seedDemoWarehouse } from './seed-demo-warehouse.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-seed-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function query(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  try {
    const connection = await instance.connect();
    try {
      return (await connection.runAndReadAll(sql)).getRowObjectsJS();
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

async function execute(file: string, sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  try {
    const connection = await instance.connect();
    await connection.run(sql);
    await connection.run('CHECKPOINT');
    connection.closeSync();
  } finally {
    instance.closeSync();
  }
}

async function fingerprint(file: string): Promise<string> {
  const [bytes, info] = await Promise.all([readFile(file), stat(file)]);
  return `${createHash('sha256').update(bytes).digest('hex')}:${info.mtimeMs}:${info.ino}`;
}

async function tempLeftovers(inDir: string): Promise<string[]> {
  return (await readdir(inDir)).filter((name) => name.includes('.tmp-'));
}

describe('seedDemoWarehouse', () => {
  it('writes typed sales and products tables holding exactly the generated data', async () => {
    const file = join(dir, 'typed', 'demo.duckdb');
    expect(await seedDemoWarehouse(file, { rows: 10_000 })).toEqual({
      created: true,
      rows: 10_000,
      how: 'generated',
    });

    const columns = await query(
      file,
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'sales' ORDER BY ordinal_position",
    );
    const typeOf = Object.fromEntries(columns.map((c) => [c.column_name, c.data_type]));
    expect(typeOf).toMatchObject({
      sold_at: 'DATE',
      month: 'DATE',
      year: 'INTEGER',
      region: 'VARCHAR',
      quantity: 'INTEGER',
      unit_price: 'DECIMAL(12,2)',
      amount: 'DECIMAL(12,2)',
    });

    let cents = 0;
    for (const row of generateSales({ rows: 10_000 })) cents += row.amount_cents;
    const [totals] = await query(
      file,
      `SELECT count(*)::INTEGER AS n, sum(amount)::VARCHAR AS revenue, min(sold_at)::VARCHAR AS first,
              count(*) FILTER (WHERE amount <> quantity * unit_price)::INTEGER AS inexact
       FROM sales`,
    );
    expect(totals).toEqual({ n: 10_000, revenue: formatCents(cents), first: '2021-01-01', inexact: 0 });

    const [products] = await query(file, 'SELECT count(*)::INTEGER AS n FROM products');
    expect(products?.n).toBe(DEMO_PRODUCTS.length);
    const [meta] = await query(file, 'SELECT dataset_version, rows::INTEGER AS rows FROM quarry_demo_meta');
    expect(meta).toEqual({ dataset_version: DEMO_DATASET_VERSION, rows: 10_000 });
    expect(await tempLeftovers(join(dir, 'typed'))).toEqual([]);
  });

  it('leaves a current demo file untouched and rebuilds one of another size or version', async () => {
    const file = join(dir, 'idempotent.duckdb');
    await seedDemoWarehouse(file, { rows: 2_000 });
    const before = await fingerprint(file);

    expect(await seedDemoWarehouse(file, { rows: 2_000 })).toEqual({
      created: false,
      rows: 2_000,
      how: 'kept',
    });
    expect(await fingerprint(file)).toBe(before);

    expect(await seedDemoWarehouse(file, { rows: 3_000 })).toEqual({
      created: true,
      rows: 3_000,
      how: 'generated',
    });
    expect((await query(file, 'SELECT count(*)::INTEGER AS n FROM sales'))[0]?.n).toBe(3_000);

    await execute(file, "UPDATE quarry_demo_meta SET dataset_version = 'sales-v0'");
    expect(await seedDemoWarehouse(file, { rows: 3_000 })).toEqual({
      created: true,
      rows: 3_000,
      how: 'generated',
    });
    expect((await query(file, 'SELECT dataset_version FROM quarry_demo_meta'))[0]?.dataset_version).toBe(
      DEMO_DATASET_VERSION,
    );
  });

  it('copies a template holding the rows, and keeps a current file of any size when asked', async () => {
    const template = join(dir, 'template', 'demo-template.duckdb');
    expect(await seedDemoWarehouse(template, { rows: 1_500, template: null })).toMatchObject({
      how: 'generated',
    });
    const file = join(dir, 'from-template', 'demo.duckdb');
    expect(await seedDemoWarehouse(file, { rows: 1_500, template })).toEqual({
      created: true,
      rows: 1_500,
      how: 'template',
    });
    const sums = 'SELECT count(*)::INTEGER AS n, sum(amount)::VARCHAR AS revenue FROM sales';
    expect(await query(file, sums)).toEqual(await query(template, sums));
    // A template that is not there: generated instead.
    const other = join(dir, 'from-template', 'other.duckdb');
    expect(
      await seedDemoWarehouse(other, { rows: 1_500, template: join(dir, 'template', 'missing.duckdb') }),
    ).toMatchObject({ how: 'generated' });
    expect(await query(other, sums)).toEqual(await query(template, sums));

    const before = await fingerprint(file);
    expect(await seedDemoWarehouse(file, { rows: 120_000, keepAnySize: true })).toEqual({
      created: false,
      rows: 1_500,
      how: 'kept',
    });
    expect(await fingerprint(file)).toBe(before);
  });

  it('refuses to replace a file that is not a Quarry demo warehouse', async () => {
    const foreign = join(dir, 'foreign.duckdb');
    await execute(foreign, 'CREATE TABLE precious AS SELECT 42 AS answer');
    await expect(seedDemoWarehouse(foreign, { rows: 100 })).rejects.toThrow(/not a Quarry demo warehouse/);
    expect(await query(foreign, 'SELECT answer FROM precious')).toEqual([{ answer: 42 }]);

    const text = join(dir, 'notes.duckdb');
    await writeFile(text, 'not a database');
    await expect(seedDemoWarehouse(text, { rows: 100 })).rejects.toThrow();
    expect(await readFile(text, 'utf8')).toBe('not a database');
  });

  it('survives two seeders racing for the same path', async () => {
    const file = join(dir, 'race', 'demo.duckdb');
    const results = await Promise.all([
      seedDemoWarehouse(file, { rows: 1_000 }),
      seedDemoWarehouse(file, { rows: 1_000 }),
    ]);
    expect(results.map((r) => r.rows)).toEqual([1_000, 1_000]);
    expect((await query(file, 'SELECT count(*)::INTEGER AS n FROM sales'))[0]?.n).toBe(1_000);
    expect(await tempLeftovers(join(dir, 'race'))).toEqual([]);
  });

  it('never leaves a half-written file at the target when the seeding process is killed', async () => {
    const crashDir = join(dir, 'crash');
    const file = join(crashDir, 'demo.duckdb');
    const script = join(dir, 'seed-child.mts');
    const seeder = fileURLToPath(new URL('./seed-demo-warehouse.ts', import.meta.url));
    await writeFile(
      script,
      `import { seedDemoWarehouse } from ${JSON.stringify(seeder)};\nawait seedDemoWarehouse(process.argv[2], { rows: 5_000_000 });\n`,
    );
    // tsx's loader in this very process (its CLI would fork a grandchild the kill cannot reach).
    // Far more rows than it can write before the kill: the kill lands mid-write, every time.
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), script, file], {
      stdio: 'ignore',
    });
    try {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const leftovers = await readdir(crashDir).catch(() => []);
        if (leftovers.some((n) => n.includes('.tmp-'))) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await tempLeftovers(crashDir)).not.toEqual([]);
      await new Promise((r) => setTimeout(r, 300)); // let it write part of the data
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });

    // The next start builds the file and sweeps the dead seeder's temp file away.
    expect(await seedDemoWarehouse(file, { rows: 500 })).toEqual({
      created: true,
      rows: 500,
      how: 'generated',
    });
    expect((await query(file, 'SELECT count(*)::INTEGER AS n FROM sales'))[0]?.n).toBe(500);
    expect(await tempLeftovers(crashDir)).toEqual([]);
  });
});
