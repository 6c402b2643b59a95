// Nothing outside gateway/src/money/ writes a money table (README.md beside this file): SQL that
// inserts, updates or deletes one of them anywhere else in the gateway fails this test.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const gatewaySrc = join(here, '..');

/** The tables only the money module writes. */
export const MONEY_TABLES = [
  'usage_events',
  'usage_counters',
  'usage_owner_days',
  'usage_account_days',
  'usage_analytic_callers',
  'usage_analytic_caller_days',
  'owner_statements',
  'owner_statement_lines',
  'owner_payouts',
  'closed_periods',
  'billing_accounts',
  'payment_events',
  'payg_invoices',
  'payment_adjustments',
] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const WRITE = new RegExp(
  `\\b(INSERT\\s+INTO|UPDATE|DELETE\\s+FROM|TRUNCATE)\\s+(${MONEY_TABLES.join('|')})\\b`,
  'gi',
);

describe('money tables', () => {
  it('are written only by the money module', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(gatewaySrc)) {
      if (file.startsWith(here)) continue;
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(WRITE)) offenders.push(`${relative(gatewaySrc, file)}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  it('finds a write where there is one', () => {
    WRITE.lastIndex = 0;
    expect('const q = `UPDATE usage_counters SET x = 1`'.match(WRITE)).not.toBeNull();
    expect('SELECT * FROM usage_events'.match(WRITE)).toBeNull();
  });
});
