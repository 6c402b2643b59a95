// `node --import tsx --conditions=@quarry/source test/support/loaded-drivers.ts <data dir>`, run by
// test/lazy-drivers.test.ts: builds the embedded default in this process (PGlite store, demo on,
// every built-in connector registered), prints which driver packages are loaded, answers the demo
// query, and prints them again. One JSON line each.
import { createRequire } from 'node:module';
import { createGateway, loadConfig } from '@quarry/gateway';

/** The drivers and clients the gateway may load, each from its own package. */
const WATCHED = [
  'pg',
  'mysql2',
  'ioredis',
  '@duckdb/node-api',
  'trino-client',
  'snowflake-sdk',
  '@google-cloud/bigquery',
  // Tracing's SDK: loaded only with an OTLP endpoint configured (gateway/src/observability/tracing.ts).
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
];

function loaded(): string[] {
  const files = Object.keys(createRequire(import.meta.url).cache);
  return WATCHED.filter((name) => files.some((file) => file.includes(`/node_modules/${name}/`)));
}

const dataDir = process.argv[2] ?? '';
const gateway = await createGateway(
  loadConfig({ QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: 'warn', QUARRY_ACCESS_LOG: 'off' }),
);
try {
  console.log(JSON.stringify({ started: loaded() }));
  const key = gateway.demo?.key ?? '';
  const response = await gateway.app.request('/v1/query', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
  });
  console.log(JSON.stringify({ status: response.status, answered: loaded() }));
} finally {
  await gateway.close();
}
