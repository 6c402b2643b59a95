// A small real connector plugin that keeps its tables in memory, for testing the SDK runtime
// (and connectors' runtime-facing behaviour) without a warehouse. It is not a mock: sessions
// execute a tiny SQL subset against real rows, honour the row limit, sleep a configurable delay
// that cancel() interrupts, and can be told to fail creates, fail queries, or be killed the way a
// server kills idle connections. `control` lets a test steer it and see what happened.
//
// SQL it understands (after template compilation, placeholders are `$1`, `$2`, …; comments are
// ignored; keywords are case-insensitive):
//   SELECT * | <col>[, <col>…] FROM <table> [WHERE <cond>] [ORDER BY <col>]
//     <cond>: <col> = $n  |  <col> = ANY($n)  |  ($n IS NULL OR <col> = $n)
//   SELECT $1 AS a, $2 AS b          (echoes bound params as one row)
//   SELECT sleep(<seconds>)          (a slow query: sleeps, then one row; cancel() interrupts it)
// Anything else (INSERT, DELETE, …) fails like a read-only server would.
import { z } from 'zod';
import { secretField } from '../config-schema.js';
import { ConnectorError } from '../connector-error.js';
import type {
  BoundParam,
  ColumnInfo,
  ColumnType,
  CompiledQuery,
  ConnectorDriver,
  ConnectorPlugin,
  ConnectorSession,
  ExecuteOptions,
  RawResult,
  SqlDialect,
} from '../connector-plugin.js';
import type { PoolOptions } from '../connector-pool.js';

/** One in-memory table: column definitions and rows in column order. */
export interface MemoryTable {
  readonly columns: readonly ColumnInfo[];
  readonly rows: readonly (readonly unknown[])[];
}

/** What one session did, for assertions. */
export interface MemorySessionRecord {
  readonly id: number;
  closed: boolean;
  killed: boolean;
  executes: number;
  cancels: number;
  validates: number;
  /** The last `rowLimit` the runtime asked for. */
  lastRowLimit: number | undefined;
  /** The last `maxBytesBilled` the runtime passed (undefined when the request had none). */
  lastMaxBytesBilled: number | undefined;
  lastMaxResultBytes: number | undefined;
  /** The last SQL text executed. */
  lastSql: string | undefined;
}

/** Steers the fake and records what happened. */
export interface MemoryControl {
  /** Tables by name; tests may add or replace tables at any time. */
  readonly tables: Map<string, MemoryTable>;
  /** Every query sleeps this long before answering (cancel() interrupts it). */
  delayMs: number;
  /**
   * The server stopped answering, as behind a blackhole: new sessions never open, and cancel()
   * neither answers nor interrupts a running query (only close() ends it).
   */
  unresponsive: boolean;
  /** Calls to `createSession`, failed ones included. */
  readonly createAttempts: number;
  /** Every session ever opened, in order. */
  readonly sessions: readonly MemorySessionRecord[];
  /** Queries executing right now, across sessions. */
  readonly executing: number;
  /** Most queries seen executing at the same time. */
  readonly maxConcurrent: number;
  /** True once every driver created so far has been destroyed (and at least one was). */
  readonly destroyed: boolean;
  /** How many queries whose SQL contains `marker` are executing now (the server's view). */
  runningQueries(marker: string): number;
  /** Makes the next `count` session creates throw `error` (default: an ECONNREFUSED-like Error). */
  failCreates(count: number, error?: unknown): void;
  /** Makes the next `count` executes throw `error`, as a driver would. */
  failQueries(error: unknown, count?: number): void;
  /** Kills every open session, as a server restart would: validate() fails, execute() throws. */
  killSessions(): void;
}

/** The memory plugin's connection config. */
export interface MemoryConfig {
  readonly database: string;
  /** Pretend the server cannot be reached: every session create fails with CONNECT_FAILED. */
  readonly unreachable?: boolean | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
}

/** Options for {@link createMemoryPlugin}. */
export interface MemoryPluginOptions {
  readonly tables?: Readonly<Record<string, MemoryTable>>;
  readonly delayMs?: number;
  readonly defaultPool?: Partial<PoolOptions>;
  readonly mapError?: ConnectorPlugin<MemoryConfig>['mapError'];
}

/** A memory plugin plus its control panel. */
export interface MemoryPlugin extends ConnectorPlugin<MemoryConfig> {
  readonly control: MemoryControl;
}

const COMMENTS = /\/\*[\s\S]*?\*\/|--[^\n]*/g;
const SELECT_TABLE =
  /^\s*select\s+(\*|[a-z_][a-z0-9_]*(?:\s*,\s*[a-z_][a-z0-9_]*)*)\s+from\s+([a-z_][a-z0-9_]*)(?:\s+where\s+(.+?))?(?:\s+order\s+by\s+([a-z_][a-z0-9_]*))?\s*;?\s*$/is;
const WHERE_EQUALS = /^([a-z_][a-z0-9_]*)\s*=\s*\$(\d+)$/i;
const WHERE_ANY = /^([a-z_][a-z0-9_]*)\s*=\s*any\s*\(\s*\$(\d+)\s*\)$/i;
const WHERE_NULL_OR = /^\(\s*\$(\d+)\s+is\s+null\s+or\s+([a-z_][a-z0-9_]*)\s*=\s*\$(\d+)\s*\)$/i;
const SELECT_SLEEP = /^\s*select\s+sleep\s*\(\s*(\d+(?:\.\d+)?)\s*\)\s*;?\s*$/i;
const SELECT_PARAMS = /^\s*select\s+(.+?)\s*;?\s*$/is;
const PARAM_ITEM = /^\$(\d+)(?:::[a-z0-9_[\]]+)?\s+as\s+([a-z_][a-z0-9_]*)$/i;

const PARAM_COLUMN_TYPE: Readonly<Record<BoundParam['type'], ColumnType>> = {
  integer: 'integer',
  number: 'number',
  string: 'string',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  enum: 'string',
};

const memoryDialect: SqlDialect = {
  placeholders: 'numbered',
  dollarQuotes: true,
};

const configSchema = z.object({
  database: z.string().min(1).default('memory'),
  unreachable: z.boolean().optional(),
  user: z.string().optional(),
  password: secretField(z.string()).optional(),
});

/** Creates a fresh memory plugin (each call has its own tables and control). */
export function createMemoryPlugin(options: MemoryPluginOptions = {}): MemoryPlugin {
  const tables = new Map<string, MemoryTable>(Object.entries(options.tables ?? {}));
  const sessions: MemorySessionRecord[] = [];
  const live = new Set<MemorySessionImpl>();
  let createAttempts = 0;
  let createFailures = 0;
  let createError: unknown;
  let queryFailures = 0;
  let queryError: unknown;
  const running = new Map<MemorySessionImpl, string>();
  let maxConcurrent = 0;
  let drivers = 0;
  let driversDestroyed = 0;

  class MemorySessionImpl implements ConnectorSession {
    readonly record: MemorySessionRecord;
    private pending: ((error: Error) => void) | undefined;

    constructor(id: number) {
      this.record = {
        id,
        closed: false,
        killed: false,
        executes: 0,
        cancels: 0,
        validates: 0,
        lastRowLimit: undefined,
        lastMaxBytesBilled: undefined,
        lastMaxResultBytes: undefined,
        lastSql: undefined,
      };
    }

    async execute(query: CompiledQuery, opts: ExecuteOptions): Promise<RawResult> {
      this.record.executes++;
      this.record.lastRowLimit = opts.rowLimit;
      this.record.lastMaxBytesBilled = opts.maxBytesBilled;
      this.record.lastMaxResultBytes = opts.maxResultBytes;
      this.record.lastSql = query.sql;
      this.assertUsable();
      running.set(this, query.sql);
      maxConcurrent = Math.max(maxConcurrent, running.size);
      try {
        if (control.delayMs > 0) await this.sleep(control.delayMs);
        const sleepFor = SELECT_SLEEP.exec(query.sql.replace(COMMENTS, ' '));
        if (sleepFor) await this.sleep(Number(sleepFor[1]) * 1000);
        this.assertUsable();
        if (queryFailures > 0) {
          queryFailures--;
          throw queryError;
        }
        if (sleepFor)
          return { columns: [{ name: 'sleep', type: 'string' }], rows: opts.rowLimit > 0 ? [['']] : [] };
        return run(query, opts.rowLimit);
      } finally {
        running.delete(this);
      }
    }

    async validate(): Promise<boolean> {
      this.record.validates++;
      return !this.record.killed && !this.record.closed;
    }

    async cancel(): Promise<void> {
      this.record.cancels++;
      if (control.unresponsive) return new Promise<void>(() => {});
      this.pending?.(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
    }

    async close(): Promise<void> {
      if (this.record.closed) return;
      this.record.closed = true;
      live.delete(this);
      this.pending?.(connectionLost());
    }

    kill(): void {
      this.record.killed = true;
      live.delete(this);
      this.pending?.(connectionLost());
    }

    private assertUsable(): void {
      if (this.record.killed || this.record.closed) throw connectionLost();
    }

    private sleep(ms: number): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending = undefined;
          resolve();
        }, ms);
        this.pending = (error) => {
          clearTimeout(timer);
          this.pending = undefined;
          reject(error);
        };
      });
    }
  }

  function run(query: CompiledQuery, rowLimit: number): RawResult {
    const sql = query.sql.replace(COMMENTS, ' ');
    const byTable = SELECT_TABLE.exec(sql);
    if (byTable) {
      const [, list, name, where, orderBy] = byTable;
      const table = tables.get(name!) ?? tables.get(name!.toLowerCase());
      if (!table) throw sqlError(`relation "${name}" does not exist`, '42P01');
      const indexOf = (column: string): number => {
        const at = table.columns.findIndex((c) => c.name === column);
        if (at === -1) throw sqlError(`column "${column}" does not exist`, '42703');
        return at;
      };
      const param = (n: string | undefined): BoundParam['value'] => {
        const bound = query.params[Number(n) - 1];
        if (!bound) throw sqlError(`there is no parameter $${n}`, '42P02');
        return bound.value;
      };
      let rows = table.rows;
      if (where !== undefined) {
        const cond = where.trim();
        const equals = WHERE_EQUALS.exec(cond);
        const any = equals ? null : WHERE_ANY.exec(cond);
        const nullOr = equals || any ? null : WHERE_NULL_OR.exec(cond);
        if (equals) {
          const at = indexOf(equals[1]!);
          const wanted = param(equals[2]);
          rows = rows.filter((row) => same(row[at], wanted));
        } else if (any) {
          const at = indexOf(any[1]!);
          const wanted = param(any[2]);
          const list = Array.isArray(wanted) ? wanted : [];
          rows = rows.filter((row) => list.some((w) => same(row[at], w)));
        } else if (nullOr) {
          const at = indexOf(nullOr[2]!);
          const wanted = param(nullOr[3]);
          if (param(nullOr[1]) !== null) rows = rows.filter((row) => same(row[at], wanted));
        } else {
          throw sqlError(`syntax error at or near "${cond.slice(0, 20)}"`, '42601');
        }
      }
      if (orderBy !== undefined) {
        const at = indexOf(orderBy);
        rows = [...rows].sort((a, b) => compare(a[at], b[at]));
      }
      rows = rows.slice(0, rowLimit);
      if (list!.trim() === '*') return { columns: table.columns, rows };
      const picks = list!.split(',').map((c) => indexOf(c.trim()));
      return {
        columns: picks.map((i) => table.columns[i]!),
        rows: rows.map((row) => picks.map((i) => row[i])),
      };
    }
    const select = SELECT_PARAMS.exec(sql);
    if (select) {
      const columns: ColumnInfo[] = [];
      const row: unknown[] = [];
      for (const item of select[1]!.split(',')) {
        const m = PARAM_ITEM.exec(item.trim());
        if (!m) throw sqlError(`syntax error at or near "${item.trim().slice(0, 20)}"`, '42601');
        const param = query.params[Number(m[1]) - 1];
        if (!param) throw sqlError(`there is no parameter $${m[1]}`, '42P02');
        columns.push({ name: m[2]!, type: param.array ? 'array' : PARAM_COLUMN_TYPE[param.type] });
        row.push(param.value);
      }
      return { columns, rows: rowLimit > 0 ? [row] : [] };
    }
    throw sqlError('cannot execute statement in a read-only transaction', '25006');
  }

  function createDriver(config: MemoryConfig): ConnectorDriver {
    // Each connector gets its own driver, so closing one connector leaves the others working.
    drivers++;
    let destroyed = false;
    return {
      async createSession() {
        createAttempts++;
        if (control.unresponsive) return new Promise<ConnectorSession>(() => {});
        if (destroyed) throw new ConnectorError('CLOSED', 'memory driver destroyed');
        if (config.unreachable === true) {
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
        }
        if (createFailures > 0) {
          createFailures--;
          throw createError;
        }
        const session = new MemorySessionImpl(sessions.length + 1);
        sessions.push(session.record);
        live.add(session);
        return session;
      },
      async destroy() {
        if (destroyed) return;
        destroyed = true;
        driversDestroyed++;
      },
    };
  }

  const control: MemoryControl = {
    tables,
    delayMs: options.delayMs ?? 0,
    unresponsive: false,
    get createAttempts() {
      return createAttempts;
    },
    get sessions() {
      return sessions;
    },
    get executing() {
      return running.size;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    get destroyed() {
      return drivers > 0 && driversDestroyed === drivers;
    },
    runningQueries(marker) {
      let count = 0;
      for (const sql of running.values()) if (sql.includes(marker)) count++;
      return count;
    },
    failCreates(count, error) {
      createFailures = count;
      createError =
        error ?? Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    },
    failQueries(error, count = 1) {
      queryFailures = count;
      queryError = error;
    },
    killSessions() {
      for (const session of [...live]) session.kill();
    },
  };

  return {
    type: 'memory',
    displayName: 'In-memory (testing)',
    configSchema: configSchema as z.ZodType<MemoryConfig>,
    dialect: memoryDialect,
    ...(options.defaultPool ? { defaultPool: options.defaultPool } : {}),
    ...(options.mapError ? { mapError: options.mapError } : {}),
    createDriver: (config) => createDriver(config),
    control,
  };
}

function sqlError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Loose equality between a stored cell and a bound value (numbers vs bigints vs strings). */
function same(cell: unknown, value: unknown): boolean {
  if (cell === value) return true;
  if (cell === null || cell === undefined || value === null || value === undefined) return false;
  return String(cell) === String(value);
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    return a < b ? -1 : 1;
  }
  return String(a) < String(b) ? -1 : 1;
}

function connectionLost(): ConnectorError {
  return new ConnectorError('CONNECT_FAILED', 'connection terminated unexpectedly');
}
