// A freshly initialised PGlite database kept as a tarball, so a new embedded store is unpacked
// from it instead of running initdb: initdb is most of a fresh start's time (3–5 s on a quiet
// core, ~10 s on a loaded one) and, run inside a second PGlite instance, most of its peak memory
// (~800 MiB). `npm ci` (the root's `prepare`) and `npm run build` make the template; a gateway
// that finds none for the installed PGlite runs initdb as before. The template holds initdb's
// output only, not our migrations, so it depends on the PGlite version alone: its file name
// carries that version, and a PGlite upgrade simply misses the old file until it is remade.
// Beside it, a second template is migrated as well (migrating a new store is most of what is left
// of its creation: ~0.5 s quiet, 4 s loaded): its name carries a digest of the migrations it holds
// (their names and contents), so a new or changed migration misses it and the store is made from
// the first template and migrated at start, as before, until `npm ci` or `npm run build` remakes it.
// The migrated template is a data directory, not a tarball: a new store is a copy of its files
// (~0.1 s), where PGlite unpacking the same database from a tarball took ~0.9–1.3 s of a fresh
// start's CPU. The first template is the same tarball PGlite itself unpacks after its own initdb
// (dumpDataDir), and what @electric-sql/pglite-prepopulatedfs ships for the PGlite versions it follows.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMigrations, type Migration, migrate } from './migrate.js';

/** Where templates live (same path from src/ and dist/); `npm run build` ships it with the gateway. */
export const PGLITE_TEMPLATE_DIR = fileURLToPath(new URL('../../pglite-template/', import.meta.url));

/** The installed @electric-sql/pglite's version, read from its package.json. */
export function pgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  // The entry point is <package>/dist/index.cjs; its package.json is one level above dist/.
  const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** The template file for the installed PGlite (it may not exist). */
export function pgliteTemplateFile(dir: string = PGLITE_TEMPLATE_DIR): string {
  return join(dir, `pglite-${pgliteVersion()}.tar.gz`);
}

/** A digest of the migrations (names and contents), naming the migrated template. */
function migrationsDigest(migrations: readonly Migration[]): string {
  const hash = createHash('sha256');
  for (const m of migrations) hash.update(m.name).update('\0').update(m.sql).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The migrated template holding exactly `migrations` for the installed PGlite: a data directory
 * (it may not exist).
 */
export function migratedPgliteTemplate(
  migrations: readonly Migration[],
  dir: string = PGLITE_TEMPLATE_DIR,
): string {
  return join(dir, `pglite-${pgliteVersion()}-schema-${migrationsDigest(migrations)}`);
}

/** What {@link ensurePgliteTemplate} did. */
export interface EnsureTemplateResult {
  readonly file: string;
  /** False when the template was already there. */
  readonly created: boolean;
  /** The migrated template, a data directory (made from `file`, then migrated). */
  readonly migrated: { readonly dir: string; readonly created: boolean };
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** A template, or what a maker that died left of one (`….tmp-<pid>`). */
const isTemplateEntry = (name: string) => name.startsWith('pglite-');

async function writeAtomically(file: string, bytes: Blob): Promise<void> {
  const temp = `${file}.tmp-${process.pid}`;
  await writeFile(temp, Buffer.from(await bytes.arrayBuffer()));
  await rename(temp, file);
}

/**
 * Makes the templates for the installed PGlite unless they exist: initdb in an in-memory
 * instance, a checkpoint (so opening a copy replays no WAL), then the data directory as a
 * gzipped tarball, written under a temporary name and renamed into place; then the same
 * unpacked into a data directory under a temporary name, migrated (`migrations`, default the
 * shipped ones), checkpointed, closed and renamed into place as the migrated template. Other
 * templates in `dir` (other PGlite versions, other migrations) are removed.
 */
export async function ensurePgliteTemplate(
  dir: string = PGLITE_TEMPLATE_DIR,
  options: { readonly migrations?: readonly Migration[] } = {},
): Promise<EnsureTemplateResult> {
  const migrations = options.migrations ?? (await loadMigrations());
  const file = pgliteTemplateFile(dir);
  const migratedDir = migratedPgliteTemplate(migrations, dir);
  const baseExisted = await exists(file);
  const migratedExisted = await exists(join(migratedDir, 'PG_VERSION'));
  if (!baseExisted || !migratedExisted) {
    await mkdir(dir, { recursive: true });
    // Imported here: the gateway reads the template's name at every start, PGlite only if embedded.
    const { PGlite } = await import('@electric-sql/pglite');
    if (!baseExisted) {
      const db = await PGlite.create();
      try {
        await db.exec('CHECKPOINT');
        await writeAtomically(file, await db.dumpDataDir('gzip'));
      } finally {
        await db.close();
      }
    }
    if (!migratedExisted) {
      const temp = `${migratedDir}.tmp-${process.pid}`;
      await rm(temp, { recursive: true, force: true });
      const db = await PGlite.create({ dataDir: temp, loadDataDir: new Blob([await readFile(file)]) });
      const { createPgliteClient } = await import('./pglite-client.js');
      const sql = await createPgliteClient(db);
      try {
        await migrate(sql, { migrations });
        await db.exec('CHECKPOINT');
      } finally {
        await sql.close();
      }
      await rm(migratedDir, { recursive: true, force: true });
      await rename(temp, migratedDir);
    }
  }
  const keep = new Set([file, migratedDir]);
  for (const name of await readdir(dir)) {
    if (isTemplateEntry(name) && !keep.has(join(dir, name)))
      await rm(join(dir, name), { recursive: true, force: true });
  }
  return { file, created: !baseExisted, migrated: { dir: migratedDir, created: !migratedExisted } };
}
