// Results too large for one JSON answer: pages (`page_size` → `meta.next`) and exports (CSV,
// NDJSON, Arrow, Parquet). Either way the warehouse query runs once and its rows stream to the
// data dir's result store (results/result-store.ts) at the warehouse's pace; pages then read
// that snapshot by cursor, with no warehouse query and no charge, and an export streams it to
// the client in its format. The call is charged once: a first page before it is answered (with
// its Idempotency-Key's answer in the charge's transaction, as any call); an export after its
// last byte is written, so an export cut midway (the client gone, a disk error) is not charged.
// Within the analytic's cache TTL the same call reuses the snapshot (X-Cache: HIT), charged
// like any cached call. docs/large-results.md is the user's side of it.
import type { Writable } from 'node:stream';
import type { ParamValues } from '@quarry/sdk-connector';
import { answerHolder, type Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import type { Charge, IdempotentCompletion, Metering } from '../money/metering.js';
import { cursorExpired, type ResultCursors } from '../results/result-cursor.js';
import { FORMAT_MEDIA_TYPES, type ResultFormat, writeResult } from '../results/result-formats.js';
import type { ResultStore, Snapshot } from '../results/result-store.js';
import type { FailedCalls } from './failed-calls.js';
import type { IdempotencyClaimed } from './idempotency.js';
import type { QueryService } from './query-service.js';

/** The most rows a page may hold. */
export const MAX_PAGE_SIZE = 10_000;

export interface LargeResultsDeps {
  readonly queries: Pick<QueryService, 'stream'>;
  readonly metering: Metering;
  readonly failedCalls?: FailedCalls;
  readonly store: ResultStore;
  readonly cursors: ResultCursors;
}

/** One admitted, decided call that asked for a page or a format. */
export interface LargeCall {
  readonly principal: Principal;
  readonly entry: CatalogEntry;
  readonly params: ParamValues;
  /** The result-cache key (undefined when the analytic caches nothing). */
  readonly cacheKey: string | undefined;
  readonly bypassCache: boolean;
  readonly requestId: string;
  readonly started: number;
  readonly signal: () => AbortSignal | undefined;
  readonly idempotency?: IdempotencyClaimed | undefined;
}

/** What the query module answers for a large call: a body, or a stream written by the adapter. */
export interface LargeReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  /** Writes the answer's body (an export); rejects when it was cut, the call then uncharged. */
  readonly stream?: (out: Writable) => Promise<void>;
  readonly charge?: Charge;
}

export interface LargeResults {
  /** The first page of a fresh (or cached) snapshot, charged. */
  firstPage(call: LargeCall, pageSize: number): Promise<LargeReply>;
  /** The page a cursor points to: no warehouse query, no charge. */
  nextPage(
    principal: Principal,
    entry: CatalogEntry,
    cursor: string,
    requestId: string,
    started: number,
  ): Promise<LargeReply>;
  /** The whole result in `format`, charged once its last byte is written. */
  exportResult(call: LargeCall, format: Exclude<ResultFormat, 'json'>): Promise<LargeReply>;
}

/** A snapshot ready to answer from, and how to charge (or not) the call that asked for it. */
interface Ready {
  readonly snapshot: Snapshot;
  readonly cached: boolean;
  /** Whether later calls may reuse it (kept under its cache key). */
  readonly shared: boolean;
  charge(completion?: IdempotentCompletion): Promise<Charge>;
  release(): Promise<void>;
  readonly credits: number;
}

export function createLargeResults(deps: LargeResultsDeps): LargeResults {
  const { store, cursors, metering } = deps;
  // Snapshots of cacheable calls, by result-cache key, until the analytic's TTL passes.
  const byCacheKey = new Map<string, { id: string; until: number }>();

  function cachedSnapshot(call: LargeCall): Snapshot | undefined {
    if (call.cacheKey === undefined || call.bypassCache) return undefined;
    const known = byCacheKey.get(call.cacheKey);
    if (known === undefined) return undefined;
    const snapshot = known.until > Date.now() ? store.get(known.id) : undefined;
    if (snapshot === undefined) byCacheKey.delete(call.cacheKey);
    return snapshot;
  }

  async function ready(call: LargeCall): Promise<Ready> {
    const { principal, entry, requestId, started } = call;
    const hit = cachedSnapshot(call);
    if (hit !== undefined) {
      return {
        snapshot: hit,
        cached: true,
        shared: true,
        credits: metering.creditsOf(principal, entry),
        charge: (completion) =>
          metering.chargeServed(principal, entry, requestId, performance.now() - started, completion),
        release: async () => {},
      };
    }
    const admitted = deps.failedCalls?.admit(principal, entry);
    if (admitted !== undefined) await admitted;
    const pending = await metering.begin(principal, entry, requestId);
    const spool = store.spool({ accountId: principal.accountId, source: entry.name, version: entry.version });
    const ran = performance.now();
    let snapshot: Snapshot;
    try {
      const summary = await deps.queries.stream(entry, call.params, spool, call.signal());
      snapshot = await spool.finish(summary);
    } catch (error) {
      await spool.discard();
      await pending.release();
      await deps.failedCalls?.failed(principal, entry, requestId, error, performance.now() - ran);
      throw error;
    }
    const ttl = entry.definition.cache?.ttl ?? 0;
    const shared = call.cacheKey !== undefined && ttl > 0;
    if (call.cacheKey !== undefined && shared) {
      if (byCacheKey.size >= 10_000) byCacheKey.clear();
      byCacheKey.set(call.cacheKey, { id: snapshot.id, until: Date.now() + ttl * 1000 });
    }
    return {
      snapshot,
      cached: false,
      shared,
      credits: pending.credits,
      charge: (completion) => pending.commit(performance.now() - started, completion),
      release: () => pending.release(),
    };
  }

  /** A page's body: the rows' JSON as stored, and `meta` with where the next page starts. */
  function pageBody(
    snapshot: Snapshot,
    lines: readonly string[],
    meta: {
      requestId: string;
      cached: boolean;
      started: number;
      credits: number;
      offset: number;
      next: string | undefined;
    },
  ): string {
    return (
      `{"source":${JSON.stringify(snapshot.source)},"results":[${lines.join(',')}],` +
      `"columns":${JSON.stringify(snapshot.columns)},"meta":{"row_count":${lines.length},` +
      `"truncated":${snapshot.truncated},"total_rows":${snapshot.rowCount},"offset":${meta.offset},` +
      `"next":${meta.next === undefined ? 'null' : JSON.stringify(meta.next)},` +
      `"request_id":${JSON.stringify(meta.requestId)},"cached":${meta.cached},` +
      `"duration_ms":${Math.round((performance.now() - meta.started) * 10) / 10},` +
      `"credits":${meta.credits},"version":${snapshot.version}}}`
    );
  }

  /** Reads the page at (row, byte) and the cursor of the one after it. */
  async function page(
    snapshot: Snapshot,
    accountId: string,
    row: number,
    byte: number,
    pageSize: number,
  ): Promise<{ lines: string[]; next: string | undefined }> {
    const read = await store.readRows(snapshot, byte, pageSize);
    if (read === undefined) throw cursorExpired('The result this cursor pages through is no longer kept.');
    const after = row + read.lines.length;
    const next =
      after < snapshot.rowCount
        ? cursors.encode({ snapshot: snapshot.id, accountId, row: after, byte: read.end, pageSize })
        : undefined;
    return { lines: read.lines, next };
  }

  const jsonHeaders = (requestId: string, body: string, cached: boolean) => ({
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    'x-cache': cached ? 'HIT' : 'MISS',
    'cache-control': 'private, no-store',
  });

  return {
    async firstPage(call, pageSize) {
      const prepared = await ready(call);
      const { snapshot } = prepared;
      let body: string;
      try {
        const { lines, next } = await page(snapshot, answerHolder(call.principal), 0, 0, pageSize);
        body = pageBody(snapshot, lines, {
          requestId: call.requestId,
          cached: prepared.cached,
          started: call.started,
          credits: prepared.credits,
          offset: 0,
          next,
        });
      } catch (error) {
        await prepared.release();
        throw error;
      }
      const charge = await prepared.charge(
        call.idempotency === undefined ? undefined : { ...call.idempotency, statusCode: 200, body },
      );
      return { status: 200, headers: jsonHeaders(call.requestId, body, prepared.cached), body, charge };
    },

    async nextPage(principal, entry, cursor, requestId, started) {
      const state = cursors.decode(cursor, answerHolder(principal));
      const snapshot = store.get(state.snapshot);
      if (snapshot === undefined) {
        throw cursorExpired(
          'The result this cursor pages through is no longer kept (it expired or was evicted).',
        );
      }
      if (snapshot.source !== entry.name) {
        throw new ApiError(
          'INVALID_REQUEST',
          `This cursor pages through "${snapshot.source}", not "${entry.name}".`,
          {
            details: [{ param: 'cursor', message: 'belongs to another analytic' }],
          },
        );
      }
      const { lines, next } = await page(
        snapshot,
        answerHolder(principal),
        state.row,
        state.byte,
        state.pageSize,
      );
      const body = pageBody(snapshot, lines, {
        requestId,
        cached: true,
        started,
        credits: 0,
        offset: state.row,
        next,
      });
      return { status: 200, headers: jsonHeaders(requestId, body, true), body };
    },

    async exportResult(call, format) {
      const prepared = await ready(call);
      const { snapshot } = prepared;
      const input = store.open(snapshot);
      if (input === undefined) {
        await prepared.release();
        throw new ApiError('SOURCE_UNAVAILABLE', 'The result was evicted before it could be sent; retry.', {
          retryAfter: 1,
        });
      }
      const headers: Record<string, string> = {
        'content-type': FORMAT_MEDIA_TYPES[format],
        'x-request-id': call.requestId,
        'x-cache': prepared.cached ? 'HIT' : 'MISS',
        'x-row-count': String(snapshot.rowCount),
        'x-truncated': String(snapshot.truncated),
        'x-credits': String(prepared.credits),
        'cache-control': 'private, no-store',
      };
      return {
        status: 200,
        headers,
        body: undefined,
        async stream(out) {
          try {
            await writeResult(format, snapshot.columns, input, out);
          } catch (error) {
            await prepared.release();
            throw error;
          } finally {
            // An export's own snapshot has no other reader: its disk is free at once.
            if (!prepared.shared) await store.delete(snapshot.id);
          }
          await prepared.charge();
        },
      };
    },
  };
}
