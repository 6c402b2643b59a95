// Test code for fake-bigquery-server.ts: query jobs executed by DuckDB. A job is prepared while
// its `jobs.insert` is answered (so a syntax error, a missing table or a bytes-billed overrun fails
// the insert's job at once, as BigQuery does) and then runs in the background on its own DuckDB
// connection, which `cancel` (jobs.cancel, or `jobTimeoutMs` passing) interrupts. Results are kept
// whole for paging. Billing follows BigQuery's on-demand minimum: 10 MB per table a query reads
// (a table counts when its name appears in the SQL); a query reading no table bills nothing.
import {
  type DuckDBConnection,
  type DuckDBInstance,
  type DuckDBPreparedStatement,
  type DuckDBType,
  type DuckDBValue,
  StatementType,
} from '@duckdb/node-api';
import { cellValue, FakeJobError, type RestField, restField } from './fake-bigquery-rows.js';
import { type FakeParam, readParameters, translateSql } from './fake-bigquery-sql.js';

/** Bytes billed per table read (BigQuery's on-demand minimum per table). */
export const BYTES_PER_TABLE = 10 * 1024 * 1024;
const INTERRUPT_EVERY_MS = 20;

/** What `jobs.insert` asks for. */
export interface JobRequest {
  readonly id: string;
  readonly projectId: string;
  readonly location: string;
  readonly sql: string;
  readonly queryParameters: unknown;
  readonly defaultDataset: string | undefined;
  readonly maximumBytesBilled: bigint | undefined;
  readonly jobTimeoutMs: number | undefined;
}

/** One job and, once DONE, its outcome. */
export interface FakeJob {
  readonly request: JobRequest;
  readonly createdAt: number;
  state: 'RUNNING' | 'DONE';
  endedAt: number | undefined;
  statementType: string;
  bytesBilled: number;
  error: FakeJobError | undefined;
  fields: readonly RestField[];
  rows: readonly (readonly DuckDBValue[])[];
  /** Resolves when the job is DONE. */
  readonly done: Promise<void>;
  /** Stops a RUNNING job (jobs.cancel, or its time limit). */
  cancel(reason: 'stopped' | 'timeout'): void;
}

const STATEMENT_TYPES: Partial<Record<StatementType, string>> = {
  [StatementType.SELECT]: 'SELECT',
  [StatementType.INSERT]: 'INSERT',
  [StatementType.UPDATE]: 'UPDATE',
  [StatementType.DELETE]: 'DELETE',
  [StatementType.CREATE]: 'CREATE_TABLE',
  [StatementType.DROP]: 'DROP_TABLE',
  [StatementType.ALTER]: 'ALTER_TABLE',
};

/** A DuckDB error as the BigQuery error the same mistake would cause. */
function jobErrorOf(error: unknown): FakeJobError {
  if (error instanceof FakeJobError) return error;
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
  if (message.startsWith('Catalog Error')) return new FakeJobError('notFound', `Not found: ${message}`);
  return new FakeJobError('invalidQuery', message);
}

/** Prepared work of one job: one statement, or a script's statements run in order. */
interface Prepared {
  readonly statementType: string;
  run(connection: DuckDBConnection): Promise<{ names: string[]; types: DuckDBType[]; rows: DuckDBValue[][] }>;
}

function bind(statement: DuckDBPreparedStatement, params: ReadonlyMap<string, FakeParam>): void {
  for (let i = 1; i <= statement.parameterCount; i++) {
    const param = params.get(statement.parameterName(i)) as FakeParam;
    statement.bindValue(i, param.value, param.duckType);
  }
}

async function readAll(statement: DuckDBPreparedStatement) {
  const reader = await statement.runAndReadAll();
  return { names: reader.columnNames(), types: reader.columnTypes(), rows: reader.getRows() };
}

/** Runs jobs against one DuckDB instance. */
export class FakeJobRunner {
  readonly jobs = new Map<string, FakeJob>();

  /** @param minJobMs No job is DONE sooner than this after its insert (BigQuery's start-up latency). */
  constructor(
    private readonly instance: DuckDBInstance,
    private readonly minJobMs = 0,
  ) {}

  /** User tables (`dataset.table` and bare names) a SQL text mentions. */
  private async tablesRead(connection: DuckDBConnection, sql: string): Promise<number> {
    const reader = await connection.runAndReadAll(
      'SELECT table_name FROM duckdb_tables() WHERE NOT internal',
    );
    const names = new Set(reader.getRows().map((row) => String(row[0]).toLowerCase()));
    const words = new Set(sql.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []);
    return [...names].filter((name) => words.has(name)).length;
  }

  private async prepare(connection: DuckDBConnection, request: JobRequest): Promise<Prepared> {
    if (request.defaultDataset !== undefined) {
      const found = await connection.runAndReadAll(
        `SELECT 1 FROM duckdb_schemas() WHERE schema_name = '${request.defaultDataset.replaceAll("'", "''")}'`,
      );
      if (found.currentRowCount === 0) {
        throw new FakeJobError(
          'notFound',
          `Not found: Dataset ${request.projectId}:${request.defaultDataset}`,
        );
      }
      await connection.run(`SET schema = '${request.defaultDataset.replaceAll("'", "''")}'`);
    }
    const params = readParameters(request.queryParameters);
    const extracted = await connection.extractStatements(translateSql(request.sql, params));
    if (extracted.count === 1) {
      const statement = await extracted.prepare(0);
      bind(statement, params);
      return {
        statementType: STATEMENT_TYPES[statement.statementType] ?? StatementType[statement.statementType],
        run: () => readAll(statement),
      };
    }
    // A script: BigQuery runs it (with write access), so the fake does too; the last result wins.
    return {
      statementType: 'SCRIPT',
      async run() {
        let last = { names: [] as string[], types: [] as DuckDBType[], rows: [] as DuckDBValue[][] };
        for (let i = 0; i < extracted.count; i++) {
          const statement = await extracted.prepare(i);
          bind(statement, params);
          last = await readAll(statement);
        }
        return last;
      },
    };
  }

  /** Classifies a query without running it (`dryRun`). */
  async dryRun(request: JobRequest): Promise<{ statementType: string; bytes: number }> {
    const connection = await this.instance.connect();
    try {
      const prepared = await this.prepare(connection, request);
      return {
        statementType: prepared.statementType,
        bytes: (await this.tablesRead(connection, request.sql)) * BYTES_PER_TABLE,
      };
    } catch (error) {
      throw jobErrorOf(error);
    } finally {
      connection.closeSync();
    }
  }

  /** Creates a job: prepared now, run in the background. */
  async start(request: JobRequest): Promise<FakeJob> {
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const connection = await this.instance.connect();
    let stopReason: 'stopped' | 'timeout' | undefined;
    let interrupting: NodeJS.Timeout | undefined;
    const job: FakeJob = {
      request,
      createdAt: Date.now(),
      state: 'RUNNING',
      endedAt: undefined,
      statementType: 'SELECT',
      bytesBilled: 0,
      error: undefined,
      fields: [],
      rows: [],
      done,
      cancel(reason) {
        if (job.state !== 'RUNNING' || stopReason !== undefined) return;
        stopReason = reason;
        // DuckDB forgets an interrupt that lands before its query has begun on a worker thread:
        // repeat it until the job is DONE.
        connection.interrupt();
        interrupting = setInterval(() => connection.interrupt(), INTERRUPT_EVERY_MS);
      },
    };
    this.jobs.set(request.id, job);
    const end = (error?: unknown): void => {
      if (job.state === 'DONE') return;
      if (error !== undefined) {
        const failure = jobErrorOf(error);
        job.error =
          /INTERRUPT/i.test(failure.message) && stopReason !== undefined
            ? stopped(stopReason, request)
            : failure;
      }
      clearInterval(interrupting);
      job.state = 'DONE';
      job.endedAt = Date.now();
      connection.closeSync();
      finish();
    };
    let prepared: Prepared;
    try {
      prepared = await this.prepare(connection, request);
      job.statementType = prepared.statementType;
      job.bytesBilled = (await this.tablesRead(connection, request.sql)) * BYTES_PER_TABLE;
      const limit = request.maximumBytesBilled;
      if (limit !== undefined && BigInt(job.bytesBilled) > limit) {
        throw new FakeJobError(
          'bytesBilledLimitExceeded',
          `Query exceeded limit for bytes billed: ${limit}. ${job.bytesBilled} or higher required.`,
        );
      }
    } catch (error) {
      end(error);
      return job;
    }
    const timer =
      request.jobTimeoutMs === undefined
        ? undefined
        : setTimeout(() => job.cancel('timeout'), request.jobTimeoutMs);
    timer?.unref();
    const started = Date.now();
    void prepared
      .run(connection)
      .then(async (result) => {
        const early = this.minJobMs - (Date.now() - started);
        if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
        if (stopReason !== undefined) throw stopped(stopReason, request);
        job.fields = result.names.map((name, i) => restField(name, result.types[i] as DuckDBType));
        // Encoding every row once finds what BigQuery refuses to return (a NULL array element).
        for (const row of result.rows) {
          for (const [c, field] of job.fields.entries())
            cellValue(field, row[c] ?? null, { int64Timestamp: true });
        }
        job.rows = result.rows;
        end();
      }, end)
      .catch(end)
      .finally(() => clearTimeout(timer));
    return job;
  }

  /** Jobs still RUNNING whose SQL contains `marker`. */
  running(marker: string): number {
    let count = 0;
    for (const job of this.jobs.values())
      if (job.state === 'RUNNING' && job.request.sql.includes(marker)) count++;
    return count;
  }

  /** Stops every running job and waits for them. */
  async stopAll(): Promise<void> {
    const jobs = [...this.jobs.values()];
    for (const job of jobs) job.cancel('stopped');
    await Promise.all(jobs.map((job) => job.done));
  }
}

function stopped(reason: 'stopped' | 'timeout', request: JobRequest): FakeJobError {
  return reason === 'timeout'
    ? new FakeJobError('timeout', `Job timed out after ${Math.ceil((request.jobTimeoutMs ?? 0) / 1000)}s`)
    : new FakeJobError('stopped', 'Job execution was cancelled: User requested cancellation');
}
