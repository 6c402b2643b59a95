// TEST CODE: a protocol-level fake of Google BigQuery's REST API v2 and of Google's OAuth token
// endpoint, for the connector's tests. It listens on 127.0.0.1 or another loopback `address`
// (ephemeral port), speaks what @google-cloud/bigquery 8.3.0 and the connector's token client
// send, and runs the SQL in an in-memory DuckDB (datasets are DuckDB schemas).
//
// Faked:
// - `POST /token`: the JWT-bearer grant for registered service accounts; the assertion's RS256
//   signature, audience, lifetime and scope are checked (fake-google-oauth.ts). Every API request
//   needs a Bearer token issued here and not revoked, else 401 in Google's error shape.
// - `POST /bigquery/v2/projects/{p}/jobs` (jobs.insert): query jobs only, standard SQL only
//   (`useLegacySql: false`), NAMED typed parameters (INT64, FLOAT64, BOOL, STRING, DATE,
//   TIMESTAMP and ARRAYs of them), `defaultDataset`, `maximumBytesBilled` (10 MB billed per table
//   read, BigQuery's on-demand minimum), `jobTimeoutMs` (the job stops with reason `timeout`),
//   `dryRun` (statement type and bytes, no job), client-chosen job ids (a reused id is 409
//   `duplicate`). A job that cannot start (syntax, missing table or dataset, bytes limit) is
//   answered DONE with `status.errorResult`/`errors`, as BigQuery does.
// - `GET …/queries/{jobId}` (jobs.getQueryResults): waits up to `timeoutMs` (default 10 s, capped by
//   `maxWaitMs`) for the job, answers `jobComplete: false` while it runs (`minJobMs` makes every
//   job last at least that long, as BigQuery's start-up does); then pages the rows with `maxResults`,
//   `pageToken` (and `startIndex`), never more than `maxPageRows` rows a page, in the REST value
//   encoding (`rows: [{f: [{v}]}]`, every scalar as text; TIMESTAMP as int64 microseconds with
//   `formatOptions.useInt64Timestamp=true`, else float seconds). A failed job answers its error.
// - `GET …/jobs/{jobId}` (jobs.get) with `status` and `statistics.query.statementType`, and
//   `POST …/jobs/{jobId}/cancel` (jobs.cancel), which interrupts DuckDB.
// - Errors as `{"error": {"code", "message", "errors": [{"message", "domain", "reason"}], "status"}}`.
// - Locations: a job naming none runs in `defaultLocation`; outside US/EU a job is found only
//   with `?location=`, as in BigQuery.
// Left out: jobs.query, legacy SQL, positional/STRUCT/NUMERIC params, sessions, load/extract/copy
// jobs, datasets and tables APIs, streaming, data living in one location only.
// SQL translations (GoogleSQL → DuckDB) are listed in fake-bigquery-sql.ts.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  errorJson,
  HttpError,
  REASON_STATUS,
  readBody,
  sendGoogleError,
  sendJson,
  waitFor,
} from './fake-bigquery-http.js';
import { type FakeJob, FakeJobRunner, type JobRequest } from './fake-bigquery-jobs.js';
import { cellValue, FakeJobError } from './fake-bigquery-rows.js';
import { FakeGoogleOAuth } from './fake-google-oauth.js';

/** Options of {@link startFakeBigquery}. */
export interface FakeBigqueryOptions {
  /** The only project the fake knows. */
  readonly projectId: string;
  /** Most rows in one results page, whatever `maxResults` asks (default 3, so paging shows). */
  readonly maxPageRows?: number;
  /** Datasets (DuckDB schemas) to create. */
  readonly datasets?: readonly string[];
  /** Longest wait of one getQueryResults for a running job, whatever `timeoutMs` asks (default 10 s). */
  readonly maxWaitMs?: number;
  /** No job is DONE sooner than this after its insert (default 0), so polling can be seen. */
  readonly minJobMs?: number;
  /** Where a job that names no location runs (default `US`), as BigQuery picks one from its datasets. */
  readonly defaultLocation?: string;
  /** The loopback address to listen on (default `127.0.0.1`). */
  readonly address?: string;
  /**
   * The host name clients use in `url` and `tokenUri` (default: the address), e.g. `localhost`
   * resolved to `address` by a test's destination guard. Token assertions must name it.
   */
  readonly hostName?: string;
}

/** One request the fake received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** A running fake; see the header for what it answers. */
export interface FakeBigquery {
  /** The API origin, for the connector's `apiEndpoint`. */
  readonly url: string;
  /** The token endpoint, for a key file's `token_uri`. */
  readonly tokenUri: string;
  /** Every request received, in order (token requests included). */
  readonly requests: readonly RecordedRequest[];
  /** Token requests answered. */
  tokenRequests(): number;
  /** Trusts `publicKeyPem` for assertions issued by `email`. */
  addServiceAccount(email: string, publicKeyPem: string): void;
  /** Runs SQL directly in DuckDB with write access (fixtures), in `dataset` when given. */
  exec(sql: string, dataset?: string): Promise<void>;
  /** Jobs still running whose SQL contains `marker`. */
  runningQueries(marker: string): number;
  /** Revokes every access token issued so far: the next API request of each holder gets 401. */
  revokeTokens(): void;
  /** A job by id. */
  job(jobId: string): FakeJob | undefined;
  /** Stops running jobs, closes the server (and its sockets) and DuckDB. */
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 10_000;

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

/** Starts the fake on 127.0.0.1 (or `options.address`) and an ephemeral port. */
export async function startFakeBigquery(options: FakeBigqueryOptions): Promise<FakeBigquery> {
  const { projectId } = options;
  const maxPageRows = options.maxPageRows ?? 3;
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const admin = await instance.connect();
  await admin.run("SET GLOBAL TimeZone = 'UTC'");
  for (const dataset of options.datasets ?? []) await admin.run(`CREATE SCHEMA IF NOT EXISTS ${dataset}`);
  const runner = new FakeJobRunner(instance, options.minJobMs);
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_WAIT_MS;
  const defaultLocation = options.defaultLocation ?? 'US';
  const requests: RecordedRequest[] = [];
  let oauth: FakeGoogleOAuth | undefined;

  function jobResource(job: FakeJob): Record<string, unknown> {
    const { request } = job;
    const jobReference = { projectId: request.projectId, jobId: request.id, location: request.location };
    const status: Record<string, unknown> = { state: job.state };
    if (job.error !== undefined) {
      status.errorResult = errorJson(job.error);
      status.errors = [errorJson(job.error)];
    }
    return {
      kind: 'bigquery#job',
      id: `${request.projectId}:${request.location}.${request.id}`,
      jobReference,
      configuration: { jobType: 'QUERY', query: { query: request.sql, useLegacySql: false } },
      status,
      statistics: {
        creationTime: String(job.createdAt),
        startTime: String(job.createdAt),
        ...(job.endedAt === undefined ? {} : { endTime: String(job.endedAt) }),
        totalBytesProcessed: String(job.bytesBilled),
        query: {
          statementType: job.statementType,
          totalBytesProcessed: String(job.bytesBilled),
          totalBytesBilled: String(job.bytesBilled),
          cacheHit: false,
        },
      },
    };
  }

  function jobRequestOf(body: unknown): JobRequest & { readonly dryRun: boolean } {
    const json = asRecord(body);
    const configuration = asRecord(json.configuration);
    const query = asRecord(configuration.query);
    const reference = asRecord(json.jobReference);
    if (typeof query.query !== 'string')
      throw new HttpError(400, 'invalid', 'Required parameter is missing: query');
    if (query.useLegacySql !== false) {
      throw new HttpError(400, 'invalidQuery', 'The fake runs standard SQL only: set useLegacySql to false');
    }
    if (query.queryParameters !== undefined && String(query.parameterMode).toUpperCase() !== 'NAMED') {
      throw new HttpError(400, 'invalid', 'The fake supports NAMED query parameters only');
    }
    const jobId = typeof reference.jobId === 'string' ? reference.jobId : `job_${randomUUID()}`;
    if (!/^[A-Za-z0-9_-]{1,1024}$/.test(jobId)) throw new HttpError(400, 'invalid', 'Invalid job ID');
    const maxBytes = query.maximumBytesBilled;
    const timeout = configuration.jobTimeoutMs;
    return {
      id: jobId,
      projectId,
      location: typeof reference.location === 'string' ? reference.location : defaultLocation,
      sql: query.query,
      queryParameters: query.queryParameters,
      defaultDataset:
        typeof asRecord(query.defaultDataset).datasetId === 'string'
          ? (asRecord(query.defaultDataset).datasetId as string)
          : undefined,
      maximumBytesBilled:
        typeof maxBytes === 'string' && /^\d+$/.test(maxBytes) ? BigInt(maxBytes) : undefined,
      jobTimeoutMs: typeof timeout === 'string' && /^\d+$/.test(timeout) ? Number(timeout) : undefined,
      dryRun: configuration.dryRun === true,
    };
  }

  async function insertJob(res: ServerResponse, body: unknown): Promise<void> {
    const request = jobRequestOf(body);
    if (request.dryRun) {
      const { statementType, bytes } = await runner.dryRun(request).catch((error: unknown) => {
        const failure =
          error instanceof FakeJobError ? error : new FakeJobError('invalidQuery', String(error));
        throw new HttpError(REASON_STATUS[failure.reason] ?? 400, failure.reason, failure.message);
      });
      sendJson(res, 200, {
        kind: 'bigquery#job',
        jobReference: { projectId, location: request.location },
        configuration: { dryRun: true, jobType: 'QUERY', query: { query: request.sql, useLegacySql: false } },
        status: { state: 'DONE' },
        statistics: {
          totalBytesProcessed: String(bytes),
          query: { statementType, totalBytesProcessed: String(bytes) },
        },
      });
      return;
    }
    if (runner.jobs.has(request.id))
      throw new HttpError(
        409,
        'duplicate',
        `Already Exists: Job ${projectId}:${request.location}.${request.id}`,
      );
    sendJson(res, 200, jobResource(await runner.start(request)));
  }

  function findJob(jobId: string, query: URLSearchParams): FakeJob {
    const job = runner.jobs.get(jobId);
    // As in BigQuery, a job outside the US and EU multi-regions is found only with its location.
    const location =
      query.get('location') ??
      (job !== undefined && /^(US|EU)$/.test(job.request.location) ? job.request.location : null);
    if (job === undefined || location !== job.request.location) {
      throw new HttpError(404, 'notFound', `Not found: Job ${projectId}:${location ?? 'US'}.${jobId}`);
    }
    return job;
  }

  async function getQueryResults(res: ServerResponse, job: FakeJob, query: URLSearchParams): Promise<void> {
    const jobReference = { projectId, jobId: job.request.id, location: job.request.location };
    if (job.state === 'RUNNING') {
      const waitMs = Math.min(Number(query.get('timeoutMs') ?? DEFAULT_WAIT_MS) || 0, maxWaitMs);
      await waitFor(job.done, waitMs);
    }
    if (job.state === 'RUNNING') {
      sendJson(res, 200, { kind: 'bigquery#getQueryResultsResponse', jobReference, jobComplete: false });
      return;
    }
    if (job.error !== undefined) {
      throw new HttpError(REASON_STATUS[job.error.reason] ?? 400, job.error.reason, job.error.message);
    }
    let offset = Number(query.get('startIndex') ?? 0);
    const token = query.get('pageToken');
    if (token !== null) {
      const decoded = asRecord(JSON.parse(Buffer.from(token, 'base64url').toString('utf8') || '{}'));
      if (decoded.job !== job.request.id || typeof decoded.offset !== 'number') {
        throw new HttpError(400, 'invalid', 'Invalid page token');
      }
      offset = decoded.offset;
    }
    const asked = query.has('maxResults') ? Number(query.get('maxResults')) : maxPageRows;
    const size = Math.max(0, Math.min(asked, maxPageRows));
    const page = job.rows.slice(offset, offset + size);
    const format = { int64Timestamp: query.get('formatOptions.useInt64Timestamp') === 'true' };
    const next = offset + page.length;
    sendJson(res, 200, {
      kind: 'bigquery#getQueryResultsResponse',
      schema: { fields: job.fields },
      jobReference,
      totalRows: String(job.rows.length),
      ...(next < job.rows.length
        ? {
            pageToken: Buffer.from(JSON.stringify({ job: job.request.id, offset: next })).toString(
              'base64url',
            ),
          }
        : {}),
      ...(page.length === 0
        ? {}
        : {
            rows: page.map((row) => ({
              f: job.fields.map((field, c) => ({ v: cellValue(field, row[c] ?? null, format) })),
            })),
          }),
      totalBytesProcessed: String(job.bytesBilled),
      jobComplete: true,
      cacheHit: false,
    });
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const auth = oauth as FakeGoogleOAuth;
    if (url.pathname === '/token' && req.method === 'POST') {
      const answer = auth.grant(new URLSearchParams(body));
      sendJson(res, 'status' in answer ? answer.status : 200, 'status' in answer ? answer.body : answer);
      return;
    }
    const match = /^\/bigquery\/v2\/projects\/([^/]+)\/(jobs|queries)(?:\/([^/]+))?(\/cancel)?$/.exec(
      url.pathname,
    );
    if (match === null) throw new HttpError(404, 'notFound', `Not found: ${req.method} ${url.pathname}`);
    if (auth.authenticate(req.headers.authorization) === undefined) {
      throw new HttpError(
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
      );
    }
    const [, project, collection, jobId, cancel] = match;
    if (decodeURIComponent(project as string) !== projectId) {
      throw new HttpError(404, 'notFound', `Not found: Project ${decodeURIComponent(project as string)}`);
    }
    const parsed = body === '' ? undefined : (JSON.parse(body) as unknown);
    if (collection === 'jobs' && jobId === undefined && req.method === 'POST') return insertJob(res, parsed);
    if (jobId === undefined) throw new HttpError(404, 'notFound', `Not found: ${req.method} ${url.pathname}`);
    const job = findJob(decodeURIComponent(jobId), url.searchParams);
    if (collection === 'queries' && cancel === undefined && req.method === 'GET') {
      return getQueryResults(res, job, url.searchParams);
    }
    if (collection === 'jobs' && cancel !== undefined && req.method === 'POST') {
      job.cancel('stopped');
      sendJson(res, 200, { kind: 'bigquery#jobCancelResponse', job: jobResource(job) });
      return;
    }
    if (collection === 'jobs' && cancel === undefined && req.method === 'GET') {
      sendJson(res, 200, jobResource(job));
      return;
    }
    throw new HttpError(404, 'notFound', `Not found: ${req.method} ${url.pathname}`);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void readBody(req)
      .then(async (body) => {
        let recorded: unknown = body;
        try {
          recorded = body === '' ? undefined : JSON.parse(body);
        } catch {
          // a form body (the token endpoint) stays text
        }
        requests.push({
          method: req.method ?? 'GET',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          body: recorded,
        });
        await route(req, res, url, body);
      })
      .catch((error: unknown) => {
        if (res.headersSent) return;
        if (error instanceof HttpError) sendGoogleError(res, error.status, error.reason, error.message);
        else if (error instanceof SyntaxError) sendGoogleError(res, 400, 'parseError', 'Parse Error');
        else sendGoogleError(res, 500, 'internalError', 'The fake failed');
      });
  });
  const address = options.address ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const url = `http://${options.hostName ?? address}:${(server.address() as AddressInfo).port}`;
  oauth = new FakeGoogleOAuth(`${url}/token`);
  const authority = oauth;

  return {
    url,
    tokenUri: `${url}/token`,
    requests,
    tokenRequests: () => authority.tokenRequests,
    addServiceAccount: (email, publicKeyPem) => authority.addServiceAccount(email, publicKeyPem),
    async exec(sql, dataset) {
      const connection = await instance.connect();
      try {
        if (dataset !== undefined) await connection.run(`SET schema = '${dataset}'`);
        await connection.run(sql);
      } finally {
        connection.closeSync();
      }
    },
    runningQueries: (marker) => runner.running(marker),
    revokeTokens: () => authority.revokeAll(),
    job: (jobId) => runner.jobs.get(jobId),
    async close() {
      await runner.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      admin.closeSync();
      instance.closeSync();
    },
  };
}
