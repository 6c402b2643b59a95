// A stored result (rows as JSON lines on disk) written out in the format the caller asked for:
// NDJSON (the file as it is), CSV, an Arrow IPC stream or Parquet. Rows are read a line at a
// time and written a batch at a time, waiting on the client (backpressure), so no format holds
// more than one batch (or, for Parquet, one row group) in memory. Arrow and Parquet are typed
// from the analytic's columns: integer → Int64, number and decimal → Float64/DOUBLE, boolean,
// date → Date32/DATE, timestamp → microseconds UTC; everything else is text (JSON for json and
// array values), as docs/large-results.md lists.
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** The formats a result can be answered in; `json` is the default JSON answer (and pages). */
export type ResultFormat = 'json' | 'csv' | 'ndjson' | 'arrow' | 'parquet';

/** Each export format's media type (also what `Accept` names it by). */
export const FORMAT_MEDIA_TYPES: Readonly<Record<Exclude<ResultFormat, 'json'>, string>> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
  arrow: 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

/** Column types as the answer's `columns` carry them. */
export type ResultColumns = readonly { readonly name: string; readonly type: string }[];

/**
 * The format a request asks for: `format=` (GET) wins, then the first media type of `Accept`
 * that names one; anything else (none, `*\/*`, application/json) is JSON. Undefined for a
 * `format=` this gateway does not know.
 */
export function requestedFormat(
  accept: string | undefined,
  format: string | undefined,
): ResultFormat | undefined {
  if (format !== undefined) {
    const named = format.toLowerCase();
    return named === 'json' || Object.hasOwn(FORMAT_MEDIA_TYPES, named) ? (named as ResultFormat) : undefined;
  }
  if (accept === undefined) return 'json';
  for (const part of accept.split(',')) {
    const type = part.split(';')[0]?.trim().toLowerCase();
    if (type === 'application/json') return 'json';
    for (const [name, media] of Object.entries(FORMAT_MEDIA_TYPES))
      if (media === type) return name as ResultFormat;
  }
  return 'json';
}

/** Rows per Arrow record batch and per Parquet row group. */
const BATCH_ROWS = 16_384;

async function write(out: Writable, chunk: string | Uint8Array): Promise<void> {
  if (out.destroyed) throw new Error('the client went away');
  if (!out.write(chunk)) await once(out, 'drain');
}

/** The snapshot's lines, one a row (parsed by each format as it goes). */
function linesOf(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; null is empty. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

async function writeCsv(columns: ResultColumns, input: Readable, out: Writable): Promise<void> {
  const names = columns.map((c) => c.name);
  let text = `${names.map(csvField).join(',')}\r\n`;
  for await (const line of linesOf(input)) {
    const row = JSON.parse(line) as Record<string, unknown>;
    let fields = '';
    for (let i = 0; i < names.length; i++) fields += (i === 0 ? '' : ',') + csvField(row[names[i] as string]);
    text += `${fields}\r\n`;
    if (text.length >= 64 * 1024) {
      await write(out, text);
      text = '';
    }
  }
  if (text.length > 0) await write(out, text);
}

async function writeNdjson(input: Readable, out: Writable): Promise<void> {
  for await (const chunk of input) await write(out, chunk as Uint8Array);
}

type ArrowKind = 'int64' | 'float64' | 'bool' | 'date' | 'timestamp' | 'utf8';

/** How a column travels in Arrow and Parquet. */
function kindOf(type: string): ArrowKind {
  switch (type) {
    case 'integer':
      return 'int64';
    case 'number':
    case 'decimal':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    default:
      return 'utf8';
  }
}

const DAY_MS = 86_400_000;

/** A JSON-safe value as the column's kind holds it (BigInt, number, Date, string), or null. */
function typedValue(kind: ArrowKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'int64':
      return BigInt(value as number | string);
    case 'float64':
      return Number(value);
    case 'bool':
      return Boolean(value);
    case 'date':
    case 'timestamp':
      return new Date(value as string);
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

async function writeArrow(columns: ResultColumns, input: Readable, out: Writable): Promise<void> {
  const arrow = await import('apache-arrow');
  const kinds = columns.map((c) => kindOf(c.type));
  const typeOf = (kind: ArrowKind) => {
    switch (kind) {
      case 'int64':
        return new arrow.Int64();
      case 'float64':
        return new arrow.Float64();
      case 'bool':
        return new arrow.Bool();
      case 'date':
        return new arrow.DateDay();
      case 'timestamp':
        return new arrow.TimestampMicrosecond('UTC');
      default:
        return new arrow.Utf8();
    }
  };
  const fields = columns.map((c, i) => new arrow.Field(c.name, typeOf(kinds[i] as ArrowKind), true));
  const schema = new arrow.Schema(fields);
  // Record batches in (object mode), IPC bytes out, piped to the client with backpressure both ways.
  const writer = arrow.RecordBatchStreamWriter.throughNode({ autoDestroy: true });
  const failed = new Promise<never>((_, reject) => {
    writer.once('error', reject);
    out.once('close', () => reject(new Error('the client went away')));
  });
  failed.catch(() => {});
  writer.pipe(out, { end: false });
  let batches = 0;
  let batch: unknown[][] = columns.map(() => []);
  let count = 0;
  const flush = async () => {
    const children = kinds.map((kind, i) => {
      let values = batch[i] as unknown[];
      // Arrow JS takes epoch milliseconds for both date and timestamp vectors' builders.
      if (kind === 'date' || kind === 'timestamp')
        values = values.map((v) => (v === null ? null : (v as Date).getTime()));
      return arrow.vectorFromArray(values, typeOf(kind) as never).data[0];
    });
    const struct = arrow.makeData({
      type: new arrow.Struct(fields),
      length: count,
      nullCount: 0,
      children: children as never,
    });
    batches++;
    if (!writer.write(new arrow.RecordBatch(schema, struct)))
      await Promise.race([once(writer, 'drain'), failed]);
    batch = columns.map(() => []);
    count = 0;
  };
  for await (const line of linesOf(input)) {
    const row = JSON.parse(line) as Record<string, unknown>;
    for (let i = 0; i < columns.length; i++) {
      const kind = kinds[i] as ArrowKind;
      let value = typedValue(kind, row[(columns[i] as { name: string }).name]);
      if (kind === 'date' && value instanceof Date)
        value = new Date(Math.floor(value.getTime() / DAY_MS) * DAY_MS);
      (batch[i] as unknown[]).push(value);
    }
    if (++count >= BATCH_ROWS) await flush();
  }
  // An empty result still sends its schema (one empty batch).
  if (count > 0 || batches === 0) await flush();
  writer.end();
  await Promise.race([once(writer, 'end'), failed]);
}

async function writeParquet(columns: ResultColumns, input: Readable, out: Writable): Promise<void> {
  // The writer (and its dependencies) load on the first Parquet export only.
  const parquet = await import('@dsnp/parquetjs');
  const kinds = columns.map((c) => kindOf(c.type));
  const parquetType = (kind: ArrowKind) =>
    ({
      int64: 'INT64',
      float64: 'DOUBLE',
      bool: 'BOOLEAN',
      date: 'DATE',
      timestamp: 'TIMESTAMP_MICROS',
      utf8: 'UTF8',
    })[kind];
  const definition: Record<string, { type: string; optional: true; compression: 'SNAPPY' }> = {};
  columns.forEach((c, i) => {
    definition[c.name] = { type: parquetType(kinds[i] as ArrowKind), optional: true, compression: 'SNAPPY' };
  });
  const schema = new parquet.ParquetSchema(definition as never);
  // Its stream calls write(chunk, callback) and waits for the callback: the client's pace.
  const sink = {
    write(chunk: Buffer, callback: (error?: Error | null) => void) {
      if (out.destroyed) {
        callback(new Error('the client went away'));
        return true;
      }
      const ok = out.write(chunk);
      if (ok) callback();
      else out.once('drain', () => callback());
      return ok;
    },
    end(callback: (error?: Error | null) => void) {
      callback();
      return this;
    },
  };
  const writer = await parquet.ParquetWriter.openStream(schema, sink as never, { rowGroupSize: BATCH_ROWS });
  for await (const line of linesOf(input)) {
    const row = JSON.parse(line) as Record<string, unknown>;
    const typed: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const name = (columns[i] as { name: string }).name;
      const kind = kinds[i] as ArrowKind;
      const value = row[name];
      if (value === null || value === undefined) continue;
      if (kind === 'date') typed[name] = Math.floor(Date.parse(value as string) / DAY_MS);
      else if (kind === 'timestamp') typed[name] = BigInt(Date.parse(value as string)) * 1000n;
      else typed[name] = typedValue(kind, value);
    }
    await writer.appendRow(typed);
  }
  await writer.close();
}

/** Writes a stored result (`input`: its JSON lines) to `out` in `format`. */
export async function writeResult(
  format: Exclude<ResultFormat, 'json'>,
  columns: ResultColumns,
  input: Readable,
  out: Writable,
): Promise<void> {
  try {
    switch (format) {
      case 'csv':
        return await writeCsv(columns, input, out);
      case 'ndjson':
        return await writeNdjson(input, out);
      case 'arrow':
        return await writeArrow(columns, input, out);
      case 'parquet':
        return await writeParquet(columns, input, out);
    }
  } finally {
    input.destroy();
  }
}
