// Asynchronous query jobs (migration 026, query/jobs.ts): their state in the shared store, so any
// instance answers a job's state, cancels it, and fails the jobs of an instance that died. Every
// transition is conditional on the job not being finished yet, so the first of "succeeded",
// "failed", "cancelled" wins and is never overwritten.
import type { SqlExecutor } from './sql-client.js';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface JobError {
  readonly code: string;
  readonly message: string;
  readonly details?: readonly unknown[];
}

export interface JobRecord {
  readonly id: string;
  readonly accountId: string;
  readonly embedTokenId: string | null;
  readonly source: string;
  readonly version: number;
  readonly requestId: string;
  readonly state: JobState;
  readonly instanceId: string;
  readonly timeoutMs: number;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly error: JobError | null;
  readonly rowCount: number | null;
  readonly truncated: boolean | null;
  readonly credits: number | null;
  readonly snapshotId: string | null;
}

export interface NewJob {
  readonly id: string;
  readonly accountId: string;
  readonly embedTokenId: string | null;
  readonly source: string;
  readonly version: number;
  readonly requestId: string;
  readonly instanceId: string;
  readonly timeoutMs: number;
}

/** Who may see a job: its account, and for an embed token that token alone. */
export interface JobHolder {
  readonly accountId: string;
  readonly embedTokenId: string | null;
}

export interface JobRepository {
  create(job: NewJob): Promise<JobRecord>;
  get(holder: JobHolder, id: string): Promise<JobRecord | undefined>;
  /** The holder's most recent jobs, newest first. */
  list(holder: JobHolder, limit: number, state?: JobState): Promise<readonly JobRecord[]>;
  /** queued → running; false when it was cancelled (or failed) meanwhile. */
  started(id: string): Promise<boolean>;
  /** running → succeeded with its result; false when it was cancelled or failed meanwhile. */
  succeeded(
    id: string,
    result: { rowCount: number; truncated: boolean; credits: number; snapshotId: string },
  ): Promise<boolean>;
  /** Any unfinished (or just succeeded but uncharged) job → failed; false when already finished. */
  failed(id: string, error: JobError, evenIfSucceeded?: boolean): Promise<boolean>;
  /** An unfinished job → cancelled; the job as it now is (undefined: not the holder's). */
  cancel(holder: JobHolder, id: string): Promise<{ job: JobRecord; cancelled: boolean } | undefined>;
  /**
   * Renews the heartbeat of `instanceId`'s unfinished jobs; returns the ids still unfinished
   * (a job missing from it was cancelled or failed elsewhere: its instance stops it).
   */
  heartbeat(instanceId: string): Promise<ReadonlySet<string>>;
  /** Fails every unfinished job whose heartbeat is older than `leaseMs`; returns them. */
  failLapsed(leaseMs: number, error: JobError): Promise<readonly JobRecord[]>;
}

interface JobRow {
  id: string;
  account_id: string;
  embed_token_id: string | null;
  source: string;
  version: number;
  request_id: string;
  state: JobState;
  instance_id: string;
  timeout_ms: number;
  created_at: Date | string;
  started_at: Date | string | null;
  finished_at: Date | string | null;
  error: JobError | string | null;
  row_count: number | string | null;
  truncated: boolean | null;
  credits: number | string | null;
  snapshot_id: string | null;
}

const date = (value: Date | string | null): Date | null =>
  value === null ? null : value instanceof Date ? value : new Date(value);

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    embedTokenId: row.embed_token_id,
    source: row.source,
    version: Number(row.version),
    requestId: row.request_id,
    state: row.state,
    instanceId: row.instance_id,
    timeoutMs: Number(row.timeout_ms),
    createdAt: date(row.created_at) as Date,
    startedAt: date(row.started_at),
    finishedAt: date(row.finished_at),
    error: typeof row.error === 'string' ? (JSON.parse(row.error) as JobError) : row.error,
    rowCount: row.row_count === null ? null : Number(row.row_count),
    truncated: row.truncated,
    credits: row.credits === null ? null : Number(row.credits),
    snapshotId: row.snapshot_id,
  };
}

const UNFINISHED = `state IN ('queued', 'running')`;
const HOLDER = `account_id = $1 AND embed_token_id IS NOT DISTINCT FROM $2`;

export function createJobRepository(sql: SqlExecutor): JobRepository {
  return {
    async create(job) {
      const [row] = await sql.query<JobRow>(
        `INSERT INTO query_jobs (id, account_id, embed_token_id, source, version, request_id, instance_id, timeout_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [
          job.id,
          job.accountId,
          job.embedTokenId,
          job.source,
          job.version,
          job.requestId,
          job.instanceId,
          job.timeoutMs,
        ],
      );
      return toRecord(row as JobRow);
    },
    async get(holder, id) {
      const [row] = await sql.query<JobRow>(`SELECT * FROM query_jobs WHERE ${HOLDER} AND id = $3`, [
        holder.accountId,
        holder.embedTokenId,
        id,
      ]);
      return row === undefined ? undefined : toRecord(row);
    },
    async list(holder, limit, state) {
      const rows = await sql.query<JobRow>(
        `SELECT * FROM query_jobs WHERE ${HOLDER} AND ($3::text IS NULL OR state = $3)
         ORDER BY created_at DESC, id DESC LIMIT $4`,
        [holder.accountId, holder.embedTokenId, state ?? null, limit],
      );
      return rows.map(toRecord);
    },
    async started(id) {
      const rows = await sql.query(
        `UPDATE query_jobs SET state = 'running', started_at = now(), heartbeat_at = now()
         WHERE id = $1 AND state = 'queued' RETURNING id`,
        [id],
      );
      return rows.length === 1;
    },
    async succeeded(id, result) {
      const rows = await sql.query(
        `UPDATE query_jobs SET state = 'succeeded', finished_at = now(), row_count = $2, truncated = $3,
           credits = $4, snapshot_id = $5
         WHERE id = $1 AND state = 'running' RETURNING id`,
        [id, result.rowCount, result.truncated, result.credits, result.snapshotId],
      );
      return rows.length === 1;
    },
    async failed(id, error, evenIfSucceeded = false) {
      const rows = await sql.query(
        `UPDATE query_jobs SET state = 'failed', finished_at = now(), error = $2::jsonb, credits = NULL
         WHERE id = $1 AND (${UNFINISHED} OR ($3 AND state = 'succeeded')) RETURNING id`,
        [id, JSON.stringify(error), evenIfSucceeded],
      );
      return rows.length === 1;
    },
    async cancel(holder, id) {
      const changed = await sql.query<JobRow>(
        `UPDATE query_jobs SET state = 'cancelled', finished_at = now()
         WHERE ${HOLDER} AND id = $3 AND ${UNFINISHED} RETURNING *`,
        [holder.accountId, holder.embedTokenId, id],
      );
      if (changed[0] !== undefined) return { job: toRecord(changed[0]), cancelled: true };
      const job = await this.get(holder, id);
      return job === undefined ? undefined : { job, cancelled: false };
    },
    async heartbeat(instanceId) {
      const rows = await sql.query<{ id: string }>(
        `UPDATE query_jobs SET heartbeat_at = now() WHERE instance_id = $1 AND ${UNFINISHED} RETURNING id`,
        [instanceId],
      );
      return new Set(rows.map((r) => r.id));
    },
    async failLapsed(leaseMs, error) {
      const rows = await sql.query<JobRow>(
        `UPDATE query_jobs SET state = 'failed', finished_at = now(), error = $2::jsonb
         WHERE ${UNFINISHED} AND heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
         RETURNING *`,
        [leaseMs, JSON.stringify(error)],
      );
      return rows.map(toRecord);
    },
  };
}
