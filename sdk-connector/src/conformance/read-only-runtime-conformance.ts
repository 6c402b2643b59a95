// Checks that the read-only rule holds at run time, before the warehouse sees a statement: for
// the plugin's SQL family, the statements that write data, write or read the database host's
// files, or reach other servers even from inside a SELECT (MySQL `INTO OUTFILE`, Postgres
// `COPY … TO PROGRAM`, DuckDB `COPY … TO`, …) are refused with QUERY_FAILED and driverCode
// READ_ONLY, which only the SDK's check gives, so nothing ran; the files they name stay absent
// (meaningful where the engine shares this machine's disk, as the kit's local engines do) and
// the fixture table is unchanged.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { SqlFamily } from '../read-only-sql.js';
import { type ConformanceHarness, expectConnectorError } from './conformance-harness.js';

const TEST_TIMEOUT_MS = 30_000;

/**
 * Statements each family must refuse at run time. `file` is a fresh path no statement may
 * create; `table` is the fixture table.
 */
export function hostileStatements(family: SqlFamily, table: string, file: string): readonly string[] {
  const shared = [
    `SELECT 1 AS one; DELETE FROM ${table}`,
    `SELECT * INTO ${table}_copy FROM ${table}`,
    `WITH gone AS (DELETE FROM ${table} RETURNING id) SELECT count(*) AS n FROM gone`,
    `SELECT id FROM ${table} FOR UPDATE`,
  ];
  switch (family) {
    case 'mysql':
      return [
        ...shared,
        `SELECT 1 INTO OUTFILE '${file}'`,
        `select id from ${table} into dumpfile '${file}'`,
        `SELECT id FROM ${table} /* harmless? */ INTO OUTFILE '${file}' FIELDS TERMINATED BY ','`,
        `SELECT 1--1 INTO OUTFILE '${file}'`,
        `SELECT 1 /*! INTO OUTFILE '${file}' */`,
        "SELECT LOAD_FILE('/etc/hostname') AS f",
        `LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE ${table}`,
        `LOAD XML INFILE '/etc/hostname' INTO TABLE ${table}`,
      ];
    case 'postgres':
      return [
        ...shared,
        `COPY (SELECT 1) TO '${file}'`,
        `COPY (SELECT 1) TO PROGRAM 'touch ${file}'`,
        `COPY ${table} FROM PROGRAM 'id'`,
        "SELECT pg_read_file('/etc/hostname') AS f",
        "SELECT pg_catalog.pg_read_binary_file('/etc/hostname') AS f",
        "SELECT * FROM pg_ls_dir('.') AS f",
        "SELECT lo_import('/etc/hostname') AS f",
        `SELECT lo_export(0, '${file}') AS f`,
        "SELECT * FROM dblink('host=127.0.0.1', 'SELECT 1') AS t(a int)",
        `SELECT query_to_xml('COPY (SELECT 1) TO PROGRAM ''touch ${file}''', true, true, '') AS f`,
      ];
    case 'duckdb':
      return [
        ...shared,
        `COPY ${table} TO '${file}'`,
        `COPY (SELECT 1) TO '${file}' (FORMAT csv)`,
        `ATTACH '${file}' AS other`,
        'INSTALL httpfs',
        'LOAD httpfs',
        `EXPORT DATABASE '${file}'`,
        'SET enable_external_access = true',
      ];
    case 'snowflake':
      return [
        ...shared,
        `COPY INTO @~/x FROM ${table}`,
        'PUT file:///etc/hostname @~',
        'GET @~ file:///tmp/',
      ];
    case 'bigquery':
      return [...shared, "EXPORT DATA OPTIONS (uri = 'gs://b/*.csv', format = 'CSV') AS SELECT 1"];
    default:
      return [
        ...shared,
        `INSERT INTO ${table} (id) VALUES (-1)`,
        `CREATE TABLE ${table}_x (a int)`,
        'CALL p()',
      ];
  }
}

/** Registers the run-time read-only check. */
export function registerReadOnlyRuntimeConformance(h: ConformanceHarness): void {
  h.check(
    'readOnlyRuntime',
    'refuses, before execution, the statements of its SQL family that write or reach the host',
    async () => {
      const family = h.options.plugin.dialect.family ?? 'ansi';
      const file = join(tmpdir(), `quarry-conformance-${randomBytes(6).toString('hex')}`);
      const before = await h.snapshot();
      try {
        for (const statement of hostileStatements(family, h.table, file)) {
          const error = await expectConnectorError(h.query(statement), 'QUERY_FAILED', statement);
          expect(error.driverCode, `${statement}: refused by the SDK's check, before execution`).toBe(
            'READ_ONLY',
          );
          expect(error.message, statement).toContain('not read-only');
          expect(existsSync(file), `${statement}: wrote ${file}`).toBe(false);
        }
        expect(await h.snapshot(), 'the fixture table must be unchanged').toEqual(before);
        expect(await h.count(), 'the connector still works').toBeGreaterThan(0);
      } finally {
        rmSync(file, { force: true, recursive: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
}
