// Brings a control-plane database to the current schema: the plain SQL files in
// gateway/migrations (NNN_name.sql) are applied in order, once each, and recorded in
// schema_migrations. The whole run is one transaction; on PostgreSQL it first takes a
// transaction-scoped advisory lock so gateway instances starting together apply each file
// exactly once (the others wait, then find nothing to do). PGlite has one connection, so its
// transactions already run one at a time.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from './sql-client.js';

/** One migration file. */
export interface Migration {
  /** File name without `.sql`, e.g. `001_init`; applied in ascending order. */
  readonly name: string;
  readonly sql: string;
}

/** Options for {@link migrate}. */
export interface MigrateOptions {
  /** The migrations to apply; defaults to the files shipped in gateway/migrations. */
  readonly migrations?: readonly Migration[];
}

/** What a {@link migrate} run did. */
export interface MigrateResult {
  /** Names applied by this run, in order; empty when the schema was already current. */
  readonly applied: readonly string[];
  /**
   * Migrations recorded in the database that this build does not ship: a newer release migrated
   * it (a rollback). Migrations are additive (docs/deploy.md), so this build still runs on it.
   */
  readonly newer: readonly string[];
}

/** The directory of the SQL files shipped with the gateway (same path from src/ and dist/). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

const FILE_NAME = /^(\d{3,})_[a-z0-9_]+\.sql$/;

/** Reads `dir`'s migration files, sorted by their numeric prefix. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<readonly Migration[]> {
  const files = (await readdir(dir)).filter((file) => FILE_NAME.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({ name: file.slice(0, -4), sql: await readFile(`${dir}/${file}`, 'utf8') })),
  );
}

function checksum(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

interface AppliedRow {
  readonly name: string;
  readonly checksum: string;
}

/**
 * Applies every pending migration to the database behind `sql`. Refuses to run when a file
 * that was already applied has since changed: the database would not match the files.
 */
export async function migrate(sql: SqlExecutor, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = options.migrations ?? (await loadMigrations());
  return sql.transaction(async (tx) => {
    if (tx.kind === 'postgres') {
      // Keyed by schema so independent schemas (tests, tenants) never wait for each other.
      await tx.query(
        `SELECT pg_advisory_xact_lock(hashtext('quarry.migrate:' || coalesce(current_schema(), '')))`,
      );
    }
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         checksum text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Map(
      (await tx.query<AppliedRow>('SELECT name, checksum FROM schema_migrations')).map((row) => [
        row.name,
        row.checksum,
      ]),
    );
    const applied: string[] = [];
    for (const migration of migrations) {
      const sum = checksum(migration.sql);
      const previous = done.get(migration.name);
      if (previous !== undefined) {
        if (previous !== sum) {
          throw new Error(
            `migration ${migration.name} was changed after it was applied; add a new migration instead`,
          );
        }
        continue;
      }
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [migration.name, sum]);
      applied.push(migration.name);
    }
    const known = new Set(migrations.map((m) => m.name));
    const newer = [...done.keys()].filter((name) => !known.has(name)).sort();
    return { applied, newer };
  });
}
