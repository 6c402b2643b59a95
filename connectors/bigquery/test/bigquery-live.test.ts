// Opt-in: the connector against the real Google BigQuery. Collected only when a
// QUARRY_LIVE_BIGQUERY_* variable is set (vitest.config.ts); fails naming what is missing unless
// these are all set:
//   QUARRY_LIVE_BIGQUERY_PROJECT            project the jobs run in
//   QUARRY_LIVE_BIGQUERY_CREDENTIALS        path to the connector's service-account key file
//                                           (read-only: roles/bigquery.dataViewer + jobUser)
//   QUARRY_LIVE_BIGQUERY_DATASET            an existing dataset the fixture table is created in
//   QUARRY_LIVE_BIGQUERY_LOCATION           optional: the dataset's location (e.g. US, EU)
//   QUARRY_LIVE_BIGQUERY_ADMIN_CREDENTIALS  optional: a key that may create tables and list jobs
//                                           (dataEditor + bigquery.user); default: the one above
// A smaller suite than the conformance kit: each query is a BigQuery job of about a second, so
// the kit's hundreds of queries and its one-second bounds hold against the fake, not here.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BigQuery } from '@google-cloud/bigquery';
import {
  type Connector,
  checkParamSchema,
  createConnector,
  isConnectorError,
  type ParamValues,
  parseTemplate,
  validateParams,
} from '@quarry/sdk-connector';
import { CONFORMANCE_ROWS, type ConformanceRow } from '@quarry/sdk-connector/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigqueryPlugin } from '../src/bigquery-plugin.js';

const LIVE_TIMEOUT_MS = 120_000;
const env = {
  project: process.env.QUARRY_LIVE_BIGQUERY_PROJECT,
  credentials: process.env.QUARRY_LIVE_BIGQUERY_CREDENTIALS,
  dataset: process.env.QUARRY_LIVE_BIGQUERY_DATASET,
  location: process.env.QUARRY_LIVE_BIGQUERY_LOCATION,
  adminCredentials: process.env.QUARRY_LIVE_BIGQUERY_ADMIN_CREDENTIALS,
};
const missing = [
  ['QUARRY_LIVE_BIGQUERY_PROJECT', env.project],
  ['QUARRY_LIVE_BIGQUERY_CREDENTIALS', env.credentials],
  ['QUARRY_LIVE_BIGQUERY_DATASET', env.dataset],
]
  .filter(([, value]) => value === undefined || value === '')
  .map(([name]) => name);

function literal(text: string | null): string {
  return text === null ? 'NULL' : `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The kit's fixture rows as GoogleSQL typed literals (NUMERIC and TIMESTAMP exact). */
function fixtureValues(row: ConformanceRow): string {
  return `(${[
    String(row.id),
    literal(row.name),
    row.amount === null ? 'NULL' : `NUMERIC '${row.amount}'`,
    row.big === null
      ? 'NULL'
      : row.big === -9223372036854775808n
        ? '-9223372036854775807 - 1'
        : row.big.toString(),
    row.ratio === null ? 'NULL' : String(row.ratio),
    row.flag === null ? 'NULL' : String(row.flag).toUpperCase(),
    row.day === null ? 'NULL' : `DATE '${row.day}'`,
    row.ts === null ? 'NULL' : `TIMESTAMP '${row.ts.replace('T', ' ').replace('Z', '+00')}'`,
    literal(row.note),
  ].join(', ')})`;
}

/** A decimal as canonical text (`1234.50` and 1234.5 → `1234.5`), to compare exactly. */
function decimalText(value: unknown): string | null {
  if (value === null) return null;
  const text = String(value);
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

if (missing.length > 0) {
  describe('bigquery live', () => {
    it('runs against the real BigQuery when its environment is set', () => {
      throw new Error(`set ${missing.join(', ')} to run the live BigQuery tests`);
    });
  });
} else {
  describe('bigquery live', () => {
    const project = env.project as string;
    const dataset = env.dataset as string;
    const table = `quarry_live_${randomBytes(4).toString('hex')}`;
    const keyText = readFileSync(env.credentials as string, 'utf8');
    const adminKey = JSON.parse(
      readFileSync(env.adminCredentials ?? (env.credentials as string), 'utf8'),
    ) as {
      client_email: string;
      private_key: string;
    };
    const location = env.location === undefined ? {} : { location: env.location };
    const admin = new BigQuery({
      projectId: project,
      credentials: { client_email: adminKey.client_email, private_key: adminKey.private_key },
      ...location,
    });
    const config = { projectId: project, dataset, credentials: keyText, ...location };
    const opened: Connector[] = [];
    let connector: Connector;

    async function open(extra: Record<string, unknown> = {}): Promise<Connector> {
      const created = await createConnector(bigqueryPlugin, { ...config, ...extra });
      opened.push(created);
      return created;
    }

    function run(target: Connector, sql: string, values: ParamValues = {}, limits = {}) {
      return target.query({
        template: parseTemplate(sql, bigqueryPlugin.dialect),
        params: values,
        ...limits,
      });
    }

    function params(schema: Record<string, unknown>, input: Record<string, unknown>): ParamValues {
      const checked = validateParams(checkParamSchema(schema), input);
      if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
      return checked.values;
    }

    async function failure(promise: Promise<unknown>) {
      try {
        await promise;
      } catch (error) {
        if (isConnectorError(error)) return error;
        throw error;
      }
      throw new Error('expected a ConnectorError');
    }

    beforeAll(async () => {
      await admin.query({
        query: `CREATE TABLE \`${dataset}.${table}\` (id INT64 NOT NULL, name STRING, amount NUMERIC, big INT64,
          ratio FLOAT64, flag BOOL, day DATE, ts TIMESTAMP, note STRING)`,
        ...location,
      });
      await admin.query({
        query: `INSERT INTO \`${dataset}.${table}\` (id, name, amount, big, ratio, flag, day, ts, note) VALUES
          ${CONFORMANCE_ROWS.map(fixtureValues).join(',\n')}`,
        ...location,
      });
      connector = await open();
    }, LIVE_TIMEOUT_MS);

    afterAll(async () => {
      await Promise.allSettled(opened.map((c) => c.close()));
      await admin.query({ query: `DROP TABLE IF EXISTS \`${dataset}.${table}\``, ...location });
    }, LIVE_TIMEOUT_MS);

    it(
      'binds every param type with its type, exactly',
      async () => {
        const values = params(
          {
            big: { type: 'integer' },
            none: { type: 'integer' },
            whole: { type: 'number' },
            day: { type: 'date' },
            at: { type: 'timestamp' },
            flag: { type: 'boolean' },
            text: { type: 'string' },
            ids: { type: 'array', items: { type: 'integer' } },
          },
          {
            big: '-9223372036854775808',
            whole: 3,
            day: '2024-02-29',
            at: '2024-06-30T23:59:59.999+02:00',
            flag: false,
            text: "'; DROP TABLE x; -- \u{1F680}",
            ids: [],
          },
        );
        const result = await run(
          connector,
          'SELECT :big AS big, :none AS none, :whole AS whole, :day AS day, :at AS at, :flag AS flag, :text AS text, :ids AS ids',
          values,
        );
        expect(result.rows).toEqual([
          {
            big: '-9223372036854775808',
            none: null,
            whole: 3,
            day: '2024-02-29',
            at: '2024-06-30T21:59:59.999Z',
            flag: false,
            text: "'; DROP TABLE x; -- \u{1F680}",
            ids: [],
          },
        ]);
        expect(result.columns.map((c) => c.type)).toEqual([
          'integer',
          'integer',
          'number',
          'date',
          'timestamp',
          'boolean',
          'string',
          'array',
        ]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      'filters with IN UNNEST and the typed-NULL idiom',
      async () => {
        const inList = `SELECT id FROM ${table} WHERE id IN UNNEST(:ids) ORDER BY id`;
        const ids = (input: unknown) =>
          params({ ids: { type: 'array', items: { type: 'integer' } } }, { ids: input });
        expect((await run(connector, inList, ids([7, 1, 999]))).rows).toEqual([{ id: 1 }, { id: 7 }]);
        expect((await run(connector, inList, ids([]))).rows).toEqual([]);
        const nullFilter = `SELECT id FROM ${table} WHERE (:x IS NULL OR big = :x) ORDER BY id`;
        const x = (input: Record<string, unknown>) => params({ x: { type: 'integer' } }, input);
        expect((await run(connector, nullFilter, x({}))).rowCount).toBe(CONFORMANCE_ROWS.length);
        expect((await run(connector, nullFilter, x({ x: '9007199254740993' }))).rows).toEqual([{ id: 5 }]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      'reads the fixture exactly, paging two rows at a time up to the row cap',
      async () => {
        const paged = await open({ pageSize: 2 });
        const all = `SELECT id, name, amount, big, ratio, flag, day, ts, note FROM ${table} ORDER BY id`;
        const result = await run(paged, all);
        expect(result.columns.map((c) => c.type)).toEqual([
          'integer',
          'string',
          'decimal',
          'integer',
          'number',
          'boolean',
          'date',
          'timestamp',
          'string',
        ]);
        expect(result.rows.map((row) => ({ ...row, amount: decimalText(row.amount) }))).toEqual(
          CONFORMANCE_ROWS.map((row) => ({
            ...row,
            amount: decimalText(row.amount),
            big:
              row.big === null
                ? null
                : Number.isSafeInteger(Number(row.big))
                  ? Number(row.big)
                  : row.big.toString(),
          })),
        );
        const capped = await run(paged, all, {}, { maxRows: 3 });
        expect([capped.rowCount, capped.truncated]).toEqual([3, true]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      'refuses writes before sending them, and fails queries over maximumBytesBilled',
      async () => {
        for (const sql of [`DELETE FROM ${table} WHERE true`, `SELECT 1; DROP TABLE ${table}`]) {
          expect((await failure(run(connector, sql))).driverCode).toBe('READ_ONLY');
        }
        const bad = await failure(run(connector, `SELECT no_such_column FROM ${table}`));
        expect([bad.code, bad.driverCode]).toEqual(['QUERY_FAILED', 'invalidQuery']);
        const guarded = await open({ maximumBytesBilled: 1 });
        // A fresh comment defeats the query cache, which would bill nothing.
        const overLimit = await failure(
          run(guarded, `SELECT id FROM ${table} /* ${randomBytes(4).toString('hex')} */`),
        );
        expect([overLimit.code, overLimit.driverCode]).toEqual(['QUERY_FAILED', 'bytesBilledLimitExceeded']);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      'times out a slow query and cancels its job',
      async () => {
        const marker = `quarry_live_slow_${randomBytes(6).toString('hex')}`;
        const slow =
          'SELECT COUNT(*) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS a ' +
          `CROSS JOIN UNNEST(GENERATE_ARRAY(1, 1000000)) AS b /* ${marker} */`;
        expect((await failure(run(connector, slow, {}, { timeoutMs: 5_000 }))).code).toBe('QUERY_TIMEOUT');
        const running = async () => {
          const [jobs] = await admin.getJobs({
            stateFilter: ['pending', 'running'],
            projection: 'full',
            maxResults: 100,
          });
          return jobs.filter((job) => JSON.stringify(job.metadata?.configuration ?? {}).includes(marker))
            .length;
        };
        const deadline = Date.now() + 30_000;
        let left = await running();
        while (left > 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          left = await running();
        }
        expect(left).toBe(0);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      'fails test() with CONNECT_FAILED on an unreachable endpoint',
      async () => {
        const unreachable = await open({ apiEndpoint: 'https://127.0.0.1:1', connectTimeoutMs: 3_000 });
        expect((await failure(unreachable.test())).code).toBe('CONNECT_FAILED');
      },
      LIVE_TIMEOUT_MS,
    );
  });
}
