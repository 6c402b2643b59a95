// @quarry/examples: the demo dataset generator, the demo DuckDB warehouse seeder, and the
// location of the example analytic definitions the gateway loads on first start.

export {
  DEMO_CATEGORIES,
  DEMO_CHANNELS,
  DEMO_PRODUCTS,
  DEMO_REGIONS,
  type DemoCategory,
  type DemoChannel,
  type DemoProduct,
  type DemoRegion,
} from './demo-catalog.js';
export { exampleAnalyticsDir } from './example-analytics-dir.js';
export {
  DEFAULT_SALES_SEED,
  FIRST_SALES_YEAR,
  formatCents,
  type GenerateSalesOptions,
  generateSales,
  LAST_SALES_YEAR,
  type SaleRow,
} from './sales-generator.js';
export {
  DEFAULT_DEMO_ROWS,
  DEMO_DATASET_VERSION,
  DEMO_TEMPLATE_DIR,
  demoTemplateFile,
  ensureDemoTemplate,
  type SeedDemoWarehouseOptions,
  type SeedDemoWarehouseResult,
  seedDemoWarehouse,
} from './seed-demo-warehouse.js';
export { createSeededRandom, type SeededRandom } from './seeded-random.js';
