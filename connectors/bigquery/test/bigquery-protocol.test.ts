// What the connector sends and how it reads answers, through the official driver against the
// fake BigQuery (every request the fake receives is recorded): typed named params on the wire,
// jobTimeoutMs and maximumBytesBilled, polling and paging to the row cap, jobs.cancel on timeout
// and abort, locations, error mapping without BigQuery's text, the read-only rule, every value type.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeBigquery } from './fake-bigquery-server.js';
import {
  DATASET,
  failure,
  jobIdOf,
  jobInserts,
  OpenConnectors,
  PROJECT,
  params,
  query,
  resultPolls,
  SLOW_SQL,
  startTrustedFake,
  type TrustedFake,
  untilRunning,
  withDriverClient,
} from './protocol-fixture.js';

let main: TrustedFake;
let fake: FakeBigquery;
const connectors = new OpenConnectors();

function connect(target: TrustedFake = main, extra: Record<string, unknown> = {}) {
  return connectors.open(target, extra);
}

beforeAll(async () => {
  main = await startTrustedFake({ maxPageRows: 3 });
  fake = main.fake;
  await fake.exec(
    'CREATE TABLE orders AS SELECT range::BIGINT AS id, (range * 2)::BIGINT AS qty FROM range(50)',
    DATASET,
  );
  await fake.exec(
    "CREATE TABLE words (id BIGINT, word VARCHAR); INSERT INTO words VALUES (1, 'one'), (2, 'abc')",
    DATASET,
  );
});

afterEach(async () => {
  await connectors.closeAll();
});

afterAll(async () => {
  await fake.close();
});

describe('the wire', () => {
  it('opens a session with a dry run, then inserts jobs with a client job id and typed named params', async () => {
    const connector = await connect(main, { maximumBytesBilled: 123_456_789 });
    const opening = fake.requests.length;
    await query(connector, 'SELECT 1 AS warm');
    const [dryRun] = fake.requests.slice(opening).filter((r) => r.path.endsWith('/jobs'));
    expect((dryRun?.body as { configuration?: unknown } | undefined)?.configuration).toEqual({
      query: { useLegacySql: false, query: 'SELECT 1' },
      dryRun: true,
    });
    // The session is idle now, so the next query's whole time limit reaches the job.
    const from = fake.requests.length;
    const values = params(
      {
        big: { type: 'integer' },
        none: { type: 'integer' },
        ratio: { type: 'number' },
        ids: { type: 'array', items: { type: 'integer' } },
        empty: { type: 'array', items: { type: 'string' } },
        day: { type: 'date' },
        at: { type: 'timestamp' },
        flag: { type: 'boolean' },
      },
      {
        big: '9007199254740993',
        ratio: 3,
        ids: [1, 2],
        empty: [],
        day: '2024-02-29',
        at: '2024-06-30T23:59:59.999+02:00',
        flag: true,
      },
    );
    const sql =
      'SELECT @big AS big, @none AS none, @ratio AS ratio, @ids AS ids, @empty AS empty, @day AS day, @at AS at, @flag AS flag';
    const result = await query(connector, sql.replaceAll('@', ':'), values, { timeoutMs: 4_321 });
    expect(result.rows).toEqual([
      {
        big: '9007199254740993',
        none: null,
        ratio: 3,
        ids: [1, 2],
        empty: [],
        day: '2024-02-29',
        at: '2024-06-30T21:59:59.999Z',
        flag: true,
      },
    ]);
    expect(result.columns.map((c) => c.type)).toEqual([
      'integer',
      'integer',
      'number',
      'array',
      'array',
      'date',
      'timestamp',
      'boolean',
    ]);

    const inserts = jobInserts(fake, from);
    expect(inserts).toHaveLength(1);
    const body = inserts[0]?.body as {
      configuration: { jobTimeoutMs: string; query: Record<string, unknown> };
      jobReference: { jobId: string; projectId: string };
    };
    expect(body.jobReference.jobId).toMatch(/^quarry_[0-9a-f]{32}$/);
    expect(body.configuration.jobTimeoutMs).toBe('4321');
    expect(body.configuration.query).toEqual({
      query: sql,
      useLegacySql: false,
      defaultDataset: { projectId: PROJECT, datasetId: DATASET },
      maximumBytesBilled: '123456789',
      parameterMode: 'NAMED',
      queryParameters: [
        { name: 'big', parameterType: { type: 'INT64' }, parameterValue: { value: '9007199254740993' } },
        { name: 'none', parameterType: { type: 'INT64' }, parameterValue: { value: null } },
        // An integer-valued float stays FLOAT64: the driver alone would have sent INT64.
        { name: 'ratio', parameterType: { type: 'FLOAT64' }, parameterValue: { value: 3 } },
        {
          name: 'ids',
          parameterType: { type: 'ARRAY', arrayType: { type: 'INT64' } },
          parameterValue: { arrayValues: [{ value: '1' }, { value: '2' }] },
        },
        {
          name: 'empty',
          parameterType: { type: 'ARRAY', arrayType: { type: 'STRING' } },
          parameterValue: { arrayValues: [] },
        },
        { name: 'day', parameterType: { type: 'DATE' }, parameterValue: { value: '2024-02-29' } },
        {
          name: 'at',
          parameterType: { type: 'TIMESTAMP' },
          parameterValue: { value: '2024-06-30T21:59:59.999Z' },
        },
        { name: 'flag', parameterType: { type: 'BOOL' }, parameterValue: { value: true } },
      ],
    });
  });

  it('pages with maxResults and pageToken, and stops asking once the row cap is read', async () => {
    const connector = await connect();
    const from = fake.requests.length;
    const result = await query(connector, 'SELECT id, qty FROM orders ORDER BY id', {}, { maxRows: 5 });
    expect(result.truncated).toBe(true);
    expect(result.rows).toEqual([0, 1, 2, 3, 4].map((id) => ({ id, qty: id * 2 })));
    const polls = resultPolls(fake, jobIdOf(jobInserts(fake, from)[0]));
    // 6 rows (maxRows + 1) in pages of at most 3: two pages of the 17 the result has.
    expect(polls.map((p) => [p.query.maxResults, p.query.pageToken !== undefined])).toEqual([
      ['6', false],
      ['3', true],
    ]);
    expect(polls.every((p) => p.query['formatOptions.useInt64Timestamp'] === 'true')).toBe(true);
  });

  it('polls getQueryResults while the job reports jobComplete: false', async () => {
    const slowStart = await startTrustedFake({ maxWaitMs: 20, minJobMs: 300 });
    try {
      const connector = await connect(slowStart);
      const result = await query(connector, 'SELECT 42 AS answer');
      expect(result.rows).toEqual([{ answer: 42 }]);
      const jobId = jobIdOf(jobInserts(slowStart.fake)[0]);
      expect(resultPolls(slowStart.fake, jobId).length).toBeGreaterThan(1);
    } finally {
      await connectors.closeAll();
      await slowStart.fake.close();
    }
  });

  it('keeps to the location BigQuery chose when the connection names none', async () => {
    const trusted = await startTrustedFake({ defaultLocation: 'europe-west1' });
    const regional = trusted.fake;
    try {
      const connector = await connect(trusted);
      const controller = new AbortController();
      expect((await query(connector, 'SELECT 7 AS seven')).rows).toEqual([{ seven: 7 }]);
      const running = query(connector, SLOW_SQL, {}, { signal: controller.signal });
      await untilRunning(regional, 'GENERATE_ARRAY');
      controller.abort();
      expect((await failure(running)).code).toBe('QUERY_ABORTED');
      // The caller is answered at once; the cancel request may still be on its way: once the
      // job has stopped, it has arrived.
      const slowJob = regional.job(jobIdOf(jobInserts(regional)[1]));
      await slowJob?.done;
      expect(slowJob?.error?.reason).toBe('stopped');
      const followUps = regional.requests.filter(
        (r) => r.path.includes('/queries/') || r.path.endsWith('/cancel'),
      );
      expect(followUps.length).toBeGreaterThan(1);
      expect(followUps.every((r) => r.query.location === 'europe-west1')).toBe(true);
    } finally {
      await connectors.closeAll();
      await regional.close();
    }
  });
});

describe('stopping jobs', () => {
  it('cancels the job with jobs.cancel when the time limit passes', async () => {
    const connector = await connect();
    const from = fake.requests.length;
    const error = await failure(query(connector, SLOW_SQL, {}, { timeoutMs: 400 }));
    expect(error.code).toBe('QUERY_TIMEOUT');
    const jobId = jobIdOf(jobInserts(fake, from)[0]);
    // The caller is answered at the time limit (+ at most 0.5 s of settling); the cancel request
    // may still be on its way then.
    const cancelled = () =>
      fake.requests.some((r) => r.method === 'POST' && r.path.endsWith(`/jobs/${jobId}/cancel`));
    for (let waited = 0; !cancelled() && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(cancelled()).toBe(true);
    await fake.job(jobId)?.done;
    expect(fake.job(jobId)?.error?.reason).toBe('stopped');
  });

  it('cancels the job when the caller aborts', async () => {
    const connector = await connect();
    const from = fake.requests.length;
    const controller = new AbortController();
    const running = query(connector, SLOW_SQL, {}, { signal: controller.signal, timeoutMs: 20_000 });
    await untilRunning(fake, 'GENERATE_ARRAY');
    controller.abort();
    expect((await failure(running)).code).toBe('QUERY_ABORTED');
    const jobId = jobIdOf(jobInserts(fake, from)[0]);
    await fake.job(jobId)?.done;
    expect(fake.job(jobId)?.error?.reason).toBe('stopped');
  });

  it('relies on jobTimeoutMs as the backstop: the service stops a job past it with no cancel', async () => {
    const { jobId, metadata } = await withDriverClient(
      { projectId: PROJECT, apiEndpoint: fake.url, credentials: main.account.keyFile },
      async (driver) => {
        const [job] = await driver.createQueryJob({
          query: SLOW_SQL,
          useLegacySql: false,
          jobTimeoutMs: 300,
        });
        await fake.job(job.id as string)?.done;
        return { jobId: job.id, metadata: (await job.getMetadata())[0] };
      },
    );
    expect(metadata.status?.errorResult?.reason).toBe('timeout');
    expect(fake.requests.some((r) => r.path.endsWith(`/jobs/${jobId}/cancel`))).toBe(false);
  });
});

describe('errors', () => {
  it('maps BigQuery reasons to connector codes without copying BigQuery text', async () => {
    const connector = await connect();
    const badColumn = await failure(query(connector, 'SELECT secret_column_xyz FROM orders'));
    expect([badColumn.code, badColumn.driverCode]).toEqual(['QUERY_FAILED', 'invalidQuery']);
    expect(badColumn.message).not.toContain('secret_column_xyz');
    const missing = await failure(query(connector, 'SELECT * FROM no_such_table_xyz'));
    expect([missing.code, missing.driverCode]).toEqual(['QUERY_FAILED', 'notFound']);
    expect(missing.message).not.toContain('no_such_table_xyz');
    // Fails while running (the job starts fine): reported by getQueryResults, not the insert.
    const runtime = await failure(query(connector, 'SELECT CAST(word AS BIGINT) AS n FROM words'));
    expect([runtime.code, runtime.driverCode]).toEqual(['QUERY_FAILED', 'invalidQuery']);
    expect(runtime.message).not.toContain('abc');
    expect((await query(connector, 'SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it("fails with bytesBilledLimitExceeded when a query would bill past the connection's maximumBytesBilled", async () => {
    const connector = await connect(main, { maximumBytesBilled: '1000' });
    const error = await failure(query(connector, 'SELECT id FROM orders'));
    expect([error.code, error.driverCode]).toEqual(['QUERY_FAILED', 'bytesBilledLimitExceeded']);
    expect(error.message).toContain('maximumBytesBilled');
    // A query that reads no table bills nothing.
    expect((await query(connector, 'SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("applies the analytic's own maximumBytesBilled, never above the connection's", async () => {
    const guarded = await connect(main, { maximumBytesBilled: '1000' });
    const unguarded = await connect(main);
    const jobGuard = async (connector: Awaited<ReturnType<typeof connect>>, maxBytesBilled?: number) => {
      const from = fake.requests.length;
      const outcome = await query(
        connector,
        'SELECT id FROM orders',
        {},
        maxBytesBilled === undefined ? {} : { maxBytesBilled },
      ).then(
        () => 'ok',
        (error: { driverCode?: string }) => error.driverCode,
      );
      const [insert] = jobInserts(fake, from);
      const body = insert?.body as { configuration: { query: { maximumBytesBilled?: string } } };
      return { outcome, sent: body.configuration.query.maximumBytesBilled };
    };
    // The analytic's guard alone: sent, and it stops the query (one table bills 10 MB here).
    expect(await jobGuard(unguarded, 5_000)).toEqual({ outcome: 'bytesBilledLimitExceeded', sent: '5000' });
    expect(await jobGuard(unguarded, 50_000_000)).toEqual({ outcome: 'ok', sent: '50000000' });
    expect(await jobGuard(unguarded)).toEqual({ outcome: 'ok', sent: undefined });
    // Both: the smaller wins; an analytic cannot raise the connection's ceiling.
    expect(await jobGuard(guarded, 500)).toEqual({ outcome: 'bytesBilledLimitExceeded', sent: '500' });
    expect(await jobGuard(guarded, 50_000_000)).toEqual({
      outcome: 'bytesBilledLimitExceeded',
      sent: '1000',
    });
    // Bad input never reaches the wire.
    const from = fake.requests.length;
    const bad = await failure(query(unguarded, 'SELECT 1 AS one', {}, { maxBytesBilled: -1 }));
    expect(bad.code).toBe('PARAM_INVALID');
    expect(jobInserts(fake, from)).toEqual([]);
  });

  it('refuses writes and scripts before sending anything', async () => {
    const connector = await connect();
    await query(connector, 'SELECT 1 AS warm');
    const from = fake.requests.length;
    for (const sql of [
      'DELETE FROM orders WHERE true',
      'SELECT 1; DELETE FROM orders WHERE true',
      'DROP TABLE orders',
    ]) {
      const error = await failure(query(connector, sql));
      expect([error.code, error.driverCode]).toEqual(['QUERY_FAILED', 'READ_ONLY']);
    }
    expect(fake.requests.slice(from)).toEqual([]);
    expect((await query(connector, 'SELECT COUNT(*) AS n FROM orders')).rows).toEqual([{ n: 50 }]);
  });

  it('is what keeps tables unchanged: the fake, like BigQuery, runs a DELETE sent around the connector', async () => {
    await fake.exec('CREATE TABLE scratch AS SELECT range::BIGINT AS id FROM range(3)', DATASET);
    const metadata = await withDriverClient(
      { projectId: PROJECT, apiEndpoint: fake.url, credentials: main.account.keyFile },
      async (driver) => {
        const [job] = await driver.createQueryJob({
          query: 'DELETE FROM scratch WHERE id = 1',
          useLegacySql: false,
          defaultDataset: { projectId: PROJECT, datasetId: DATASET },
        });
        await fake.job(job.id as string)?.done;
        // jobs.get through the driver: the job's statement type, as BigQuery reports it.
        return (await job.getMetadata())[0];
      },
    );
    expect([metadata.status?.state, metadata.statistics?.query?.statementType]).toEqual(['DONE', 'DELETE']);
    const connector = await connect();
    expect((await query(connector, 'SELECT COUNT(*) AS n FROM scratch')).rows).toEqual([{ n: 2 }]);
    expect((await failure(query(connector, 'DELETE FROM scratch WHERE true'))).driverCode).toBe('READ_ONLY');
    expect((await query(connector, 'SELECT COUNT(*) AS n FROM scratch')).rows).toEqual([{ n: 2 }]);
  });
});

describe('values', () => {
  it('reads every BigQuery type exactly', async () => {
    await fake.exec(
      `CREATE TABLE every_type AS SELECT
        9223372036854775807::BIGINT AS i, 'NaN'::DOUBLE AS f, 0.1::DOUBLE AS g,
        12345678901234567890.123456789::DECIMAL(38,9) AS n, 1.0000000001::DECIMAL(38,10) AS bn,
        true AS b, 'Zoë 🚀' AS s, '\\x00\\xFF'::BLOB AS by, DATE '1969-07-20' AS d, TIME '23:59:59.123456' AS t,
        TIMESTAMP '2024-01-31 12:34:56.123456' AS dt, TIMESTAMPTZ '1969-07-20 20:17:40.5+00' AS ts,
        '{"k": [1, "x", null]}'::JSON AS j, [1, 9007199254740993]::BIGINT[] AS arr,
        {'a': 9007199254740993::BIGINT, 'b': ['x', 'y'], 'c': TIMESTAMPTZ '2000-01-01 00:00:00+00'} AS st,
        [{'k': 1.5::DECIMAL(10,2)}] AS recs, NULL::BIGINT[] AS nothing`,
      DATASET,
    );
    const connector = await connect();
    const result = await query(connector, 'SELECT * FROM every_type');
    expect(Object.fromEntries(result.columns.map((c) => [c.name, `${c.type} ${c.nativeType}`]))).toEqual({
      i: 'integer INTEGER',
      f: 'number FLOAT',
      g: 'number FLOAT',
      n: 'decimal NUMERIC',
      bn: 'decimal BIGNUMERIC',
      b: 'boolean BOOLEAN',
      s: 'string STRING',
      by: 'bytes BYTES',
      d: 'date DATE',
      t: 'time TIME',
      dt: 'timestamp DATETIME',
      ts: 'timestamp TIMESTAMP',
      j: 'json JSON',
      arr: 'array ARRAY<INTEGER>',
      st: 'json RECORD',
      recs: 'array ARRAY<RECORD>',
      nothing: 'array ARRAY<INTEGER>',
    });
    expect(result.rows).toEqual([
      {
        i: '9223372036854775807',
        f: null,
        g: 0.1,
        n: '12345678901234567890.123456789',
        // A decimal that a double holds exactly is a JSON number (the SDK's rule), else exact text.
        bn: 1.0000000001,
        b: true,
        s: 'Zoë 🚀',
        by: 'AP8=',
        d: '1969-07-20',
        t: '23:59:59.123456',
        dt: '2024-01-31T12:34:56.123456Z',
        ts: '1969-07-20T20:17:40.500Z',
        j: { k: [1, 'x', null] },
        arr: [1, '9007199254740993'],
        st: { a: '9007199254740993', b: ['x', 'y'], c: '2000-01-01T00:00:00.000Z' },
        recs: [{ k: 1.5 }],
        nothing: [],
      },
    ]);
  });
});
