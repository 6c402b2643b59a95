// The fixed reference data behind the demo dataset: regions with their countries, sales
// channels, product categories with their seasonality, and named products with price bands.
// Weights are relative; they only need to look plausible on a chart, not match any real market.

/** A sales region: a two-letter code, its share of sales, and its yearly growth. */
export interface DemoRegion {
  readonly code: string;
  readonly name: string;
  readonly weight: number;
  /** Multiplier applied per year after 2021 (AP grows fastest, EU slowest). */
  readonly growth: number;
  /** ISO 3166-1 alpha-2 codes of the region's countries, with relative weights. */
  readonly countries: readonly (readonly [code: string, weight: number])[];
}

export const DEMO_REGIONS: readonly DemoRegion[] = [
  {
    code: 'NA',
    name: 'North America',
    weight: 32,
    growth: 1.08,
    countries: [
      ['US', 80],
      ['CA', 12],
      ['MX', 8],
    ],
  },
  {
    code: 'EU',
    name: 'Europe',
    weight: 30,
    growth: 1.05,
    countries: [
      ['DE', 22],
      ['GB', 20],
      ['FR', 17],
      ['IT', 11],
      ['ES', 10],
      ['NL', 8],
      ['SE', 6],
      ['PL', 6],
    ],
  },
  {
    code: 'AP',
    name: 'Asia-Pacific',
    weight: 22,
    growth: 1.16,
    countries: [
      ['JP', 25],
      ['CN', 22],
      ['IN', 18],
      ['AU', 15],
      ['KR', 12],
      ['SG', 8],
    ],
  },
  {
    code: 'LA',
    name: 'Latin America',
    weight: 8,
    growth: 1.1,
    countries: [
      ['BR', 45],
      ['AR', 20],
      ['CL', 18],
      ['CO', 17],
    ],
  },
  {
    code: 'ME',
    name: 'Middle East',
    weight: 5,
    growth: 1.12,
    countries: [
      ['AE', 40],
      ['SA', 35],
      ['IL', 15],
      ['QA', 10],
    ],
  },
  {
    code: 'AF',
    name: 'Africa',
    weight: 3,
    growth: 1.14,
    countries: [
      ['ZA', 35],
      ['NG', 25],
      ['KE', 15],
      ['EG', 15],
      ['MA', 10],
    ],
  },
];

/** Sales channels; online takes a growing share each year. */
export const DEMO_CHANNELS = ['online', 'retail', 'partner'] as const;
export type DemoChannel = (typeof DEMO_CHANNELS)[number];

/** A product category with its share and a per-month seasonal multiplier (Jan … Dec). */
export interface DemoCategory {
  readonly name: string;
  readonly weight: number;
  readonly seasonality: readonly number[];
  /** Mean extra units per order beyond the first (groceries sell by the dozen, TVs one at a time). */
  readonly quantityMean: number;
}

const FLAT = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];

export const DEMO_CATEGORIES: readonly DemoCategory[] = [
  {
    name: 'Electronics',
    weight: 20,
    seasonality: [0.8, 0.8, 0.9, 0.9, 0.9, 0.9, 1, 1, 1.1, 1.1, 1.6, 1.8],
    quantityMean: 0.4,
  },
  {
    name: 'Home',
    weight: 15,
    seasonality: [0.9, 0.9, 1.1, 1.1, 1, 1, 0.9, 0.9, 1, 1, 1.1, 1.3],
    quantityMean: 1,
  },
  {
    name: 'Garden',
    weight: 8,
    seasonality: [0.3, 0.5, 1.2, 1.8, 2, 1.7, 1.3, 1, 0.7, 0.5, 0.3, 0.3],
    quantityMean: 1.5,
  },
  {
    name: 'Sports',
    weight: 10,
    seasonality: [1.3, 1, 1, 1.1, 1.2, 1.3, 1.2, 1, 0.9, 0.8, 0.9, 1.1],
    quantityMean: 0.8,
  },
  {
    name: 'Books',
    weight: 10,
    seasonality: [1, 0.9, 0.9, 0.9, 0.9, 1, 1.1, 1.1, 1, 1, 1.1, 1.5],
    quantityMean: 1,
  },
  {
    name: 'Toys',
    weight: 9,
    seasonality: [0.5, 0.5, 0.6, 0.7, 0.7, 0.7, 0.8, 0.8, 0.9, 1.2, 2, 2.8],
    quantityMean: 1,
  },
  { name: 'Grocery', weight: 16, seasonality: FLAT, quantityMean: 5 },
  {
    name: 'Fashion',
    weight: 12,
    seasonality: [1.1, 0.8, 1, 1.1, 1, 1, 1.1, 1, 1.1, 1, 1.2, 1.4],
    quantityMean: 0.8,
  },
];

/** A named product in one category, priced within a band (cents, inclusive). */
export interface DemoProduct {
  readonly id: number;
  readonly name: string;
  readonly category: string;
  readonly minPriceCents: number;
  readonly maxPriceCents: number;
  /** Relative popularity inside its category. */
  readonly weight: number;
}

type ProductSpec = readonly [name: string, category: string, minUsd: number, maxUsd: number, weight: number];

const PRODUCT_SPECS: readonly ProductSpec[] = [
  ['Aurora Laptop 14', 'Electronics', 899, 1299, 3],
  ['Nimbus Phone X', 'Electronics', 649, 999, 5],
  ['Pulse Wireless Earbuds', 'Electronics', 59, 129, 8],
  ['Vista 55" 4K TV', 'Electronics', 429, 699, 2],
  ['Orbit Smartwatch', 'Electronics', 179, 299, 4],
  ['Flux USB-C Charger', 'Electronics', 15, 29, 9],
  ['Hearth Cast-Iron Skillet', 'Home', 29, 49, 6],
  ['Cirrus Air Purifier', 'Home', 129, 219, 3],
  ['Linen Duvet Set', 'Home', 69, 139, 4],
  ['Brew Master Coffee Maker', 'Home', 79, 159, 5],
  ['Lumen Desk Lamp', 'Home', 25, 59, 6],
  ['Verdant Hose Reel', 'Garden', 39, 79, 4],
  ['TerraPro Lawn Mower', 'Garden', 249, 449, 2],
  ['Bloom Seed Collection', 'Garden', 8, 19, 9],
  ['Oakline Patio Chair', 'Garden', 59, 119, 4],
  ['Stride Running Shoes', 'Sports', 79, 159, 7],
  ['Summit Yoga Mat', 'Sports', 19, 49, 6],
  ['Apex Road Bike', 'Sports', 699, 1499, 1],
  ['Glide Tennis Racket', 'Sports', 49, 199, 3],
  ['Core Dumbbell Pair', 'Sports', 29, 89, 4],
  ['The Quiet Ledger (novel)', 'Books', 12, 24, 6],
  ['Data at Scale', 'Books', 35, 59, 3],
  ['Kitchen Seasons Cookbook', 'Books', 19, 39, 5],
  ["World Atlas Collector's Edition", 'Books', 45, 89, 2],
  ['Starship Building Set', 'Toys', 39, 89, 5],
  ['Plush Otter', 'Toys', 12, 25, 7],
  ['Puzzle Quest 1000', 'Toys', 14, 29, 5],
  ['RC Trail Racer', 'Toys', 49, 119, 3],
  ['Highland Coffee Beans 1kg', 'Grocery', 14, 26, 8],
  ['Organic Olive Oil 750ml', 'Grocery', 9, 18, 7],
  ['Artisan Pasta 500g', 'Grocery', 2, 5, 9],
  ['Green Tea Selection', 'Grocery', 5, 12, 6],
  ['Dark Chocolate 70%', 'Grocery', 2, 6, 9],
  ['Harbor Denim Jacket', 'Fashion', 69, 129, 4],
  ['Merino Wool Sweater', 'Fashion', 59, 119, 5],
  ['Classic Leather Belt', 'Fashion', 25, 59, 5],
  ['Everyday Cotton Tee', 'Fashion', 12, 25, 9],
  ['Trail Rain Shell', 'Fashion', 89, 189, 3],
];

/** Every demo product, each in exactly one category, ids from 1. */
export const DEMO_PRODUCTS: readonly DemoProduct[] = PRODUCT_SPECS.map(
  ([name, category, minUsd, maxUsd, weight], i) => ({
    id: i + 1,
    name,
    category,
    minPriceCents: minUsd * 100,
    maxPriceCents: maxUsd * 100,
    weight,
  }),
);
