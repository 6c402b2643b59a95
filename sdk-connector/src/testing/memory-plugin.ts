// A small real connector plugin that keeps its tables in memory, for testing the SDK runtime
// (and connectors' runtime-facing behaviour) without a warehouse. It is not a mock: sessions
// execute a tiny SQL subset against real rows, honour the row limit, sleep a configurable delay
// that cancel() interrupts, and can be told to fail creates, fail queries, or be killed the way a
// server kills idle connections. `control` lets a test steer it and see what happened.
//
// SQL it understands (after template compilation, placeholders are `$1`, `$2`, …):
//   SELECT * FROM <table> [WHERE <column> = $n]
//   SELECT $1 AS a, $2 AS b          (echoes bound params as one row)
import { z } from 'zod';
import { secretField } from '../config-schema.js';
import { ConnectorError } from '../connector-error.js';
import type { PoolOptions } from '../connector-pool.js';
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
  /** The last SQL text executed. */
  lastSql: string | undefined;
}

/** Steers the fake and records what happened. */
export interface MemoryControl {
  /** Tables by name; tests may add or replace tables at any time. */
  readonly tables: Map<string, MemoryTable>;
  /** Every query sleeps this long before answering (cancel() interrupts it). */
  delayMs: number;
  /** Calls to `createSession`, failed ones included. */
  readonly createAttempts: number;
  /** Every session ever opened, in order. */
  readonly sessions: readonly MemorySessionRecord[];
  /** Queries executing right now, across sessions. */
  readonly executing: number;
  /** Most queries seen executing at the same time. */
  readonly maxConcurrent: number;
  /** True once the driver's destroy() has run. */
  readonly destroyed: boolean;
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

const SELECT_TABLE = /^\s*select\s+\*\s+from\s+([a-z_][a-z0-9_]*)(?:\s+where\s+([a-z_][a-z0-9_]*)\s*=\s*\$(\d+))?\s*;?\s*$/i;
const SELECT_PARAMS = /^\s*select\s+(.+?)\s*;?\s*$/is;
const PARAM_ITEM = /^\$(\d+)(?:::[a-z0-9_\[\]]+)?\s+as\s+([a-z_][a-z0-9_]*)$/i;

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
  let executing = 0;
  let maxConcurrent = 0;
  let destroyed = false;

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
        lastSql: undefined,
      };
    }

    async execute(query: CompiledQuery, opts: ExecuteOptions): Promise<RawResult> {
      this.record.executes++;
      this.record.lastRowLimit = opts.rowLimit;
      this.record.lastSql = query.sql;
      this.assertUsable();
      executing++;
      maxConcurrent = Math.max(maxConcurrent, executing);
      try {
        if (control.delayMs > 0) await this.sleep(control.delayMs);
        this.assertUsable();
        if (queryFailures > 0) {
          queryFailures--;
          throw queryError;
        }
        return run(query, opts.rowLimit);
      } finally {
        executing--;
      }
    }

    async validate(): Promise<boolean> {
      this.record.validates++;
      return !this.record.killed && !this.record.closed;
    }

    async cancel(): Promise<void> {
      this.record.cancels++;
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
    const byTable = SELECT_TABLE.exec(query.sql);
    if (byTable) {
      const [, name, column, index] = byTable;
      const table = tables.get(name!.toLowerCase());
      if (!table) throw Object.assign(new Error(`relation "${name}" does not exist`), { code: '42P01' });
      let rows = table.rows;
      if (column !== undefined) {
        const at = table.columns.findIndex((c) => c.name === column);
        if (at === -1) throw Object.assign(new Error(`column "${column}" does not exist`), { code: '42703' });
        const wanted = query.params[Number(index) - 1]?.value;
        rows = rows.filter((row) => row[at] === wanted);
      }
      return { columns: table.columns, rows: rows.slice(0, rowLimit) };
    }
    const select = SELECT_PARAMS.exec(query.sql);
    if (select) {
      const columns: ColumnInfo[] = [];
      const row: unknown[] = [];
      for (const item of select[1]!.split(',')) {
        const m = PARAM_ITEM.exec(item.trim());
        if (!m) throw Object.assign(new Error(`syntax error at or near "${item.trim()}"`), { code: '42601' });
        const param = query.params[Number(m[1]) - 1];
        if (!param) throw Object.assign(new Error(`there is no parameter $${m[1]}`), { code: '42P02' });
        columns.push({ name: m[2]!, type: param.array ? 'array' : PARAM_COLUMN_TYPE[param.type] });
        row.push(param.value);
      }
      return { columns, rows: rowLimit > 0 ? [row] : [] };
    }
    throw Object.assign(new Error(`syntax error at or near "${query.sql.slice(0, 20)}"`), { code: '42601' });
  }

  const driver: ConnectorDriver = {
    async createSession() {
      createAttempts++;
      if (destroyed) throw new ConnectorError('CLOSED', 'memory driver destroyed');
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
      destroyed = true;
    },
  };

  const control: MemoryControl = {
    tables,
    delayMs: options.delayMs ?? 0,
    get createAttempts() {
      return createAttempts;
    },
    get sessions() {
      return sessions;
    },
    get executing() {
      return executing;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    get destroyed() {
      return destroyed;
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
    createDriver: () => driver,
    control,
  };
}

function connectionLost(): ConnectorError {
  return new ConnectorError('CONNECT_FAILED', 'connection terminated unexpectedly');
}
