// Where the end-to-end tests find the local services, and the rule for when one is missing:
// skip with a loud message, except under CI=true, where a missing service fails the run.
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import pg from 'pg';

export const TEST_PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_MYSQL_URL = process.env.QUARRY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const TEST_REDIS_URL = process.env.QUARRY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A short random suffix for schema, database, user and analytic names, unique per test file run. */
export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** `true` when Postgres answers, else why not. */
export async function pgAvailable(): Promise<true | string> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    return `Postgres at ${TEST_PG_URL} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** `true` when MariaDB/MySQL answers, else why not. */
export async function mysqlAvailable(): Promise<true | string> {
  try {
    const connection = await mysql.createConnection({ uri: TEST_MYSQL_URL, connectTimeout: 3000 });
    await connection.query('SELECT 1');
    await connection.end();
    return true;
  } catch (error) {
    return `MariaDB at ${TEST_MYSQL_URL} is unreachable (${(error as Error).message})`;
  }
}

/** `true` when Redis answers PING, else why not. */
export async function redisAvailable(): Promise<true | string> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Connection errors are reported through the promise below; without a listener ioredis logs them.
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch (error) {
    return `Redis at ${TEST_REDIS_URL} is unreachable (${(error as Error).message})`;
  } finally {
    redis.disconnect();
  }
}

/**
 * Decides whether tests needing a service run: `true` when it is up; `false` (after a loud
 * warning) when it is down; throws under CI=true, where a missing service is a failure.
 */
export function serviceUp(availability: true | string): boolean {
  if (availability === true) return true;
  if (process.env.CI === 'true') throw new Error(`CI requires every service: ${availability}`);
  console.warn(`\n!!!!!!!! SKIPPING end-to-end tests: ${availability} !!!!!!!!\n`);
  return false;
}
