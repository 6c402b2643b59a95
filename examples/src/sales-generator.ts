// Generates the demo warehouse's `sales` rows: deterministic from a seed, spread over 2021–2025
// with yearly growth (faster in some regions), monthly seasonality per category (toys peak in
// December, garden in spring), a rising online share and mild price inflation, so every example
// analytic draws a chart that looks real. Money is generated as integer cents: no float drift.
import {
  DEMO_CATEGORIES,
  DEMO_CHANNELS,
  DEMO_PRODUCTS,
  DEMO_REGIONS,
  type DemoChannel,
  type DemoProduct,
} from './demo-catalog.js';
import { createSeededRandom, type SeededRandom } from './seeded-random.js';

/**
 * One sale. Field names are the `sales` table's column names, so the row reads like the table.
 * Money comes twice: exact integer cents (for arithmetic) and the same value as a 2-place decimal
 * string (for display and for DECIMAL columns).
 */
export interface SaleRow {
  readonly id: number;
  /** `YYYY-MM-DD`. */
  readonly sold_at: string;
  readonly year: number;
  /** First day of the sale's month, `YYYY-MM-01`. */
  readonly month: string;
  /** Two capital letters, e.g. `EU`. */
  readonly region: string;
  /** ISO 3166-1 alpha-2, always a country of `region`. */
  readonly country: string;
  readonly channel: DemoChannel;
  readonly category: string;
  readonly product_id: number;
  readonly product: string;
  /** 1–20. */
  readonly quantity: number;
  readonly unit_price_cents: number;
  /** Exactly `quantity × unit_price_cents`. */
  readonly amount_cents: number;
  /** `unit_price_cents` as a decimal string with 2 places, e.g. `"129.99"`. */
  readonly unit_price: string;
  /** `amount_cents` as a decimal string with 2 places. */
  readonly amount: string;
}

/** Options for {@link generateSales}. */
export interface GenerateSalesOptions {
  /** How many rows to generate (a non-negative integer). */
  readonly rows: number;
  /** PRNG seed; the same seed and row count always give the same rows (default 20210101). */
  readonly seed?: number;
}

/** The seed used when none is given. */
export const DEFAULT_SALES_SEED = 20210101;
/** First and last year of the generated data. */
export const FIRST_SALES_YEAR = 2021;
export const LAST_SALES_YEAR = 2025;

const YEARLY_PRICE_INFLATION = 1.03;

/** Formats integer cents as a decimal string with exactly 2 places (`-5` → `"-0.05"`). */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100);
  const frac = abs % 100;
  return `${sign}${whole}.${frac < 10 ? '0' : ''}${frac}`;
}

/**
 * Generates `rows` sales in date order (ids ascend with `sold_at`). The result can be iterated
 * more than once; every pass yields the same rows.
 */
export function generateSales(options: GenerateSalesOptions): Iterable<SaleRow> {
  const { rows } = options;
  if (!Number.isSafeInteger(rows) || rows < 0) {
    throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
  }
  const seed = options.seed ?? DEFAULT_SALES_SEED;
  return { [Symbol.iterator]: () => salesIterator(rows, seed) };
}

interface MonthSlot {
  readonly year: number;
  /** 0-based. */
  readonly monthIndex: number;
  readonly weight: number;
}

const PRODUCTS_BY_CATEGORY: ReadonlyMap<string, readonly DemoProduct[]> = new Map(
  DEMO_CATEGORIES.map((c) => [c.name, DEMO_PRODUCTS.filter((p) => p.category === c.name)]),
);

const PRODUCT_WEIGHTS_BY_CATEGORY: ReadonlyMap<string, readonly number[]> = new Map(
  [...PRODUCTS_BY_CATEGORY].map(([name, products]) => [name, products.map((p) => p.weight)]),
);

const COUNTRY_WEIGHTS: readonly (readonly number[])[] = DEMO_REGIONS.map((r) => r.countries.map((c) => c[1]));

function yearsSinceStart(year: number): number {
  return year - FIRST_SALES_YEAR;
}

function regionWeightsFor(year: number): number[] {
  return DEMO_REGIONS.map((r) => r.weight * r.growth ** yearsSinceStart(year));
}

/** Each month's share of all sales: overall growth that year × the category mix's seasonality. */
function monthSlots(): MonthSlot[] {
  const baseRegionTotal = DEMO_REGIONS.reduce((sum, r) => sum + r.weight, 0);
  const slots: MonthSlot[] = [];
  for (let year = FIRST_SALES_YEAR; year <= LAST_SALES_YEAR; year++) {
    const growth = regionWeightsFor(year).reduce((a, b) => a + b, 0) / baseRegionTotal;
    for (let monthIndex = 0; monthIndex < 12; monthIndex++) {
      const season = DEMO_CATEGORIES.reduce((sum, c) => sum + c.weight * c.seasonality[monthIndex]!, 0);
      slots.push({ year, monthIndex, weight: growth * season });
    }
  }
  return slots;
}

/** Splits `total` into integer counts proportional to the weights (largest remainder), summing exactly. */
function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total * w) / sum);
  const counts = exact.map(Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const byRemainder = exact
    .map((x, i) => [x - Math.floor(x), i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of byRemainder) {
    if (left === 0) break;
    counts[i]!++;
    left--;
  }
  return counts;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

function channelWeightsFor(year: number): number[] {
  const k = yearsSinceStart(year);
  return [0.45 + 0.04 * k, 0.4 - 0.03 * k, 0.15 - 0.01 * k];
}

/** A price inside the product's band, inflated per year, ending in .99 like a shelf price. */
function unitPriceCents(random: SeededRandom, product: DemoProduct, year: number): number {
  const base = product.minPriceCents + random.next() * (product.maxPriceCents - product.minPriceCents);
  const dollars = Math.max(1, Math.round((base * YEARLY_PRICE_INFLATION ** yearsSinceStart(year)) / 100));
  return dollars * 100 - 1;
}

/** 1 + a geometric-like tail around the category's mean, capped at 20. */
function quantity(random: SeededRandom, mean: number): number {
  const extra = Math.floor(-Math.log(1 - random.next()) * mean);
  return Math.min(20, 1 + extra);
}

function* salesIterator(rows: number, seed: number): Generator<SaleRow> {
  const random = createSeededRandom(seed);
  const slots = monthSlots();
  const counts = apportion(
    rows,
    slots.map((s) => s.weight),
  );
  let id = 0;
  for (let s = 0; s < slots.length; s++) {
    const { year, monthIndex } = slots[s]!;
    const count = counts[s]!;
    const monthText = `${year}-${pad2(monthIndex + 1)}`;
    const lastDay = daysInMonth(year, monthIndex);
    const days = Array.from({ length: count }, () => random.int(1, lastDay)).sort((a, b) => a - b);
    const regionWeights = regionWeightsFor(year);
    const channelWeights = channelWeightsFor(year);
    const categoryWeights = DEMO_CATEGORIES.map((c) => c.weight * c.seasonality[monthIndex]!);
    for (const day of days) {
      const regionIndex = random.weightedIndex(regionWeights);
      const region = DEMO_REGIONS[regionIndex]!;
      const country = region.countries[random.weightedIndex(COUNTRY_WEIGHTS[regionIndex]!)]![0];
      const category = DEMO_CATEGORIES[random.weightedIndex(categoryWeights)]!;
      const products = PRODUCTS_BY_CATEGORY.get(category.name)!;
      const product = products[random.weightedIndex(PRODUCT_WEIGHTS_BY_CATEGORY.get(category.name)!)]!;
      const channel = DEMO_CHANNELS[random.weightedIndex(channelWeights)]!;
      const qty = quantity(random, category.quantityMean);
      const priceCents = unitPriceCents(random, product, year);
      const amountCents = qty * priceCents;
      id++;
      yield {
        id,
        sold_at: `${monthText}-${pad2(day)}`,
        year,
        month: `${monthText}-01`,
        region: region.code,
        country,
        channel,
        category: category.name,
        product_id: product.id,
        product: product.name,
        quantity: qty,
        unit_price_cents: priceCents,
        amount_cents: amountCents,
        unit_price: formatCents(priceCents),
        amount: formatCents(amountCents),
      };
    }
  }
}
