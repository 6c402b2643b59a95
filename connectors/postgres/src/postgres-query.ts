// One query on the wire, as a pg "submittable" (the hook pg-cursor uses): it writes the extended
// protocol itself so that a query is always exactly one round trip, whatever it carries.
//
//   [Close statement]…                              statements the session's cache let go
//   [Parse/Bind/Execute `SET statement_timeout`]   only when the session's timeout must change
//   [Parse]/Bind/Describe/Execute(rowLimit)/Sync    the query, in the unnamed portal
//
// The query's statement is the unnamed one, or a named one the session keeps prepared (see
// PostgresSession): then it is parsed (and planned, as the server decides) once per session, and
// later calls send only Bind.
// The extended protocol refuses a statement string with more than one command (42601), so a
// template cannot stack statements. Execute with a row count makes the server stop after
// `rowLimit` rows (PortalSuspended); the Sync sent in the same write ends the implicit
// transaction, which drops the portal, so nothing past the limit is computed or sent. Rows are
// parsed by column type as they arrive, in array form. With `maxBytes`, rows stop being kept once
// their text passes it (the rest is read and dropped, so the connection stays in step) and the
// query fails with RESULT_TOO_LARGE: a huge result is never held in memory.
import { type ColumnInfo, RESULT_ROW_BYTES, resultTooLarge } from '@quarry/sdk-connector';
import { type PgValueParser, postgresTypeInfo } from './postgres-types.js';

/** The part of pg's Connection a submittable writes to (pg/lib/connection.js). */
export interface PgWire {
  readonly stream: { cork?(): void; uncork?(): void };
  parse(message: { text: string; name?: string; types?: number[] }): void;
  close(message: { type: 'S' | 'P'; name?: string }): void;
  bind(message: { portal?: string; statement?: string; values?: (string | null)[] }): void;
  describe(message: { type: 'P' | 'S'; name?: string }): void;
  execute(message: { portal?: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** What the server sent back for one query. */
export interface PgQueryOutcome {
  readonly columns: readonly ColumnInfo[];
  readonly rows: readonly (readonly unknown[])[];
  /** True when the server stopped at the row limit with rows left over. */
  readonly suspended: boolean;
}

/** What to run. */
export interface PgQuerySpec {
  readonly text: string;
  readonly values: readonly (string | null)[];
  /** Largest row count the server may return; 0 = all rows. */
  readonly fetchLimit: number;
  /** Rows kept; later ones are dropped unparsed (used when `fetchLimit` is 0). */
  readonly keepRows: number;
  /** When set, `SET statement_timeout` to this many ms first, in the same round trip. */
  readonly setStatementTimeoutMs?: number;
  /**
   * A named statement instead of the unnamed one: `parse` false when the session has it prepared
   * already (only Bind is sent), true to (re)create it, closing any statement of that name first
   * (closing one that does not exist is no error).
   */
  readonly statement?: { readonly name: string; readonly parse: boolean };
  /** Named statements to close before anything else (the session's cache let them go). */
  readonly close?: readonly string[];
  /** When set, the most bytes of row text kept (ExecuteOptions.maxResultBytes). */
  readonly maxBytes?: number;
  /**
   * Parse and describe the statement only (Parse/Describe/Sync): nothing is bound or executed;
   * the outcome has the columns it would produce and no rows.
   */
  readonly describeOnly?: boolean;
  /**
   * Stream instead of keeping rows: the columns once, then rows in batches of `batchRows` as
   * they are parsed (the last batch at the end). `keepRows` still caps how many are handed over.
   */
  readonly stream?: {
    readonly batchRows: number;
    columns(columns: readonly ColumnInfo[]): void;
    rows(batch: unknown[][]): void;
  };
}

type Callback = (error: unknown, outcome?: PgQueryOutcome) => void;

interface RowDescription {
  readonly fields: readonly { readonly name: string; readonly dataTypeID: number }[];
}

interface DataRow {
  readonly fields: readonly (string | null)[];
}

// The protocol's row count is an unsigned 32-bit integer; the server treats it as a signed one.
const MAX_FETCH = 0x7fffffff;

/** A pg submittable running one query; its callback is called exactly once. */
export class PostgresQuery {
  private readonly spec: PgQuerySpec;
  private onDone: Callback | undefined;
  private columns: ColumnInfo[] = [];
  private parsers: (PgValueParser | undefined)[] = [];
  private rows: unknown[][] = [];
  private suspended = false;
  private parseError: unknown;
  /** Row text seen so far, counted only under `spec.maxBytes`. */
  private bytes = 0;
  private tooLarge = false;
  /** Rows handed to the stream so far (streaming only). */
  private handed = 0;

  constructor(spec: PgQuerySpec, callback: Callback) {
    this.spec = spec;
    this.onDone = callback;
  }

  submit(connection: PgWire): void {
    const { text, values, fetchLimit, setStatementTimeoutMs, statement } = this.spec;
    // Cork so the whole pipeline leaves in one TCP write (pg's own Query does the same).
    connection.stream.cork?.();
    try {
      if (this.spec.close !== undefined) {
        for (const name of this.spec.close) connection.close({ type: 'S', name });
      }
      if (setStatementTimeoutMs !== undefined) {
        connection.parse({ text: `SET statement_timeout = ${Math.trunc(setStatementTimeoutMs)}` });
        connection.bind({});
        connection.execute({});
      }
      if (statement === undefined) connection.parse({ text });
      else if (statement.parse) {
        connection.close({ type: 'S', name: statement.name });
        connection.parse({ text, name: statement.name });
      }
      if (this.spec.describeOnly) {
        connection.describe({ type: 'S', name: statement?.name });
        connection.sync();
        return;
      }
      connection.bind({ statement: statement?.name, values: values as (string | null)[] });
      connection.describe({ type: 'P' });
      connection.execute({ rows: fetchLimit > 0 ? Math.min(fetchLimit, MAX_FETCH) : 0 });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
  }

  handleRowDescription(message: RowDescription): void {
    const columns: ColumnInfo[] = [];
    const parsers: (PgValueParser | undefined)[] = [];
    for (const field of message.fields) {
      const info = postgresTypeInfo(field.dataTypeID);
      columns.push({ name: field.name, type: info.type, nativeType: info.nativeType });
      parsers.push(info.parse);
    }
    this.columns = columns;
    this.parsers = parsers;
    this.spec.stream?.columns(columns);
  }

  handleDataRow(message: DataRow): void {
    if (this.rows.length >= this.spec.keepRows || this.handed >= this.spec.keepRows) {
      this.suspended = true;
      return;
    }
    if (this.parseError !== undefined || this.tooLarge) return;
    const { fields } = message;
    const maxBytes = this.spec.maxBytes;
    if (maxBytes !== undefined) {
      // Text of the values plus the runtime's cost of a row (its count decides in the end).
      this.bytes += RESULT_ROW_BYTES;
      for (let i = 0; i < fields.length; i++) this.bytes += fields[i]?.length ?? 4;
      if (this.bytes > maxBytes) {
        // Let go of what was kept; what still arrives is read and dropped.
        this.tooLarge = true;
        this.rows = [];
        return;
      }
    }
    const row = new Array<unknown>(fields.length);
    try {
      for (let i = 0; i < fields.length; i++) {
        const text = fields[i];
        const parse = this.parsers[i];
        row[i] = text === null || text === undefined ? null : parse === undefined ? text : parse(text);
      }
    } catch (error) {
      // Keep reading to ReadyForQuery so the connection stays in step; report it then.
      this.parseError = error;
      return;
    }
    this.rows.push(row);
    const stream = this.spec.stream;
    if (stream !== undefined) {
      this.handed++;
      if (this.rows.length >= stream.batchRows) this.flush();
    }
  }

  /** Hands the rows parsed so far to the stream (streaming only). */
  private flush(): void {
    if (this.rows.length === 0 || this.spec.stream === undefined) return;
    const batch = this.rows;
    this.rows = [];
    try {
      this.spec.stream.rows(batch);
    } catch (error) {
      // Reported at ReadyForQuery, like a parse error: the connection must stay in step.
      this.parseError ??= error;
    }
  }

  handlePortalSuspended(): void {
    this.suspended = true;
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handleCopyInResponse(connection: PgWire): void {
    connection.sendCopyFail('COPY FROM STDIN is not supported');
  }

  handleCopyData(): void {}

  handleError(error: unknown): void {
    this.finish(error);
  }

  handleReadyForQuery(): void {
    if (this.parseError === undefined && !this.tooLarge) this.flush();
    if (this.parseError !== undefined) {
      this.finish(this.parseError);
      return;
    }
    if (this.tooLarge) {
      this.finish(resultTooLarge(this.spec.maxBytes as number));
      return;
    }
    this.finish(undefined, { columns: this.columns, rows: this.rows, suspended: this.suspended });
  }

  private finish(error: unknown, outcome?: PgQueryOutcome): void {
    const onDone = this.onDone;
    this.onDone = undefined;
    onDone?.(error, outcome);
  }
}
