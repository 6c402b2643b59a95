// One BigQuery client as a connector session: each query is a job. `jobs.insert` (through the
// driver's createQueryJob) starts it with typed named params, the time limit as `jobTimeoutMs`
// and the owner's `maximumBytesBilled`; `jobs.getQueryResults` long-polls until it is done and
// then pages with `maxResults`/`pageToken` until the row limit; `jobs.cancel` stops it on timeout
// or abort (as soon as the insert is answered, when it was still in flight). The job id is made
// here, so a retried insert that finds its job already created (409 duplicate) carries on.
import { randomUUID } from 'node:crypto';
import type { BigQuery, Query } from '@google-cloud/bigquery';
import {
  type CompiledQuery,
  ConnectorError,
  type ConnectorSession,
  type ExecuteOptions,
  type RawResult,
} from '@quarry/sdk-connector';
import { mapBigqueryError, reasonOf } from './bigquery-errors.js';
import { toQueryParameters } from './bigquery-params.js';
import { assertReadOnly } from './bigquery-read-only.js';
import { type BigqueryField, type BigqueryRow, columnsOf, rowValues } from './bigquery-values.js';

/**
 * The job's `maximumBytesBilled`: the smaller of the connection's guard and the analytic's (each
 * owner-set; the connection's is a ceiling no analytic can raise), or neither.
 */
export function bytesGuard(connection: string | undefined, analytic: number | undefined): string | undefined {
  if (analytic === undefined) return connection;
  const own = BigInt(analytic);
  return connection === undefined || own < BigInt(connection) ? own.toString() : connection;
}

/** What a session needs to know of the connection. */
export interface BigquerySessionSettings {
  readonly projectId: string;
  readonly location: string | undefined;
  readonly dataset: string | undefined;
  readonly maximumBytesBilled: string | undefined;
  /** Rows asked for per result page. */
  readonly pageSize: number;
}

/** The server-side wait of one results long-poll (BigQuery's own default). */
const POLL_WAIT_MS = 10_000;

/** The fields of a `jobs.getQueryResults` response the session reads. */
interface QueryResultsPage {
  readonly jobComplete?: boolean;
  readonly schema?: { readonly fields?: readonly BigqueryField[] };
  readonly rows?: readonly BigqueryRow[];
  readonly pageToken?: string;
}

/** The job a session is running. */
interface Run {
  readonly jobId: string;
  /** Where the job runs: BigQuery says so in the insert's answer when the config does not. */
  location: string | undefined;
  /** The insert has been answered: the job exists and its location is known. */
  inserted: boolean;
  cancelled: boolean;
}

function cancelledError(): ConnectorError {
  return new ConnectorError('QUERY_FAILED', 'the BigQuery job was cancelled', { driverCode: 'stopped' });
}

/**
 * A session over one driver client (with its own auth client, so a session whose token the server
 * stops accepting is replaced whole). Errors come out as ConnectorErrors (see bigquery-errors.ts).
 */
export function createBigquerySession(client: BigQuery, settings: BigquerySessionSettings): ConnectorSession {
  let closed = false;
  let current: Run | undefined;

  /** The `location` option/query parameter of a run's requests (needed outside the US and EU). */
  function locationOf(run: Run): { location?: string } {
    return run.location === undefined ? {} : { location: run.location };
  }

  async function cancelJob(run: Run): Promise<void> {
    try {
      await client.job(run.jobId, locationOf(run)).cancel();
    } catch {
      // Already done, or not created yet (the insert re-checks): nothing left to stop.
    }
  }

  async function insertJob(
    run: Run,
    query: CompiledQuery,
    timeoutMs: number,
    maximumBytesBilled: string | undefined,
  ): Promise<void> {
    const queryParameters = toQueryParameters(query.params);
    const options: Query = {
      query: query.sql,
      useLegacySql: false,
      jobId: run.jobId,
      // The server-side backstop: BigQuery stops the job itself even if our cancel never arrives.
      jobTimeoutMs: Math.max(1, Math.ceil(timeoutMs)),
      ...locationOf(run),
      ...(settings.dataset === undefined
        ? {}
        : { defaultDataset: { projectId: settings.projectId, datasetId: settings.dataset } }),
      ...(maximumBytesBilled === undefined ? {} : { maximumBytesBilled }),
      ...(queryParameters === undefined ? {} : { parameterMode: 'NAMED', queryParameters }),
    };
    try {
      const [job] = await client.createQueryJob(options);
      // Without a configured location BigQuery picks one from the datasets the query reads.
      run.location = job.location ?? run.location;
    } catch (error) {
      // A retried insert whose first attempt went through: the job exists, and it is ours.
      if (reasonOf(error) !== 'duplicate') throw error;
    }
    run.inserted = true;
    if (run.cancelled) {
      // Cancelled while the insert was in flight: the job exists only now.
      await cancelJob(run);
      throw cancelledError();
    }
  }

  function getQueryResults(jobId: string, qs: Record<string, unknown>): Promise<QueryResultsPage> {
    return new Promise((resolve, reject) => {
      // The driver's own authenticated request (retries, endpoint, project): the same call as
      // Job#getQueryResults, minus its row parsing, which would turn INT64 into lossy numbers.
      client.request({ uri: `/queries/${jobId}`, qs }, (error, body) => {
        if (error) reject(error);
        else resolve((body ?? {}) as QueryResultsPage);
      });
    });
  }

  async function readResults(run: Run, rowLimit: number, deadline: number): Promise<RawResult> {
    const rows: unknown[][] = [];
    let fields: readonly BigqueryField[] | undefined;
    let pageToken: string | undefined;
    for (;;) {
      const page = await getQueryResults(run.jobId, {
        ...locationOf(run),
        maxResults: Math.min(settings.pageSize, rowLimit - rows.length),
        timeoutMs: Math.max(1, Math.min(POLL_WAIT_MS, Math.ceil(deadline - performance.now()))),
        'formatOptions.useInt64Timestamp': true,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      if (run.cancelled) throw cancelledError();
      if (page.jobComplete !== true) continue;
      fields ??= page.schema?.fields ?? [];
      for (const row of page.rows ?? []) {
        if (rows.length >= rowLimit) break;
        rows.push(rowValues(fields, row));
      }
      // Stop paging at the row limit: the rest of the result stays in BigQuery.
      if (rows.length >= rowLimit || page.pageToken === undefined || page.pageToken === '') break;
      pageToken = page.pageToken;
    }
    return { columns: columnsOf(fields), rows };
  }

  async function cancel(): Promise<void> {
    const run = current;
    if (run === undefined || run.cancelled) return;
    run.cancelled = true;
    // Before the insert is answered the job may not exist yet; insertJob cancels it then.
    if (run.inserted) await cancelJob(run);
  }

  return {
    async execute(
      query: CompiledQuery,
      { timeoutMs, rowLimit, maxBytesBilled }: ExecuteOptions,
    ): Promise<RawResult> {
      if (closed) throw new ConnectorError('CLOSED', 'the BigQuery session is closed');
      assertReadOnly(query.sql);
      const deadline = performance.now() + timeoutMs;
      const run: Run = {
        jobId: `quarry_${randomUUID().replaceAll('-', '')}`,
        location: settings.location,
        inserted: false,
        cancelled: false,
      };
      current = run;
      try {
        await insertJob(run, query, timeoutMs, bytesGuard(settings.maximumBytesBilled, maxBytesBilled));
        return await readResults(run, rowLimit, deadline);
      } catch (error) {
        throw mapBigqueryError(error);
      } finally {
        if (current === run) current = undefined;
      }
    },

    // Synchronous: a session holds no server-side state, only a client and its access token; a
    // token the server stops accepting fails the next request with CONNECT_FAILED, which destroys
    // the session.
    validate(): boolean {
      return !closed;
    },

    cancel,

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // A job still running when its session goes away would keep billing until jobTimeoutMs.
      await cancel();
    },
  };
}
