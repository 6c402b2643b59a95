import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from './migrate.js';
import { createPgliteClient } from './pglite-client.js';
import {
  ensurePgliteTemplate,
  migratedPgliteTemplate,
  pgliteTemplateFile,
  pgliteVersion,
} from './pglite-template.js';
import type { SqlClient } from './sql-client.js';

/** What a new database is like, whichever way it was made. */
async function character(sql: SqlClient) {
  const [database] = await sql.query<{ encoding: string; collate: string; ctype: string }>(
    `SELECT pg_encoding_to_char(encoding) AS encoding, datcollate AS collate, datctype AS ctype
       FROM pg_database WHERE datname = current_database()`,
  );
  const [settings] = await sql.query<{ version: string; shared_buffers: string; timezone: string }>(
    `SELECT version(), current_setting('shared_buffers') AS shared_buffers,
            current_setting('TimeZone') AS timezone`,
  );
  const databases = await sql.query<{ datname: string }>('SELECT datname FROM pg_database ORDER BY datname');
  return { database, settings, databases: databases.map((d) => d.datname) };
}

/** A store made with a damaged `template` says so once and is made by initdb (nothing migrated yet). */
async function expectInitdbAfter(template: string, store: string): Promise<void> {
  const errors: unknown[] = [];
  const sql = await createPgliteClient(store, { template, onTemplateError: (error) => errors.push(error) });
  try {
    expect(errors).toHaveLength(1);
    expect((await migrate(sql)).applied.length).toBeGreaterThan(0);
  } finally {
    await sql.close();
  }
}

describe('embedded store template', () => {
  let dir: string;
  let template: string;
  let migratedTemplate: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-pglite-template-'));
    // A template of another PGlite version, left by an earlier install.
    await mkdir(join(dir, 'templates'));
    await writeFile(join(dir, 'templates', 'pglite-0.0.1.tar.gz'), 'stale');
    // A migrated template of other migrations (a data directory), and what a maker that died left.
    await mkdir(join(dir, 'templates', 'pglite-0.0.1-schema-0123456789abcdef'));
    await writeFile(join(dir, 'templates', 'pglite-0.0.1-schema-0123456789abcdef', 'PG_VERSION'), '17');
    await mkdir(join(dir, 'templates', 'pglite-0.0.1-schema-0123456789abcdef.tmp-1'));
    const made = await ensurePgliteTemplate(join(dir, 'templates'));
    expect(made.created).toBe(true);
    expect(made.migrated.created).toBe(true);
    template = made.file;
    migratedTemplate = made.migrated.dir;
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is named after the installed PGlite, made once, and replaces other versions' templates", async () => {
    expect(template).toBe(pgliteTemplateFile(join(dir, 'templates')));
    expect(template.endsWith(`pglite-${pgliteVersion()}.tar.gz`)).toBe(true);
    expect(migratedTemplate).toBe(migratedPgliteTemplate(await loadMigrations(), join(dir, 'templates')));
    expect((await readdir(join(dir, 'templates'))).sort()).toEqual(
      [`pglite-${pgliteVersion()}.tar.gz`, migratedTemplate.slice(join(dir, 'templates').length + 1)].sort(),
    );
    expect(await ensurePgliteTemplate(join(dir, 'templates'))).toEqual({
      file: template,
      created: false,
      migrated: { dir: migratedTemplate, created: false },
    });
  });

  it('names the migrated template after the migrations it holds', async () => {
    const migrations = await loadMigrations();
    const changed = migrations.map((m, i) => (i === migrations.length - 1 ? { ...m, sql: `${m.sql}\n` } : m));
    expect(migratedPgliteTemplate(changed)).not.toBe(migratedPgliteTemplate(migrations));
    expect(migratedPgliteTemplate(migrations.slice(0, -1))).not.toBe(migratedPgliteTemplate(migrations));
  });

  it('makes a new store from the migrated template with nothing left to migrate, like one migrated at start', async () => {
    const fromMigrated = await createPgliteClient(join(dir, 'from-migrated'), { template: migratedTemplate });
    const fromBase = await createPgliteClient(join(dir, 'from-base'), { template });
    try {
      expect((await migrate(fromMigrated)).applied).toEqual([]);
      expect((await migrate(fromBase)).applied.length).toBeGreaterThan(0);
      const schemaOf = (sql: SqlClient) =>
        sql.query(
          `SELECT table_name, column_name, data_type, is_nullable, column_default
             FROM information_schema.columns WHERE table_schema = 'public'
            ORDER BY table_name, column_name`,
        );
      expect(await schemaOf(fromMigrated)).toEqual(await schemaOf(fromBase));
      const names = (sql: SqlClient) =>
        sql.query('SELECT name, checksum FROM schema_migrations ORDER BY name');
      expect(await names(fromMigrated)).toEqual(await names(fromBase));
      expect(await character(fromMigrated)).toEqual(await character(fromBase));
    } finally {
      await fromMigrated.close();
      await fromBase.close();
    }
  }, 120_000);

  it('makes a new store that is migrated, kept across a restart, and like one made by initdb', async () => {
    const store = join(dir, 'from-template');
    const first = await createPgliteClient(store, { template });
    let made: Awaited<ReturnType<typeof character>>;
    try {
      expect((await migrate(first)).applied.length).toBeGreaterThan(0);
      await first.query(`INSERT INTO accounts (id, email, name) VALUES ('acc_t', 't@example.com', 'T')`);
      made = await character(first);
    } finally {
      await first.close();
    }
    // A second open finds the database: the template is not unpacked over it.
    const reopened = await createPgliteClient(store, { template });
    try {
      expect((await migrate(reopened)).applied).toEqual([]);
      expect(await reopened.query('SELECT email FROM accounts')).toEqual([{ email: 't@example.com' }]);
    } finally {
      await reopened.close();
    }

    const fresh = await createPgliteClient(join(dir, 'by-initdb'));
    try {
      expect(made).toEqual(await character(fresh));
      // The store runs with the embedded settings (pglite-client.ts), not Postgres's 128 MB.
      expect(made.settings?.shared_buffers).toBe('16MB');
    } finally {
      await fresh.close();
    }
  }, 120_000);

  it('unpacks the given template, not a database of its own', async () => {
    // A template with a mark in it: only a store unpacked from it has the mark.
    const source = await PGlite.create();
    try {
      await source.exec(`CREATE TABLE template_mark (n int); INSERT INTO template_mark VALUES (7)`);
      const marked = join(dir, 'marked.tar.gz');
      await writeFile(marked, Buffer.from(await (await source.dumpDataDir('gzip')).arrayBuffer()));
      const sql = await createPgliteClient(join(dir, 'from-marked'), { template: marked });
      try {
        expect(await sql.query('SELECT n FROM template_mark')).toEqual([{ n: 7 }]);
      } finally {
        await sql.close();
      }
    } finally {
      await source.close();
    }
  }, 120_000);

  it('copies a data-directory template into a new store and leaves the template as it was', async () => {
    const templateDir = join(dir, 'marked-dir');
    const source = await PGlite.create({ dataDir: templateDir });
    try {
      await source.exec(
        `CREATE TABLE template_mark (n int); INSERT INTO template_mark VALUES (7); CHECKPOINT`,
      );
    } finally {
      await source.close();
    }
    const sql = await createPgliteClient(join(dir, 'from-marked-dir'), { template: templateDir });
    try {
      expect(await sql.query('SELECT n FROM template_mark')).toEqual([{ n: 7 }]);
      await sql.exec('INSERT INTO template_mark VALUES (8)');
    } finally {
      await sql.close();
    }
    expect((await readdir(dir)).filter((name) => name.includes('.tmp-'))).toEqual([]);
    const again = await PGlite.create({ dataDir: templateDir });
    try {
      expect((await again.query('SELECT n FROM template_mark')).rows).toEqual([{ n: 7 }]);
    } finally {
      await again.close();
    }
  }, 120_000);

  it('creates the store by initdb when a data-directory template is damaged, and says so', async () => {
    const damaged = join(dir, 'damaged-dir');
    await mkdir(damaged);
    await writeFile(join(damaged, 'PG_VERSION'), '17\n');
    await writeFile(join(damaged, 'postgresql.conf'), "this is = not ' a config");
    await expectInitdbAfter(damaged, join(dir, 'after-damaged-dir'));
  }, 120_000);

  it('creates the store by initdb when the template is damaged, and says so', async () => {
    const damaged = join(dir, 'damaged.tar.gz');
    await writeFile(damaged, 'not a tarball');
    await expectInitdbAfter(damaged, join(dir, 'after-damage'));
  }, 120_000);
});
