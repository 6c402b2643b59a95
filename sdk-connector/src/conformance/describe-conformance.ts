// Checks the optional `describe` capability (ConnectorSession.describe, Connector.describe): a
// statement is checked against the warehouse without running it. The fixture query's columns
// come back by name, unknown tables and columns fail with QUERY_FAILED carrying the warehouse's
// own message naming them, every write is refused (described as not read-only, or failed), and
// the fixture table is unchanged afterwards.
import { expect } from 'vitest';
import { isConnectorError } from '../connector-error.js';
import { CONFORMANCE_COLUMNS } from './conformance-fixture.js';
import {
  type ConformanceHarness,
  describeOutcome,
  expectConnectorError,
  typed,
} from './conformance-harness.js';

const TEST_TIMEOUT_MS = 30_000;

/** Registers the describe check (when the options say the plugin's sessions describe). */
export function registerDescribeConformance(h: ConformanceHarness): void {
  const describe = (sql: string, params = {}) => {
    const connector = h.connector();
    if (connector.describe === undefined) throw new Error('the runtime connector has no describe()');
    return connector.describe({ template: h.template(sql), params, timeoutMs: 10_000 });
  };

  h.check(
    'describe',
    "describes a query without running it: its columns, unknown names in the warehouse's message, writes refused",
    h.options.describes === true
      ? async () => {
          const before = await h.snapshot();
          const all = await describe(h.sql.all(h.table));
          expect(all, 'describe() resolved undefined: the sessions do not implement it').toBeDefined();
          expect(all?.readOnly).toBe(true);
          expect(all?.columns.map((c) => c.name)).toEqual(CONFORMANCE_COLUMNS.map((c) => c.name));

          const byName = await describe(h.sql.byName(h.table), { name: typed('string', null) });
          expect(byName?.readOnly).toBe(true);
          expect(byName?.columns.map((c) => c.name)).toEqual(['id']);

          const missingTable = `${h.table}_missing`;
          const noTable = await expectConnectorError(
            describe(`SELECT id FROM ${missingTable}`),
            'QUERY_FAILED',
            'an unknown table',
          );
          expect(noTable.warehouseMessage ?? '', "the warehouse's message names the table").toContain(
            missingTable,
          );
          const noColumn = await expectConnectorError(
            describe(`SELECT quarry_no_such_column FROM ${h.table}`),
            'QUERY_FAILED',
            'an unknown column',
          );
          expect(noColumn.warehouseMessage ?? '', "the warehouse's message names the column").toContain(
            'quarry_no_such_column',
          );

          for (const statement of h.sql.writes(h.table)) {
            let outcome: unknown;
            try {
              outcome = await describe(statement);
            } catch (error) {
              outcome = error;
            }
            const refused =
              isConnectorError(outcome, 'QUERY_FAILED') ||
              (outcome !== null && typeof outcome === 'object' && 'readOnly' in outcome && !outcome.readOnly);
            const seen = isConnectorError(outcome) ? describeOutcome(outcome) : JSON.stringify(outcome);
            expect(refused, `${statement}: not refused (${seen})`).toBe(true);
          }
          expect(await h.snapshot(), 'describing must not change the fixture table').toEqual(before);
          // The connector still answers queries afterwards (no session left in a bad state).
          expect((await h.query(h.sql.all(h.table))).rowCount).toBe(before.length);
        }
      : "the plugin's sessions do not implement describe (set `describes: true` when they do)",
    TEST_TIMEOUT_MS,
  );
}
