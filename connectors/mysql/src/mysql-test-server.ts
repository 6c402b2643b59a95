// Test support (used only by this package's *.test.ts): where the test MariaDB/MySQL server is,
// whether it is up, and an admin connection with write access for fixtures and server-side probes.
// An unreachable server skips the integration tests loudly, except under CI=true, where it fails.
import mysql, { type Connection } from 'mysql2';
import { connectMysql } from './mysql-session.js';

/** The test server's URL (QUARRY_TEST_MYSQL_URL, default root@127.0.0.1:3306/test). */
export const MYSQL_TEST_URL = process.env.QUARRY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** The test server's coordinates, as the connector's config fields. */
export interface MysqlTestTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password?: string;
  readonly database: string;
}

/** Parses MYSQL_TEST_URL, optionally pointing at another database. */
export function mysqlTestTarget(database?: string): MysqlTestTarget {
  const url = new URL(MYSQL_TEST_URL);
  const password = decodeURIComponent(url.password);
  return {
    host: url.hostname,
    port: url.port === '' ? 3306 : Number(url.port),
    user: decodeURIComponent(url.username) || 'root',
    ...(password === '' ? {} : { password }),
    database: database ?? (decodeURIComponent(url.pathname.slice(1)) || 'test'),
  };
}

/** A small promise wrapper over one admin connection (text protocol, object rows). */
export interface MysqlAdmin {
  readonly threadId: number;
  query<T = Record<string, unknown>>(sql: string, values?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Opens an admin connection (read-write, no database unless given). */
export async function connectMysqlAdmin(database?: string): Promise<MysqlAdmin> {
  const target = mysqlTestTarget();
  const connection: Connection = await connectMysql({
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    ...(database === undefined ? {} : { database }),
    connectTimeout: 3_000,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
  });
  connection.on('error', () => {});
  return {
    threadId: connection.threadId,
    query<T>(sql: string, values: readonly unknown[] = []): Promise<T[]> {
      return new Promise((resolve, reject) => {
        connection.query(sql, [...values], (error, rows) => (error ? reject(error) : resolve(rows as T[])));
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        connection.end(() => resolve());
      }),
  };
}

/**
 * Resolves `true` when the test server answers, else the reason. Under CI=true an unreachable
 * server is an error, never a skip.
 */
export async function mysqlAvailable(): Promise<true | string> {
  try {
    const admin = await connectMysqlAdmin();
    await admin.close();
    return true;
  } catch (error) {
    const reason = `MySQL/MariaDB test server at ${mysqlTestTarget().host}:${mysqlTestTarget().port} unreachable (${
      (error as { code?: string }).code ?? 'error'
    })`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires it`);
    console.warn(`\n!!!!!!!!!! SKIPPING MySQL integration tests: ${reason} !!!!!!!!!!\n`);
    return reason;
  }
}

/** A unique, safe identifier suffix per test file run (other engineers share the server). */
export function uniqueSuffix(): string {
  return `${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Quotes an identifier we generated ourselves. */
export function ident(name: string): string {
  return mysql.escapeId(name);
}
