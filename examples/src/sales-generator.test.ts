// The demo dataset must be reproducible (a dataset version names exact content), internally
// consistent (money adds up to the cent, countries sit in their region) and shaped like real
// sales, since the example analytics draw charts from it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_PRODUCTS, DEMO_REGIONS } from './demo-catalog.js';
import { formatCents, generateSales, type SaleRow } from './sales-generator.js';

const ROWS = 120_000;
const rows: readonly SaleRow[] = [...generateSales({ rows: ROWS })];

function digest(sales: Iterable<SaleRow>): string {
  const hash = createHash('sha256');
  for (const row of sales) hash.update(JSON.stringify(row));
  return hash.digest('hex');
}

/** Exact cents of a 2-place decimal string, without going through floats. */
function centsOf(decimal: string): bigint | undefined {
  return /^\d+\.\d{2}$/.test(decimal) ? BigInt(decimal.replace('.', '')) : undefined;
}

function sumBy(filter: (row: SaleRow) => boolean): number {
  let cents = 0;
  for (const row of rows) if (filter(row)) cents += row.amount_cents;
  return cents;
}

describe('generateSales', () => {
  // Invariants are checked row by row and asserted once: an `expect` per row of 120,000 rows
  // costs seconds, and the failure message lists the offending rows either way.
  it('yields exactly the requested number of rows, ids 1..n in date order', () => {
    expect(rows).toHaveLength(ROWS);
    const outOfOrder = rows.filter(
      (row, i) => row.id !== i + 1 || (i > 0 && row.sold_at < rows[i - 1]!.sold_at),
    );
    expect(outOfOrder).toEqual([]);
    expect([...generateSales({ rows: 0 })]).toEqual([]);
    expect([...generateSales({ rows: 7 })]).toHaveLength(7);
  });

  it('is deterministic: the same seed gives the same rows, another seed different ones', () => {
    const again = digest(generateSales({ rows: ROWS }));
    expect(again).toBe(digest(rows));
    const sample = generateSales({ rows: 5_000, seed: 7 });
    expect(digest(sample)).toBe(digest(sample)); // iterating twice replays the same rows
    expect(digest(generateSales({ rows: 5_000, seed: 8 }))).not.toBe(digest(sample));
  });

  it('keeps money exact: amount is quantity × unit_price to the cent, as 2-place decimals', () => {
    const wrong = rows.filter(
      (row) =>
        !(row.quantity >= 1 && row.quantity <= 20 && Number.isInteger(row.quantity)) ||
        !Number.isSafeInteger(row.unit_price_cents) ||
        row.amount_cents !== row.quantity * row.unit_price_cents ||
        centsOf(row.unit_price) !== BigInt(row.unit_price_cents) ||
        centsOf(row.amount) !== BigInt(row.quantity) * (centsOf(row.unit_price) ?? -1n),
    );
    expect(wrong).toEqual([]);
  });

  it('uses two-letter regions, countries of that region, and one category per product', () => {
    const regionOf = new Map(DEMO_REGIONS.flatMap((r) => r.countries.map(([c]) => [c, r.code] as const)));
    const productCategory = new Map(DEMO_PRODUCTS.map((p) => [p.name, p.category]));
    const wrong = rows.filter(
      (row) =>
        !/^[A-Z]{2}$/.test(row.region) ||
        !/^[A-Z]{2}$/.test(row.country) ||
        regionOf.get(row.country) !== row.region ||
        productCategory.get(row.product) !== row.category ||
        !['online', 'retail', 'partner'].includes(row.channel),
    );
    expect(wrong).toEqual([]);
    expect([...new Set(rows.map((r) => r.region))].sort()).toEqual(['AF', 'AP', 'EU', 'LA', 'ME', 'NA']);
  });

  it('spans 2021–2025 with consistent year, month and date columns', () => {
    const years = new Set(rows.map((r) => r.year));
    expect([...years].sort()).toEqual([2021, 2022, 2023, 2024, 2025]);
    const wrong = rows.filter(
      (row) =>
        !/^\d{4}-\d{2}-\d{2}$/.test(row.sold_at) ||
        new Date(`${row.sold_at}T00:00:00Z`).toISOString().slice(0, 10) !== row.sold_at ||
        row.sold_at.slice(0, 4) !== String(row.year) ||
        row.month !== `${row.sold_at.slice(0, 7)}-01`,
    );
    expect(wrong).toEqual([]);
  });

  it('looks like real sales: yearly growth, a December peak, a rising online share', () => {
    for (let year = 2022; year <= 2025; year++) {
      expect(sumBy((r) => r.year === year)).toBeGreaterThan(sumBy((r) => r.year === year - 1));
      expect(sumBy((r) => r.month === `${year}-12-01`)).toBeGreaterThan(
        sumBy((r) => r.month === `${year}-02-01`),
      );
    }
    const onlineShare = (year: number) =>
      sumBy((r) => r.year === year && r.channel === 'online') / sumBy((r) => r.year === year);
    expect(onlineShare(2025)).toBeGreaterThan(onlineShare(2021) + 0.05);
  });

  it('refuses a row count that is not a non-negative integer', () => {
    expect(() => generateSales({ rows: -1 })).toThrow(RangeError);
    expect(() => generateSales({ rows: 1.5 })).toThrow(RangeError);
  });
});

describe('formatCents', () => {
  it('renders integer cents with exactly two decimal places', () => {
    expect(formatCents(0)).toBe('0.00');
    expect(formatCents(5)).toBe('0.05');
    expect(formatCents(1999)).toBe('19.99');
    expect(formatCents(123456789)).toBe('1234567.89');
    expect(formatCents(-5)).toBe('-0.05');
  });
});
