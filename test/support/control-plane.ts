// A fresh control-plane schema on the real Postgres for one test file: its DATABASE_URL (the
// schema chosen through the URL's `options=-c search_path=…`), a dump of every stored value as
// text for the secrets scan, and removal afterwards.
import pg from 'pg';
import { TEST_PG_URL } from './test-services.js';

export interface ControlPlaneSchema {
  readonly schema: string;
  /** DATABASE_URL for gateways that should share this schema. */
  readonly databaseUrl: string;
  /** Every text, bytea and jsonb value of every table in the schema, cast to text, one per line. */
  dumpText(): Promise<string>;
  drop(): Promise<void>;
}

/** Runs `fn` on a short-lived admin connection to the test server. */
export async function withPg<T>(fn: (client: pg.Client) => Promise<T>, url = TEST_PG_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/** Creates schema `name` (lowercase letters, digits, _) and returns its handle. */
export async function createControlPlaneSchema(name: string): Promise<ControlPlaneSchema> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe schema name ${name}`);
  await withPg((c) => c.query(`CREATE SCHEMA ${name}`));
  return {
    schema: name,
    databaseUrl: withSearchPath(TEST_PG_URL, name),
    dumpText: () =>
      withPg(async (c) => {
        const columns = await c.query<{ table_name: string; column_name: string }>(
          `SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = $1 AND data_type IN ('text', 'character varying', 'bytea', 'jsonb', 'json', 'ARRAY', 'character')
           ORDER BY table_name, ordinal_position`,
          [name],
        );
        const lines: string[] = [];
        for (const { table_name, column_name } of columns.rows) {
          const rows = await c.query<{ v: string | null }>(
            `SELECT ${pg.escapeIdentifier(column_name)}::text AS v FROM ${name}.${pg.escapeIdentifier(table_name)}`,
          );
          for (const row of rows.rows)
            if (row.v !== null) lines.push(`${table_name}.${column_name}: ${row.v}`);
        }
        return lines.join('\n');
      }),
    drop: () => withPg((c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(() => {}),
  };
}
