// The data dir's result store: whole results written to disk as they come off the warehouse
// (one JSON object a line), so a result larger than memory is paged or exported from disk with
// a bounded heap. Its bytes are capped (QUARRY_RESULT_STORE_MAX_BYTES): a result that grows
// evicts the least recently used finished ones, and one that cannot fit alone fails with
// RESULT_TOO_LARGE. Snapshots live for QUARRY_RESULT_TTL_SECONDS, on this instance only (their
// index is in memory; docs/large-results.md says how a fleet routes cursors).
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ColumnInfo, ResultRow, RowSink, StreamSummary } from '@quarry/sdk-connector';
import { ApiError } from '../errors/api-error.js';

/** A finished result on disk. */
export interface Snapshot {
  readonly id: string;
  /** The account whose call made it: only its cursors read it. */
  readonly accountId: string;
  readonly source: string;
  readonly version: number;
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly rowCount: number;
  readonly truncated: boolean;
  /** Bytes of the file: rows as JSON, one a line. */
  readonly bytes: number;
  readonly file: string;
  /** Date.now() past which it is gone. */
  readonly expiresAt: number;
}

/** A result being written: a RowSink; `finish` makes it a Snapshot, `discard` drops it. */
export interface Spool extends RowSink {
  finish(summary: StreamSummary): Promise<Snapshot>;
  discard(): Promise<void>;
}

export interface ResultStoreOptions {
  /** The store's folder (under the data dir); this process writes in a folder of its own in it. */
  readonly dir: string;
  /** QUARRY_RESULT_STORE_MAX_BYTES: bytes on disk at most, results being written included. */
  readonly maxBytes: number;
  /** QUARRY_RESULT_TTL_SECONDS, in ms. */
  readonly ttlMs: number;
  readonly now?: () => number;
}

export interface ResultStore {
  /** This process's id in cursors (a cursor names the instance holding its snapshot). */
  readonly instance: string;
  /** Starts writing a result for `owner`. */
  spool(owner: { accountId: string; source: string; version: number }): Spool;
  /** A live snapshot (made recently used), or undefined when expired or evicted. */
  get(id: string): Snapshot | undefined;
  /**
   * `count` rows (lines) from byte `offset` of a snapshot, and the byte offset after them.
   * Undefined when the snapshot went away meanwhile.
   */
  readRows(
    snapshot: Snapshot,
    offset: number,
    count: number,
  ): Promise<{ lines: string[]; end: number } | undefined>;
  /** The snapshot's file from its first byte, to stream out (undefined when gone). */
  open(snapshot: Snapshot): Readable | undefined;
  /** Drops a snapshot now (an export's, once sent, when nothing else will read it). */
  delete(id: string): Promise<void>;
  /** Bytes held (finished snapshots and results being written). */
  bytes(): number;
  /** Deletes every snapshot of this process. */
  close(): Promise<void>;
}

/** How much of a file one page read takes at a time. */
const READ_CHUNK = 256 * 1024;

/** Removes other processes' folders left by a crash, once they are older than a snapshot lives. */
async function sweepStale(dir: string, own: string, ttlMs: number, now: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === own) continue;
    const folder = path.join(dir, name);
    try {
      const info = await stat(folder);
      if (now - info.mtimeMs > ttlMs) await rm(folder, { recursive: true, force: true });
    } catch {
      // Gone already, or another process's: nothing to do.
    }
  }
}

export async function createResultStore(options: ResultStoreOptions): Promise<ResultStore> {
  const now = options.now ?? Date.now;
  const instance = randomBytes(6).toString('hex');
  const folder = path.join(options.dir, instance);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await sweepStale(options.dir, instance, options.ttlMs, now());
  // Finished snapshots, least recently used first (a Map keeps insertion order).
  const snapshots = new Map<string, Snapshot>();
  let finishedBytes = 0;
  let writingBytes = 0;

  const tooLarge = () =>
    new ApiError(
      'RESULT_TOO_LARGE',
      `The result is larger than this gateway's result store holds (${options.maxBytes} bytes). Narrow the params, or ask the analytic's owner to lower its max_rows.`,
    );

  function drop(snapshot: Snapshot): Promise<void> {
    if (!snapshots.delete(snapshot.id)) return Promise.resolve();
    finishedBytes -= snapshot.bytes;
    return rm(snapshot.file, { force: true }).catch(() => {});
  }

  function expire(): void {
    const at = now();
    for (const snapshot of snapshots.values()) if (snapshot.expiresAt <= at) void drop(snapshot);
  }

  /** Makes room for `more` bytes by evicting least recently used snapshots; false if it cannot. */
  function makeRoom(more: number): boolean {
    expire();
    for (const snapshot of snapshots.values()) {
      if (finishedBytes + writingBytes + more <= options.maxBytes) break;
      void drop(snapshot);
    }
    return finishedBytes + writingBytes + more <= options.maxBytes;
  }

  return {
    instance,

    spool(owner) {
      const id = randomBytes(16).toString('base64url');
      const file = path.join(folder, `${id}.ndjson`);
      let out: WriteStream | undefined;
      let bytes = 0;
      let columns: readonly ColumnInfo[] = [];
      let done = false;
      const stream = () => {
        out ??= createWriteStream(file, { mode: 0o600 });
        return out;
      };
      const closeOut = async () => {
        if (out === undefined) return;
        const ending = out;
        if (!ending.closed) {
          ending.end();
          await once(ending, 'close');
        }
      };
      return {
        columns(described) {
          columns = described;
          stream();
        },
        rows(batch: readonly ResultRow[]) {
          let text = '';
          for (const row of batch) text += `${JSON.stringify(row)}\n`;
          const size = Buffer.byteLength(text);
          if (!makeRoom(size)) throw tooLarge();
          writingBytes += size;
          bytes += size;
          if (!stream().write(text)) return once(stream(), 'drain').then(() => undefined);
        },
        async finish(summary) {
          stream();
          await closeOut();
          done = true;
          writingBytes -= bytes;
          const snapshot: Snapshot = {
            id,
            accountId: owner.accountId,
            source: owner.source,
            version: owner.version,
            columns: (summary.columns.length > 0 ? summary.columns : columns).map((c) => ({
              name: c.name,
              type: c.type,
            })),
            rowCount: summary.rowCount,
            truncated: summary.truncated,
            bytes,
            file,
            expiresAt: now() + options.ttlMs,
          };
          snapshots.set(id, snapshot);
          finishedBytes += bytes;
          return snapshot;
        },
        async discard() {
          if (done) return;
          done = true;
          writingBytes -= bytes;
          await closeOut();
          await rm(file, { force: true });
        },
      };
    },

    get(id) {
      const snapshot = snapshots.get(id);
      if (snapshot === undefined) return undefined;
      if (snapshot.expiresAt <= now()) {
        void drop(snapshot);
        return undefined;
      }
      snapshots.delete(id);
      snapshots.set(id, snapshot);
      return snapshot;
    },

    async readRows(snapshot, offset, count) {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(snapshot.file, 'r');
      } catch {
        return undefined;
      }
      try {
        const lines: string[] = [];
        let position = offset;
        let rest: Buffer = Buffer.alloc(0);
        const chunk = Buffer.allocUnsafe(READ_CHUNK);
        while (lines.length < count && position < snapshot.bytes) {
          const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, position);
          if (bytesRead === 0) break;
          position += bytesRead;
          let data =
            rest.length === 0
              ? chunk.subarray(0, bytesRead)
              : Buffer.concat([rest, chunk.subarray(0, bytesRead)]);
          let start = 0;
          for (;;) {
            const newline = data.indexOf(10, start);
            if (newline === -1) break;
            lines.push(data.toString('utf8', start, newline));
            start = newline + 1;
            if (lines.length === count) {
              // The next page starts right after this line.
              return { lines, end: position - (data.length - start) };
            }
          }
          data = data.subarray(start);
          rest = Buffer.from(data);
        }
        return { lines, end: position - rest.length };
      } finally {
        await handle.close();
      }
    },

    open(snapshot) {
      if (!snapshots.has(snapshot.id)) return undefined;
      return createReadStream(snapshot.file, { highWaterMark: READ_CHUNK });
    },

    async delete(id) {
      const snapshot = snapshots.get(id);
      if (snapshot !== undefined) await drop(snapshot);
    },

    bytes: () => finishedBytes + writingBytes,

    async close() {
      snapshots.clear();
      finishedBytes = 0;
      await rm(folder, { recursive: true, force: true });
    },
  };
}
