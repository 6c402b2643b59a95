// Checks the runtime limits and result shape: a query past its timeout is cancelled (and gone from
// the server), maxRows truncation is exact, fixture columns come back with the right logical
// types and JSON-safe values, and more concurrent queries than the pool max all complete.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { ColumnType } from '../connector-plugin.js';
import { RESULT_ROW_BYTES } from '../result-size.js';
import { CONFORMANCE_COLUMNS, CONFORMANCE_ROWS } from './conformance-fixture.js';
import { type ConformanceHarness, expectConnectorError, idsOf, typed } from './conformance-harness.js';
import { expectJsonValue } from './expected-json.js';

const TEST_TIMEOUT_MS = 30_000;
/** The brief's bound: a timed-out statement is gone from the server within 1 s of the timeout. */
const GONE_WITHIN_MS = 1_000;
/** How late the QUERY_TIMEOUT rejection may arrive after the timeout, and how soon the next query must finish. */
const PROMPT_MS = 1_000;
const POLL_MS = 50;

/** Registers the limit and result-shape checks (6–9 of the kit). */
export function registerLimitsConformance(h: ConformanceHarness): void {
  h.check(
    'timeout',
    'times out a slow query with QUERY_TIMEOUT, cancels it on the server, and recovers',
    async () => {
      const timeoutMs = h.options.slowTimeoutMs ?? 1_000;
      const marker = `quarry_conf_slow_${randomUUID().replaceAll('-', '')}`;
      const sql = h.sql.slow(marker);
      expect(sql, 'sql.slow(marker) must contain the marker').toContain(marker);

      const started = performance.now();
      const outcome = expectConnectorError(h.query(sql, {}, { timeoutMs }), 'QUERY_TIMEOUT', 'slow query');
      // Keep a rejection observed while we poll, so it is never reported as unhandled.
      outcome.catch(() => {});
      const running = h.options.runningQueries;
      if (running !== undefined) {
        let seen = 0;
        while (seen === 0 && performance.now() - started < timeoutMs) {
          seen = await running(marker);
          if (seen === 0) await sleep(POLL_MS);
        }
        expect(seen, 'runningQueries(marker) must see the slow query while it runs').toBeGreaterThan(0);
      }
      await outcome;
      const settled = performance.now() - started;
      expect(settled, 'QUERY_TIMEOUT must not come before the timeout').toBeGreaterThanOrEqual(
        timeoutMs - 20,
      );
      expect(settled, 'QUERY_TIMEOUT must come promptly after the timeout').toBeLessThan(
        timeoutMs + PROMPT_MS,
      );

      if (running !== undefined) {
        // Counted from the caller's QUERY_TIMEOUT (not from the timer, which a loaded machine
        // fires late: the promptness of the error itself is checked above).
        const deadline = started + settled + GONE_WITHIN_MS;
        let left = await running(marker);
        while (left > 0 && performance.now() < deadline) {
          await sleep(POLL_MS);
          left = await running(marker);
        }
        expect(
          left,
          `the slow query must be gone from the server within ${GONE_WITHIN_MS} ms of the timeout`,
        ).toBe(0);
      }
      const next = performance.now();
      expect(await h.count()).toBe(CONFORMANCE_ROWS.length);
      expect(performance.now() - next, 'the next query must succeed promptly').toBeLessThan(PROMPT_MS);
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'maxRows',
    'truncates at maxRows exactly',
    async () => {
      const sql = h.sql.all(h.table);
      const n = CONFORMANCE_ROWS.length;
      const allIds = CONFORMANCE_ROWS.map((row) => row.id);
      for (const [maxRows, truncated, count] of [
        [n - 1, true, n - 1],
        [n, false, n],
        [n + 1, false, n],
        [10_000, false, n],
        [1, true, 1],
      ] as const) {
        const result = await h.query(sql, {}, { maxRows });
        const where = `maxRows ${maxRows} of ${n} rows`;
        expect(result.truncated, `${where}: truncated`).toBe(truncated);
        expect(result.rows, `${where}: rows`).toHaveLength(count);
        expect(result.rowCount, `${where}: rowCount`).toBe(count);
        expect(idsOf(result), `${where}: the first rows in order`).toEqual(allIds.slice(0, count));
      }
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'maxResultBytes',
    'fails a result past maxResultBytes with RESULT_TOO_LARGE, and answers the next query',
    async () => {
      const sql = h.sql.all(h.table);
      const n = CONFORMANCE_ROWS.length;
      const json = JSON.stringify((await h.query(sql)).rows).length;
      let failure: unknown;
      try {
        await h.query(sql, {}, { maxResultBytes: Math.max(1, Math.floor(json / 2)) });
      } catch (error) {
        failure = error;
      }
      expect((failure as { code?: string } | undefined)?.code, 'a bound of half the rows').toBe(
        'RESULT_TOO_LARGE',
      );
      // The runtime's yardstick: about the rows' JSON plus RESULT_ROW_BYTES a row.
      const fits = await h.query(sql, {}, { maxResultBytes: 2 * json + RESULT_ROW_BYTES * n });
      expect(fits.rows, 'a bound with room for every row').toHaveLength(n);
      expect(await h.count(), 'the session answers the next query').toBe(n);
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'columnTypes',
    'reports fixture column types and JSON-safe values (int64 as strings, exact decimals, dates, UTC timestamps)',
    async () => {
      const result = await h.query(h.sql.all(h.table));
      const expectedTypes = CONFORMANCE_COLUMNS.map(
        (column): ColumnType => h.options.columnTypes?.[column.name] ?? column.type,
      );
      expect(
        result.columns.map((column) => column.name),
        'column names in order',
      ).toEqual(CONFORMANCE_COLUMNS.map((column) => column.name));
      expect(
        result.columns.map((column) => column.type),
        'logical column types in order',
      ).toEqual(expectedTypes);
      expect(result.rows).toHaveLength(CONFORMANCE_ROWS.length);
      CONFORMANCE_ROWS.forEach((fixture, i) => {
        const row = result.rows[i];
        CONFORMANCE_COLUMNS.forEach((column, c) => {
          const type = expectedTypes[c] as ColumnType;
          expectJsonValue(
            row?.[column.name],
            fixture[column.name],
            type,
            `row ${fixture.id} column ${column.name}`,
          );
        });
      });
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'concurrency',
    'completes more concurrent queries than the pool max, each with its own correct result',
    async () => {
      const connector = h.connector();
      const sql = h.sql.echo('integer', false) as string;
      const ids = Array.from({ length: h.poolMax * 4 }, (_, i) => i + 1);
      let maxOpen = 0;
      const sampler = setInterval(() => {
        maxOpen = Math.max(maxOpen, connector.stats().total);
      }, 1);
      try {
        const results = await Promise.all(ids.map((id) => h.query(sql, { v: typed('integer', id) })));
        for (const [i, result] of results.entries())
          expect(result.rows, `query ${i}`).toEqual([{ v: ids[i] }]);
      } finally {
        clearInterval(sampler);
      }
      maxOpen = Math.max(maxOpen, connector.stats().total);
      expect(maxOpen, 'sessions open never exceed the pool max').toBeLessThanOrEqual(h.poolMax);
      expect(connector.stats().waiting, 'nobody left waiting').toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
}
