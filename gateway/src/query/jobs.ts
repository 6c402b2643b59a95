// Asynchronous queries (docs/large-results.md, "Asynchronous queries"). A call admitted like any
// other (credential, rate limit, quota, max_credits, embed token rules, pinned versions) and sent
// with `Prefer: respond-async` (or `"async": true`) becomes a job: its charge is reserved as a
// query's is, a row in the store (migration 026) records it, and the instance that accepted it
// runs it in the background, its rows streaming to this instance's result store. The job is
// charged once, when it succeeds; a failed or cancelled job is not.
//
// State lives in the store, so any instance answers it, cancels it, or fails it: the running
// instance renews a heartbeat of its jobs every HEARTBEAT_MS, and stops at once a job it finds
// cancelled (a DELETE served by another instance); any instance marks a job whose heartbeat is
// older than the lease as failed (its instance died) and gives back its reservation. A job is
// never resumed elsewhere: its partial result was on the dead instance's disk. The result stays
// where it was written, so it is read from that instance (docs/deploy.md: affinity); another one
// answers the job's state with `result_status: "unavailable"`.
import type { ParamValues } from '@quarry/sdk-connector';
import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import { asApiError, type ErrorLogger, errorPayload } from '../errors/error-payload.js';
import type { Metering, PendingCharge } from '../money/metering.js';
import { cursorExpired, type ResultCursors } from '../results/result-cursor.js';
import { FORMAT_MEDIA_TYPES, requestedFormat, writeResult } from '../results/result-formats.js';
import type { ResultStore, Snapshot } from '../results/result-store.js';
import type { JobError, JobHolder, JobRecord, JobRepository, JobState } from '../store/job-repository.js';
import { newId } from '../store/new-id.js';
import { type AdmissionDeps, authorize, spendRateLimit } from './admission.js';
import type { FailedCalls } from './failed-calls.js';
import { MAX_PAGE_SIZE } from './large-results.js';
import type { QueryReply } from './query-reply.js';
import type { QueryService } from './query-service.js';

/** How often the running instance renews its jobs' heartbeat (and sees cancellations). */
const HEARTBEAT_MS = 400;
/** Rows in a job's first page when the reader names no `page_size`. */
const DEFAULT_PAGE_SIZE = 1000;
/** The most jobs one listing answers. */
const MAX_LIST = 100;
const JOB_ID = /^job_[0-9A-Za-z]{22}$/;
const STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

export interface JobsDeps extends Pick<AdmissionDeps, 'auth' | 'credentialFailures' | 'knownCredentials'> {
  readonly rateLimiter: AdmissionDeps['rateLimiter'];
  readonly repository: JobRepository;
  readonly queries: Pick<QueryService, 'stream'>;
  readonly metering: Metering;
  readonly store: ResultStore;
  readonly cursors: ResultCursors;
  /** The longest any job runs (QUARRY_MAX_ASYNC_TIMEOUT_MS). */
  readonly maxTimeoutMs: number;
  /** A job whose heartbeat is older than this is failed (QUARRY_JOB_LEASE_MS). */
  readonly leaseMs: number;
  /** Gives back the reservation of a job whose instance died (usage.release). */
  readonly releaseUsage: (requestId: string) => Promise<void>;
  /** The webhook outbox (job.succeeded, job.failed); absent: no events. */
  readonly emit?: (event: {
    accountId: string;
    type: string;
    data: Readonly<Record<string, unknown>>;
    dedupeKey?: string;
  }) => Promise<unknown>;
  readonly failedCalls?: FailedCalls;
  readonly logger: ErrorLogger & { warn(obj: object, msg: string): void };
}

/** A job request as the adapter hands it over. */
export interface JobCall {
  readonly requestId: string;
  readonly address: string;
  readonly authorization: string | undefined;
  readonly accept: string | undefined;
  readonly action:
    | {
        readonly kind: 'get';
        readonly id: string;
        readonly query: Readonly<Record<string, string | undefined>>;
      }
    | { readonly kind: 'list'; readonly query: Readonly<Record<string, string | undefined>> }
    | { readonly kind: 'cancel'; readonly id: string };
}

export interface Jobs {
  /** Admits the job (its charge reserved), records it and starts it; the 202's job. */
  submit(call: {
    principal: Principal;
    entry: CatalogEntry;
    params: ParamValues;
    requestId: string;
  }): Promise<Readonly<Record<string, unknown>>>;
  /** GET /v1/jobs/{id}, GET /v1/jobs, DELETE /v1/jobs/{id}. */
  handle(call: JobCall): Promise<QueryReply>;
  /** Stops this instance's jobs (failed: the instance stopped) and the timers. */
  close(): Promise<void>;
}

const holderOf = (principal: Principal): JobHolder => ({
  accountId: principal.accountId,
  embedTokenId: principal.embed?.tokenId ?? null,
});

/** The job as its API shows it. */
export function jobJson(job: JobRecord): Record<string, unknown> {
  return {
    id: job.id,
    state: job.state,
    source: job.source,
    version: job.version,
    request_id: job.requestId,
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    finished_at: job.finishedAt?.toISOString() ?? null,
    error: job.error === null ? null : { details: [], ...job.error },
    row_count: job.rowCount,
    truncated: job.truncated,
    credits: job.state === 'succeeded' ? job.credits : 0,
  };
}

function errorOf(error: ApiError): JobError {
  return { code: error.code, message: error.message, details: [...error.details] };
}

/** The job's timeout: its analytic's `async_timeout_ms` (else `timeout_ms`), within the gateway's bound. */
export function jobTimeoutMs(entry: CatalogEntry, maxTimeoutMs: number): number {
  const limits = entry.definition.limits;
  return Math.min(limits?.async_timeout_ms ?? limits?.timeout_ms ?? 30_000, maxTimeoutMs);
}

export function createJobs(deps: JobsDeps): Jobs {
  const { repository, store, cursors, metering } = deps;
  const instanceId = store.instance;
  // This instance's unfinished jobs.
  const local = new Map<string, { controller: AbortController; cancelled: boolean }>();
  let closed = false;

  const heartbeat = setInterval(() => {
    if (local.size === 0) return;
    repository.heartbeat(instanceId).then(
      (live) => {
        for (const [id, job] of local) {
          if (!live.has(id)) {
            job.cancelled = true;
            job.controller.abort(new ApiError('QUERY_TIMEOUT', 'The job was cancelled.'));
          }
        }
      },
      (error: unknown) => deps.logger.warn({ err: error }, 'renewing the jobs heartbeat failed'),
    );
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const LAPSED: JobError = {
    code: 'SOURCE_UNAVAILABLE',
    message:
      'The gateway instance running this job stopped before it finished; the job was not charged. Submit it again.',
    details: [],
  };
  const sweeper = setInterval(
    () => {
      repository.failLapsed(deps.leaseMs, LAPSED).then(
        async (lapsed) => {
          for (const job of lapsed) {
            await deps.releaseUsage(job.requestId);
            await emitFinished({ ...job, state: 'failed', error: LAPSED });
          }
        },
        (error: unknown) => deps.logger.warn({ err: error }, 'failing lapsed jobs failed'),
      );
    },
    Math.max(250, Math.floor(deps.leaseMs / 2)),
  );
  sweeper.unref();

  async function emitFinished(job: JobRecord): Promise<void> {
    if (deps.emit === undefined || (job.state !== 'succeeded' && job.state !== 'failed')) return;
    try {
      await deps.emit({
        accountId: job.accountId,
        type: job.state === 'succeeded' ? 'job.succeeded' : 'job.failed',
        // One event a job, whichever instance ends it.
        dedupeKey: `job:${job.id}`,
        data: {
          job_id: job.id,
          source: job.source,
          version: job.version,
          state: job.state,
          ...(job.state === 'succeeded'
            ? { row_count: job.rowCount, truncated: job.truncated, credits: job.credits }
            : { error: job.error }),
        },
      });
    } catch (error) {
      deps.logger.warn({ err: error, job_id: job.id }, 'emitting a job event failed');
    }
  }

  async function run(
    job: JobRecord,
    principal: Principal,
    entry: CatalogEntry,
    params: ParamValues,
    pending: PendingCharge,
    mine: { controller: AbortController; cancelled: boolean },
  ): Promise<void> {
    const started = performance.now();
    const spool = store.spool({ accountId: principal.accountId, source: entry.name, version: entry.version });
    let snapshot: Snapshot | undefined;
    try {
      if (!(await repository.started(job.id))) {
        await spool.discard();
        await pending.release();
        return;
      }
      try {
        const summary = await deps.queries.stream(
          entry,
          params,
          spool,
          mine.controller.signal,
          job.timeoutMs,
        );
        snapshot = await spool.finish(summary);
      } catch (error) {
        await spool.discard();
        throw error;
      }
      const result = {
        rowCount: snapshot.rowCount,
        truncated: snapshot.truncated,
        credits: pending.credits,
        snapshotId: snapshot.id,
      };
      if (!(await repository.succeeded(job.id, result))) {
        // Cancelled (or failed by a sweeper) meanwhile: not charged.
        await store.delete(snapshot.id);
        await pending.release();
        return;
      }
      try {
        await pending.commit(performance.now() - started);
      } catch (error) {
        const apiError = asApiError(error, deps.logger);
        await repository.failed(job.id, errorOf(apiError), true);
        await store.delete(snapshot.id);
        await emitFinished({ ...job, state: 'failed', error: errorOf(apiError) });
        return;
      }
      await emitFinished({ ...job, ...result, state: 'succeeded' });
    } catch (error) {
      await pending.release();
      if (mine.cancelled) return;
      const apiError = asApiError(error, deps.logger);
      await deps.failedCalls?.failed(principal, entry, job.requestId, error, performance.now() - started);
      if (await repository.failed(job.id, errorOf(apiError)))
        await emitFinished({ ...job, state: 'failed', error: errorOf(apiError) });
    }
  }

  function reply(status: number, requestId: string, body: unknown, headers: Record<string, string> = {}) {
    const text = JSON.stringify(body);
    return {
      status,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        'x-request-id': requestId,
        'cache-control': 'private, no-store',
        ...headers,
      },
      body: text,
    };
  }

  const notFound = (id: string) =>
    new ApiError('NOT_FOUND', `No job "${id.length > 64 ? `${id.slice(0, 64)}…` : id}" of this account.`);

  async function found(holder: JobHolder, id: string): Promise<JobRecord> {
    const job = JOB_ID.test(id) ? await repository.get(holder, id) : undefined;
    if (job === undefined) throw notFound(id);
    return job;
  }

  /** Who may follow a job's cursor: its holder, for this job. */
  const cursorHolder = (holder: JobHolder, id: string) =>
    `${holder.accountId} ${holder.embedTokenId ?? ''} ${id}`;

  function pageSizeOf(value: string | undefined): number {
    if (value === undefined) return DEFAULT_PAGE_SIZE;
    const size = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
    if (!(size >= 1 && size <= MAX_PAGE_SIZE)) {
      throw new ApiError('INVALID_REQUEST', `page_size must be a whole number from 1 to ${MAX_PAGE_SIZE}.`, {
        details: [{ param: 'page_size', message: `not a whole number from 1 to ${MAX_PAGE_SIZE}` }],
      });
    }
    return size;
  }

  /** The succeeded job's snapshot when this instance holds it. */
  function snapshotOf(job: JobRecord): Snapshot | undefined {
    if (job.state !== 'succeeded' || job.snapshotId === null || job.instanceId !== instanceId)
      return undefined;
    return store.get(job.snapshotId);
  }

  async function get(
    call: JobCall,
    holder: JobHolder,
    id: string,
    query: JobCall['action'] & { kind: 'get' },
  ) {
    const job = await found(holder, id);
    const format = requestedFormat(call.accept, query.query.format);
    if (format === undefined) {
      throw new ApiError(
        'INVALID_REQUEST',
        `format must be one of json, ${Object.keys(FORMAT_MEDIA_TYPES).join(', ')}.`,
        { details: [{ param: 'format', message: 'unknown format' }] },
      );
    }
    const snapshot = snapshotOf(job);
    const unavailable = () =>
      cursorExpired(
        "This job's result is not kept by this instance of the gateway (it is held by the instance that ran the job, or it expired).",
      );
    if (format !== 'json') {
      if (job.state !== 'succeeded') {
        throw new ApiError(
          'CONFLICT',
          `The job is ${job.state}; its result can be read once it has succeeded.`,
        );
      }
      const input = snapshot === undefined ? undefined : store.open(snapshot);
      if (snapshot === undefined || input === undefined) throw unavailable();
      return {
        status: 200,
        headers: {
          'content-type': FORMAT_MEDIA_TYPES[format],
          'x-request-id': call.requestId,
          'x-row-count': String(snapshot.rowCount),
          'x-truncated': String(snapshot.truncated),
          'cache-control': 'private, no-store',
        },
        body: undefined,
        stream: (out: import('node:stream').Writable) => writeResult(format, snapshot.columns, input, out),
      };
    }
    const body: Record<string, unknown> = jobJson(job);
    if (job.state === 'succeeded') {
      if (snapshot === undefined) {
        if (query.query.cursor !== undefined) throw unavailable();
        body.result_status = 'unavailable';
        body.result = null;
      } else {
        const holderText = cursorHolder(holder, job.id);
        let row = 0;
        let byte = 0;
        let pageSize: number;
        if (query.query.cursor !== undefined) {
          if (query.query.page_size !== undefined) {
            throw new ApiError(
              'INVALID_REQUEST',
              'A cursor keeps the page size it was made with; send one or the other.',
            );
          }
          const state = cursors.decode(query.query.cursor, holderText);
          if (state.snapshot !== snapshot.id) throw unavailable();
          ({ row, byte, pageSize } = state);
        } else {
          pageSize = pageSizeOf(query.query.page_size);
        }
        const read = await store.readRows(snapshot, byte, pageSize);
        if (read === undefined) throw unavailable();
        const after = row + read.lines.length;
        const next =
          after < snapshot.rowCount
            ? cursors.encode({
                snapshot: snapshot.id,
                accountId: holderText,
                row: after,
                byte: read.end,
                pageSize,
              })
            : null;
        body.result_status = 'ready';
        // The page's rows are spliced in as stored (JSON already).
        const text = JSON.stringify({
          ...body,
          result: {
            columns: snapshot.columns,
            meta: { row_count: read.lines.length, total_rows: snapshot.rowCount, offset: row, next },
          },
        });
        const withRows = `${text.slice(0, -2)},"results":[${read.lines.join(',')}]}}`;
        return {
          status: 200,
          headers: {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(withRows)),
            'x-request-id': call.requestId,
            'cache-control': 'private, no-store',
          },
          body: withRows,
        };
      }
    } else {
      body.result_status = 'pending';
      body.result = null;
    }
    return reply(
      200,
      call.requestId,
      body,
      job.state === 'queued' || job.state === 'running' ? { 'retry-after': '1' } : {},
    );
  }

  return {
    async submit({ principal, entry, params, requestId }) {
      if (closed)
        throw new ApiError('SOURCE_UNAVAILABLE', 'This instance is stopping; retry.', { retryAfter: 1 });
      const admitted = deps.failedCalls?.admit(principal, entry);
      if (admitted !== undefined) await admitted;
      const pending = await metering.begin(principal, entry, requestId);
      let job: JobRecord;
      try {
        job = await repository.create({
          id: newId('job'),
          ...holderOf(principal),
          source: entry.name,
          version: entry.version,
          requestId,
          instanceId,
          timeoutMs: jobTimeoutMs(entry, deps.maxTimeoutMs),
        });
      } catch (error) {
        await pending.release();
        throw error;
      }
      const mine = { controller: new AbortController(), cancelled: false };
      local.set(job.id, mine);
      void run(job, principal, entry, params, pending, mine)
        .catch((error: unknown) =>
          deps.logger.warn({ err: error, job_id: job.id }, 'a job could not be finished'),
        )
        .finally(() => local.delete(job.id));
      return jobJson(job);
    },

    async handle(call) {
      let principal: Principal | undefined;
      try {
        const authorized = authorize(deps, call.authorization, 'query', call.address);
        principal = authorized instanceof Promise ? await authorized : authorized;
        if (principal.origin === 'marketplace') {
          throw new ApiError('FORBIDDEN', 'A try-token previews an analytic; jobs need an API key.');
        }
        const spent = spendRateLimit(deps.rateLimiter, principal);
        const limits = spent instanceof Promise ? await spent : spent;
        const holder = holderOf(principal);
        const { action } = call;
        let answer: Omit<QueryReply, 'principal'>;
        if (action.kind === 'list') {
          const state = action.query.state;
          if (state !== undefined && !STATES.includes(state as JobState)) {
            throw new ApiError('INVALID_REQUEST', `state must be one of ${STATES.join(', ')}.`, {
              details: [{ param: 'state', message: 'unknown state' }],
            });
          }
          const limit = action.query.limit === undefined ? 20 : Number(action.query.limit);
          if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIST)) {
            throw new ApiError('INVALID_REQUEST', `limit must be a whole number from 1 to ${MAX_LIST}.`, {
              details: [{ param: 'limit', message: 'out of range' }],
            });
          }
          const jobs = await repository.list(holder, limit, state as JobState | undefined);
          answer = reply(200, call.requestId, { items: jobs.map(jobJson) });
        } else if (action.kind === 'cancel') {
          if (!JOB_ID.test(action.id)) throw notFound(action.id);
          const outcome = await repository.cancel(holder, action.id);
          if (outcome === undefined) throw notFound(action.id);
          const { job } = outcome;
          if (!outcome.cancelled && job.state !== 'cancelled') {
            throw new ApiError(
              'CONFLICT',
              `The job already ${job.state === 'succeeded' ? 'succeeded' : 'failed'}; there is nothing to cancel.`,
            );
          }
          const mine = local.get(job.id);
          if (mine !== undefined) {
            mine.cancelled = true;
            mine.controller.abort(new ApiError('QUERY_TIMEOUT', 'The job was cancelled.'));
          }
          answer = reply(200, call.requestId, jobJson(job));
        } else {
          answer = await get(call, holder, action.id, action);
        }
        if (limits !== undefined) for (const name in limits) answer.headers[name] = limits[name] as string;
        return { ...answer, principal };
      } catch (error) {
        const apiError = asApiError(error, deps.logger);
        const payload = errorPayload(apiError, call.requestId, apiError.headers);
        payload.headers['content-length'] = String(Buffer.byteLength(payload.body));
        return {
          status: payload.status,
          headers: payload.headers,
          body: payload.body,
          principal,
          errorCode: apiError.code,
          limitReason: apiError.reason,
        };
      }
    },

    async close() {
      closed = true;
      clearInterval(heartbeat);
      clearInterval(sweeper);
      const stopping: JobError = {
        code: 'SOURCE_UNAVAILABLE',
        message: 'The gateway instance running this job stopped; the job was not charged. Submit it again.',
        details: [],
      };
      for (const [id, job] of local) {
        job.cancelled = true;
        job.controller.abort(new ApiError('SOURCE_UNAVAILABLE', 'The instance is stopping.'));
        await repository.failed(id, stopping).catch(() => {});
      }
    },
  };
}
