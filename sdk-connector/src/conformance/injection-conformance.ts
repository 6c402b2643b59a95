// Checks that values cannot become SQL and that the connector cannot write: 200+ hostile strings
// bound to a filter behave like a harmless value (same rows, same compiled SQL text, fast, table
// unchanged), NUL bytes are refused before any driver sees them, and writes/DDL fail.
import { expect } from 'vitest';
import { checkParamSchema, compileTemplate, validateParams } from '../index.js';
import {
  type ConformanceHarness,
  describeOutcome,
  expectConnectorError,
  idsOf,
  typed,
} from './conformance-harness.js';
import { hostileStrings } from './hostile-strings.js';

const TEST_TIMEOUT_MS = 30_000;
/** A bound value cannot make a fixture query slow; a spliced `pg_sleep(5)` would. */
const PER_QUERY_LIMIT_MS = 1_000;
/** Each hostile query's own time limit, so a spliced sleep is cut short and reported, not waited out. */
const HOSTILE_TIMEOUT_MS = 2_000;
const NAME_SCHEMA = { name: { type: 'string', maxLength: 1000 } } as const;

/** Registers the injection and read-only checks (4–5 of the kit). */
export function registerInjectionConformance(h: ConformanceHarness): void {
  h.check(
    'hostileStrings',
    'binds 200+ hostile strings as inert values: same rows, same SQL text, fast, table unchanged',
    async () => {
      const dialect = h.options.plugin.dialect;
      const sql = h.sql.byName(h.table);
      const template = h.template(sql);
      const hostile = hostileStrings({ table: h.table, knownValue: 'alpha' });
      expect(hostile.length).toBeGreaterThanOrEqual(200);

      // The filter is real: a fixture name matches its row, a harmless value matches none.
      expect(idsOf(await h.query(sql, h.validated(NAME_SCHEMA, { name: 'alpha' })))).toEqual([1]);
      const harmlessParams = h.validated(NAME_SCHEMA, { name: 'no such name' });
      const harmless = idsOf(await h.query(sql, harmlessParams));
      expect(harmless).toEqual([]);
      const harmlessSql = compileTemplate(template, dialect, harmlessParams).sql;
      const before = await h.snapshot();

      const failures: string[] = [];
      for (let start = 0; start < hostile.length; start += h.poolMax) {
        const batch = hostile.slice(start, start + h.poolMax);
        await Promise.all(
          batch.map(async (value) => {
            const label = JSON.stringify(
              value.length > 60 ? `${value.slice(0, 60)}…(${value.length})` : value,
            );
            const params = h.validated(NAME_SCHEMA, { name: value });
            // Literal dialects render values into the text by design; the rows prove them inert.
            if (dialect.placeholders !== 'literal') {
              const compiled = compileTemplate(template, dialect, params).sql;
              if (compiled !== harmlessSql) failures.push(`${label}: compiled SQL differs: ${compiled}`);
            }
            const started = performance.now();
            try {
              const result = await h.query(sql, params, { timeoutMs: HOSTILE_TIMEOUT_MS });
              const elapsed = performance.now() - started;
              const ids = idsOf(result);
              if (JSON.stringify(ids) !== JSON.stringify(harmless))
                failures.push(`${label}: returned ids ${ids}`);
              if (elapsed >= PER_QUERY_LIMIT_MS) failures.push(`${label}: took ${Math.round(elapsed)} ms`);
            } catch (error) {
              failures.push(`${label}: failed with ${describeOutcome(error)}`);
            }
          }),
        );
      }
      expect(failures, `hostile strings that were not inert (${failures.length})`).toEqual([]);
      expect(await h.snapshot(), 'the fixture table must be unchanged').toEqual(before);
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'nul',
    'refuses a string containing NUL with PARAM_INVALID, before any driver sees it',
    async () => {
      const validation = validateParams(checkParamSchema(NAME_SCHEMA), { name: "alpha\u0000' OR '1'='1" });
      expect(validation.ok, 'validateParams must refuse a NUL byte').toBe(false);
      if (!validation.ok) expect(validation.issues.map((issue) => issue.param)).toEqual(['name']);

      // A caller that skips validation still gets PARAM_INVALID (compileTemplate refuses NUL): never a driver error.
      await expectConnectorError(
        h.query(h.sql.byName(h.table), { name: typed('string', "alpha\u0000' OR '1'='1") }),
        'PARAM_INVALID',
        'an unvalidated string containing NUL',
      );
      expect(await h.count(), 'the connector still works').toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'readOnly',
    'refuses writes, DDL and stacked statements with QUERY_FAILED and changes nothing',
    async () => {
      const before = await h.snapshot();
      expect(before.length, 'fixture rows present').toBeGreaterThan(0);
      for (const statement of h.sql.writes(h.table)) {
        await expectConnectorError(h.query(statement), 'QUERY_FAILED', statement);
      }
      expect(await h.snapshot(), 'the fixture table must be unchanged').toEqual(before);
    },
    TEST_TIMEOUT_MS,
  );
}
