// A freshly initialised PGlite database kept as a tarball, so a new embedded store is unpacked
// from it instead of running initdb: initdb is most of a fresh start's time (3–5 s on a quiet
// core, ~10 s on a loaded one) and, run inside a second PGlite instance, most of its peak memory
// (~800 MiB). `npm ci` (the root's `prepare`) and `npm run build` make the template; a gateway
// that finds none for the installed PGlite runs initdb as before. The template holds initdb's
// output only, not our migrations, so it depends on the PGlite version alone: its file name
// carries that version, and a PGlite upgrade simply misses the old file until it is remade.
// This is the same tarball PGlite itself unpacks after its own initdb (dumpDataDir), and what
// @electric-sql/pglite-prepopulatedfs ships for the PGlite versions it follows.
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** What {@link ensurePgliteTemplate} did. */
export interface EnsureTemplateResult {
  readonly file: string;
  /** False when the template was already there. */
  readonly created: boolean;
}

/**
 * Makes the template for the installed PGlite unless it exists: initdb in an in-memory
 * instance, a checkpoint (so opening a copy replays no WAL), then the data directory as a
 * gzipped tarball, written under a temporary name and renamed into place. Templates of other
 * PGlite versions in `dir` are removed.
 */
export async function ensurePgliteTemplate(dir: string = PGLITE_TEMPLATE_DIR): Promise<EnsureTemplateResult> {
  const file = pgliteTemplateFile(dir);
  const exists = await stat(file).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await mkdir(dir, { recursive: true });
    // Imported here: the gateway reads the template's name at every start, PGlite only if embedded.
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create();
    try {
      await db.exec('CHECKPOINT');
      const tarball = await db.dumpDataDir('gzip');
      const temp = `${file}.tmp-${process.pid}`;
      await writeFile(temp, Buffer.from(await tarball.arrayBuffer()));
      await rename(temp, file);
    } finally {
      await db.close();
    }
  }
  for (const name of await readdir(dir)) {
    if (/^pglite-.+\.tar\.gz$/.test(name) && join(dir, name) !== file)
      await rm(join(dir, name), { force: true });
  }
  return { file, created: !exists };
}
