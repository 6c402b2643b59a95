// A process holding one part of the embedded default alone, whose resident memory
// `npm run bench:footprint -w @quarry/bench -- --breakdown` reads. Plain JavaScript over the
// compiled build (`npm run build`), run with plain node like `npm run start:prod`:
//   node bench/src/footprint-probe.mjs bare               Node itself, nothing loaded
//   node bench/src/footprint-probe.mjs pglite <dir>       the embedded store in <dir>, opened and
//                                                         migrated as the gateway does
//   node bench/src/footprint-probe.mjs duckdb <file>      the demo warehouse, opened read-only as
//                                                         the DuckDB connector does, one demo query
// Prints one JSON line ({"heapUsedBytes"}) once settled, then waits to be killed.

const [part, path] = process.argv.slice(2);
const dist = new URL('../../gateway/dist/', import.meta.url);

if (part === 'pglite') {
  const { createPgliteClient } = await import(new URL('store/pglite-client.js', dist).href);
  const { migrate } = await import(new URL('store/migrate.js', dist).href);
  const sql = await createPgliteClient(path);
  await migrate(sql);
  await sql.query('SELECT count(*) FROM accounts');
} else if (part === 'duckdb') {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  // The driver's options for the demo connection (trusted: no thread or memory cap).
  const instance = await DuckDBInstance.create(path, {
    access_mode: 'READ_ONLY',
    autoinstall_known_extensions: 'false',
  });
  const connection = await instance.connect();
  await connection.runAndReadAll(
    'SELECT region, sum(amount) AS revenue FROM sales WHERE year = 2024 GROUP BY region ORDER BY revenue DESC',
  );
} else if (part !== 'bare') {
  console.error(`unknown part ${part}: bare, pglite <dir> or duckdb <file>`);
  process.exit(2);
}
// As the gateway's figures are read: a few seconds after the work, not at its peak.
await new Promise((resolve) => setTimeout(resolve, 3000));
console.log(JSON.stringify({ heapUsedBytes: process.memoryUsage().heapUsed }));
setInterval(() => {}, 60_000);
