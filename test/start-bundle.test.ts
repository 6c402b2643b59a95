// `npm start` runs esbuild's bundle of the gateway (scripts/start-bundle.mjs). What the sources
// import lazily must stay lazy in it: a connector's driver, Stripe, the store's drivers and
// tracing's SDK are imported only from chunks the bundle loads on demand, never by the entry or
// what it imports statically (a single-file bundle hoists every third-party import to its top and
// loads them all at each start: about 3 s of a loaded restart). test/embedded-default.test.ts runs
// the bundle itself through `npm start`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/gateway-process.js';

/**
 * Packages the sources import only on demand (test/support/loaded-drivers.ts's list and more):
 * the store's own driver, PGlite or pg, among them, loaded once the store's kind is known.
 */
const LAZY = [
  'pg',
  'mysql2',
  'ioredis',
  '@duckdb/node-api',
  '@electric-sql/pglite',
  'trino-client',
  'snowflake-sdk',
  '@google-cloud/bigquery',
  'google-auth-library',
  'stripe',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  'apache-arrow',
  '@dsnp/parquetjs',
  // The MCP SDK (and Ajv with it) loads with the first MCP session (gateway/src/mcp/mcp-sdk.ts).
  '@modelcontextprotocol/sdk',
];

/** The files a module loads before it runs (its static imports, followed), and the packages among them. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    // Static imports, and packages loaded with require as the module runs
    // (connectors/duckdb/src/duckdb-api.ts: `createRequire(…)("@duckdb/node-api")`).
    const imported = [
      ...source.matchAll(/^import\s(?:[^;"']*?\sfrom\s*)?"([^"]+)";/gm),
      ...source.matchAll(/createRequire\([^)]*\)\("([^"]+)"\)/g),
    ];
    for (const match of imported) {
      const specifier = match[1] as string;
      if (specifier.startsWith('./')) todo.push(join(dirname(file), specifier));
      else if (!specifier.startsWith('node:')) {
        const parts = specifier.split('/');
        packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string));
      }
    }
  }
  return { files, packages };
}

describe("npm start's bundle", () => {
  it('loads no driver, payment SDK or tracing SDK at start: each is in a chunk imported on demand', async () => {
    const { buildGatewayBundle } = (await import(
      pathToFileURL(join(REPO_ROOT, 'scripts/start-bundle.mjs')).href
    )) as { buildGatewayBundle: () => Promise<{ file: string }> };
    const { file } = await buildGatewayBundle();
    const { files, packages } = staticGraph(file);
    // The graph is read right: the entry pulls in the web framework at start.
    expect(packages).toContain('@hono/zod-openapi');
    expect(LAZY.filter((name) => packages.has(name))).toEqual([]);
    // And each of them is still in the bundle's reach, lazily (so the check above is not vacuous).
    const all = readFileSync(file, 'utf8') + [...files].map((f) => readFileSync(f, 'utf8')).join('');
    expect(all).toMatch(/import\("\.\/chunk-[A-Z0-9]+\.mjs"\)/);
    const chunks = readdirChunks(dirname(file));
    for (const name of [
      'pg',
      'mysql2',
      '@duckdb/node-api',
      '@electric-sql/pglite',
      'stripe',
      '@modelcontextprotocol/sdk/server/mcp.js',
    ]) {
      expect(
        chunks.some((chunk) => chunk.includes(`from "${name}"`) || chunk.includes(`)("${name}")`)),
        name,
      ).toBe(true);
    }
  }, 120_000);
});

function readdirChunks(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith('chunk-') && name.endsWith('.mjs'))
    .map((name) => join(dir, name))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, 'utf8'));
}
