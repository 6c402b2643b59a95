// Writes SQLite database files for the tests with sql.js itself: a read-write in-memory database,
// exported and written to disk (the connector under test only ever reads files).
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import initSqlJs, { type SqlValue } from 'sql.js';

/** One statement, optionally with positional values to bind. */
export type FixtureStatement = string | readonly [sql: string, values: readonly SqlValue[]];

/**
 * Runs the statements on a new database and writes it to `path`, atomically (a temp file renamed
 * over the target), the way an owner should replace a live database file.
 */
export async function writeSqliteFile(path: string, statements: readonly FixtureStatement[]): Promise<void> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  try {
    for (const statement of statements) {
      if (typeof statement === 'string') db.run(statement);
      else db.run(statement[0], [...statement[1]]);
    }
    const temp = `${path}.${process.pid}.tmp`;
    await writeFile(temp, db.export());
    await rename(temp, path);
  } finally {
    db.close();
  }
}

/** A fresh temp directory and a function that removes it. */
export async function tempDir(prefix: string): Promise<{ readonly dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
