// Upgrades and rollbacks (docs/deploy.md): during a rolling upgrade the previous build runs on the
// new schema, and after a rollback for good, so a migration only adds. This test fails on a
// migration that drops or renames a table, column or function, changes a column's type, or makes
// a column NOT NULL without a default; the migrations written before the rule are listed below and
// are the only ones let through. And a build that finds migrations it does not ship (a newer
// release's) says which and runs on the schema.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, MIGRATIONS_DIR, migrate } from './migrate.js';
import { createPgliteClient } from './pglite-client.js';
import { pgliteTemplateFile } from './pglite-template.js';

/** Migrations from before the additive-only rule: applied everywhere long ago, never to change. */
const BEFORE_THE_RULE = new Set([
  '006_drop_unused_optimistic_reserve',
  '009_exact_money',
  '010_statements_and_payouts',
  '015_popularity',
]);

/**
 * Migrations that break the rule on purpose and need a stopped fleet to upgrade across: each is
 * named, with what to do, in docs/deploy.md's "Upgrades and rollbacks" (checked below).
 */
const NEEDS_A_STOPPED_FLEET = new Set(['017_ledger_partitions']);

const FORBIDDEN: readonly (readonly [RegExp, string])[] = [
  [
    /\bDROP\s+(TABLE|COLUMN|FUNCTION|PROCEDURE|VIEW|TYPE|SCHEMA|SEQUENCE)\b/i,
    'drops a table, column or function',
  ],
  [/\bALTER\s+TABLE\s+\S+\s+DROP\s+(?!CONSTRAINT\b|DEFAULT\b)\w/i, 'drops a column'],
  [/\bRENAME\b/i, 'renames'],
  [/\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, "changes a column's type"],
  [/\bSET\s+NOT\s+NULL\b/i, 'makes a column NOT NULL'],
  [/\bDROP\s+INDEX\b/i, 'drops an index a previous release may count on'],
];

/**
 * Indexes that no statement of this release or the previous one reads, so a migration may drop
 * them: an index only costs the writes that keep it. `ledger-reads.test.ts` explains every read of
 * the raw ledger and fails if one of them would scan a month whole.
 */
export const UNREAD_INDEXES = new Set([
  // (account_id, period) and (owner_id, period): an account's calls are read by
  // (account_id, reserved_at) since 022, statements and usage pages from the day rollups since 017.
  'usage_events_account_idx',
  'usage_events_owner_idx',
]);

/** Why `sql` breaks the additive rule (none when it only adds). */
export function nonAdditive(sql: string): string[] {
  const code = sql
    .replace(/--[^\n]*/g, '')
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\bDROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?(\w+)\s*;/gi, (drop, name: string) =>
      UNREAD_INDEXES.has(name) ? '' : drop,
    );
  const problems = FORBIDDEN.filter(([pattern]) => pattern.test(code)).map(([, why]) => why);
  // ADD COLUMN … NOT NULL with no DEFAULT: the previous release's INSERTs would fail.
  for (const clause of code.matchAll(/\bADD\s+COLUMN\b[^,;]*/gi)) {
    if (/\bNOT\s+NULL\b/i.test(clause[0]) && !/\bDEFAULT\b/i.test(clause[0]))
      problems.push('adds a NOT NULL column without a default');
  }
  return problems;
}

describe('migrations only add', () => {
  it('the check catches what would break the previous release, and lets additions through', () => {
    expect(nonAdditive('ALTER TABLE keys DROP COLUMN scopes;')).not.toEqual([]);
    expect(nonAdditive('ALTER TABLE keys DROP scopes;')).not.toEqual([]);
    expect(nonAdditive('ALTER TABLE usage_events RENAME COLUMN credits TO millicredits;')).not.toEqual([]);
    expect(nonAdditive('DROP TABLE owner_statements;')).not.toEqual([]);
    expect(nonAdditive('ALTER TABLE a ALTER COLUMN b TYPE bigint;')).not.toEqual([]);
    expect(nonAdditive('ALTER TABLE a ALTER COLUMN b SET NOT NULL;')).not.toEqual([]);
    expect(nonAdditive('ALTER TABLE a ADD COLUMN b text NOT NULL;')).not.toEqual([]);
    expect(nonAdditive('DROP FUNCTION quarry_charge_calls(text[]);')).not.toEqual([]);
    expect(nonAdditive("ALTER TABLE a ADD COLUMN b text NOT NULL DEFAULT 'x';")).toEqual([]);
    expect(nonAdditive('ALTER TABLE a ADD COLUMN b text;')).toEqual([]);
    expect(nonAdditive('CREATE INDEX IF NOT EXISTS a_idx ON a (b); -- DROP TABLE in a comment')).toEqual([]);
    expect(nonAdditive("INSERT INTO notes VALUES ('DROP TABLE x');")).toEqual([]);
    expect(nonAdditive('ALTER TABLE a DROP CONSTRAINT a_check;')).toEqual([]);
    expect(nonAdditive('DROP INDEX usage_events_account_time_idx;')).not.toEqual([]);
    expect(nonAdditive('DROP INDEX IF EXISTS usage_events_owner_idx;')).toEqual([]);
  });

  it('every migration after the rule is additive, and the list of older exceptions is exact', async () => {
    const offenders: Record<string, string[]> = {};
    for (const migration of await loadMigrations()) {
      const problems = nonAdditive(migration.sql);
      if (problems.length > 0) offenders[migration.name] = problems;
    }
    const breaking = Object.keys(offenders).filter(
      (name) => !BEFORE_THE_RULE.has(name) && !NEEDS_A_STOPPED_FLEET.has(name),
    );
    expect(breaking, JSON.stringify(offenders, null, 2)).toEqual([]);
    // Each exception is told to operators where they read how to upgrade.
    const guide = await readFile(new URL('../../../docs/deploy.md', import.meta.url), 'utf8');
    const upgrades = guide.slice(guide.indexOf('## Upgrades and rollbacks'));
    for (const name of NEEDS_A_STOPPED_FLEET) expect(upgrades, name).toContain(`\`${name}\``);
    // An exception that no longer offends (or was deleted) is dropped from the list.
    expect([...BEFORE_THE_RULE].filter((name) => offenders[name] === undefined)).toEqual([]);
  });

  it('the migration files say so where a newcomer reads', async () => {
    const latest = (await loadMigrations()).at(-1);
    expect(latest).toBeDefined();
    expect(await readFile(join(MIGRATIONS_DIR, `${latest?.name}.sql`), 'utf8')).toMatch(/additive/i);
  });
});

describe('a build on a schema a newer release migrated', () => {
  it('names the migrations it does not know and runs on the schema', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quarry-migrations-'));
    // From the build's template (every migration of this release applied), as a gateway starts.
    const sql = await createPgliteClient(join(dir, 'pglite'), { template: pgliteTemplateFile() });
    try {
      const all = await loadMigrations();
      expect((await migrate(sql, { migrations: all })).newer).toEqual([]);
      // The previous release: every migration but the newest.
      const previous = all.slice(0, -1);
      const result = await migrate(sql, { migrations: previous });
      expect(result).toEqual({ applied: [], newer: [all.at(-1)?.name] });
      // And what the previous release reads is there: the tables of its migrations answer.
      await sql.query('SELECT id, kind, ref, at FROM change_log LIMIT 1');
      await sql.query('SELECT id, account_id, expires_at, revoked_at FROM console_sessions LIMIT 1');
    } finally {
      await sql.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
