// Test-only helper: how this package's tests reach the local Postgres (QUARRY_TEST_PG_URL), a
// write-capable admin connection for fixtures, and the skip-loudly-unless-CI rule.
import pg from 'pg';

/** The test server's URL (trust auth on loopback by default). */
export const TEST_PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A short random suffix for table, schema and application names, unique per test file run. */
export function uniqueSuffix(): string {
  return `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Runs one statement with write access, outside any connector. */
export async function adminQuery(sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** `true` when the test server answers, else why not. */
export async function pgAvailable(): Promise<true | string> {
  try {
    await adminQuery('SELECT 1');
    return true;
  } catch (error) {
    return `Postgres at QUARRY_TEST_PG_URL is unreachable (${(error as Error).message})`;
  }
}

/**
 * Skips the test with a loud message when Postgres is unavailable, except under CI=true, where an
 * unavailable service is a failure.
 */
export function requirePg(availability: true | string, skip: (note: string) => void): void {
  if (availability === true) return;
  if (process.env.CI === 'true') throw new Error(`CI requires Postgres: ${availability}`);
  console.warn(`\n!!! SKIPPING Postgres tests: ${availability}\n`);
  skip(availability);
}
