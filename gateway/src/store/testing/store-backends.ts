// The backends every store suite loops over (Kysely style: one spec, every database): embedded
// PGlite (one pristine database, cloned per fresh database) and the real PostgreSQL at
// QUARRY_TEST_PG_URL (a fresh schema per database, dropped at teardown). An unreachable
// PostgreSQL is skipped loudly, or fails the suite under CI=true.
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { describe, it } from 'vitest';
import { createPgClient } from '../pg-client.js';
import { createPgliteClient } from '../pglite-client.js';
import type { SqlClient } from '../sql-client.js';

export const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface StoreBackend {
  readonly name: 'pglite' | 'postgres';
  /** A new, empty (unmigrated) database. */
  fresh(): Promise<SqlClient>;
  /** Another client on the same database with up to `max` connections (PGlite: the same one). */
  pool(client: SqlClient, max?: number): Promise<SqlClient>;
  teardown(): Promise<void>;
}

async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function pgliteBackend(): StoreBackend {
  let pristine: Promise<PGlite> | undefined;
  const clients: SqlClient[] = [];
  return {
    name: 'pglite',
    async fresh() {
      pristine ??= PGlite.create();
      const client = await createPgliteClient(await (await pristine).clone());
      clients.push(client);
      return client;
    },
    // One connection: a "second client" is a concurrent caller on the same one.
    pool: async (client) => client,
    async teardown() {
      await Promise.all(clients.map((client) => client.close()));
      if (pristine !== undefined) await (await pristine).close();
    },
  };
}

function postgresBackend(schemaPrefix: string): StoreBackend {
  const schemas = new Map<SqlClient, string>();
  const clients: SqlClient[] = [];
  const clientFor = (schema: string, max: number) => {
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const client = createPgClient(url.toString(), { max });
    clients.push(client);
    schemas.set(client, schema);
    return client;
  };
  return {
    name: 'postgres',
    async fresh() {
      const schema = `${schemaPrefix}_${randomBytes(6).toString('hex')}`;
      const admin = createPgClient(PG_URL, { max: 1 });
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.close();
      return clientFor(schema, 4);
    },
    pool: async (client, max = 4) => clientFor(schemas.get(client) as string, max),
    async teardown() {
      await Promise.all(clients.map((client) => client.close()));
      const admin = createPgClient(PG_URL, { max: 1 });
      for (const schema of new Set(schemas.values())) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}

/** The backends for a suite, each with whether it can run here. */
export async function storeBackends(
  suite: string,
  schemaPrefix: string,
): Promise<{ backend: StoreBackend; available: boolean }[]> {
  const pgUp = await pgReachable();
  if (!pgUp) {
    console.warn(
      `\n!!! PostgreSQL at ${PG_URL} is unreachable: the postgres backend of the ${suite} suite is SKIPPED` +
        `${process.env.CI === 'true' ? ' (CI=true: failing instead)' : ''} !!!\n`,
    );
    if (process.env.CI === 'true') {
      describe(`${suite} on postgres`, () => {
        it('needs PostgreSQL under CI', () => {
          throw new Error(`PostgreSQL at ${PG_URL} is unreachable and CI=true`);
        });
      });
    }
  }
  return [
    { backend: pgliteBackend(), available: true },
    { backend: postgresBackend(schemaPrefix), available: pgUp },
  ];
}
