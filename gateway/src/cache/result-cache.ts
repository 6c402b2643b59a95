// The query result cache: serialised 200 bodies by cache key, bounded in bytes, with per-analytic
// TTL, stale-while-revalidate, and concurrent misses coalesced into one load (one warehouse query).
//
// lru-cache does the byte-bounded LRU and the hard expiry (ttl + stale window). Coalescing and the
// stale window are ours, in a small Map of loads in flight: lru-cache's fetch() ties "stale" to its
// single TTL (it has no "serve stale only until" deadline), and on a failed refresh it either drops
// the stale entry or, with allowStaleOnFetchRejection, resolves a cold miss to undefined instead of
// rejecting. Here a failed load rejects its callers, caches nothing, and leaves a stale entry in
// place until its window ends.
//
// A load belongs to every caller waiting on it, not to the one that started it: it runs with its
// own AbortSignal, which fires only once every caller that can leave (those that passed a
// signal) has left and none that cannot (a caller without a signal, a background refresh) is
// waiting. A caller that leaves stops waiting at once, with QUERY_ABORTED, as it would had its
// query been its own.
//
// A hit does no JSON work: each entry holds its `{answer, outcome}` results, built once when the
// entry is stored; `peek` hands them out synchronously.
import { ConnectorError } from '@quarry/sdk-connector';
import { LRUCache } from 'lru-cache';

/** What a hit serves without any JSON work. */
export interface Answer {
  /**
   * The serialised 200 response body (JSON), as a flat string: a string costs the V8 heap its
   * characters and one header, where a Buffer per entry added ~280 bytes of wrapper, ArrayBuffer
   * and backing store; and `res.end(string)` goes out joined to the headers as one chunk. Build it
   * with {@link answerOf}.
   */
  readonly body: string;
  /** The body's length in UTF-8 bytes (its Content-Length). */
  readonly bodyBytes: number;
  /** Strong, quoted ETag of the data part (see etagOfJson). */
  readonly etag: string;
  /** When the answer was loaded, ms since the epoch. */
  readonly storedAt: number;
}

/**
 * An Answer of `text`, copied into one flat string (text built by slicing and concatenating
 * is a tree of V8 string pieces, which would keep its parts alive in the cache). `store: false`
 * (an answer that will not be cached) skips the copy.
 */
export function answerOf(text: string, etag: string, storedAt: number, store = true): Answer {
  if (!store) return { body: text, bodyBytes: Buffer.byteLength(text), etag, storedAt };
  const bytes = Buffer.from(text, 'utf8');
  return { body: bytes.toString('utf8'), bodyBytes: bytes.length, etag, storedAt };
}

/** An analytic's cache policy. */
export interface CachePolicy {
  /** Seconds an answer is served as fresh (HIT); 0 with no stale window disables storing. */
  readonly ttlSeconds: number;
  /** Seconds past the TTL an answer is still served (STALE) while one refresh runs; 0 = none. */
  readonly staleSeconds: number;
}

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE';

export interface CacheLookup {
  readonly answer: Answer;
  readonly outcome: CacheOutcome;
}

export interface GetOptions {
  /**
   * The caller's signal: when it fires, this caller stops waiting (QUERY_ABORTED) and the load is
   * cancelled if nobody else is waiting on it.
   */
  readonly signal?: AbortSignal | undefined;
  /** Skip the stored answer and load afresh (the result is still stored). */
  readonly refresh?: boolean;
}

export interface CacheStats {
  readonly entries: number;
  /** Accounted bytes (bodies + keys + a fixed per-entry overhead); never above maxBytes. */
  readonly bytes: number;
  /** The byte bound `bytes` stays under. */
  readonly maxBytes: number;
  readonly hits: number;
  readonly misses: number;
  readonly stale: number;
  /** Entries dropped to make room (least recently used first), not by expiry or a purge. */
  readonly evictions: number;
}

export interface ResultCacheOptions {
  /** Byte bound (QUARRY_CACHE_MAX_BYTES); default 64 MiB. */
  readonly maxBytes?: number;
  /** Clock in ms since the epoch; default Date.now. Tests pass a fake one. */
  readonly now?: () => number;
  /** Told about a failed background refresh (the stale answer keeps being served). */
  readonly onRefreshError?: (key: string, error: unknown) => void;
}

/** Loads an answer; `signal` fires when no caller waits for it any more (see the head of this file). */
export type Loader = (signal: AbortSignal) => Promise<Answer>;

export interface ResultCache {
  /**
   * Returns the cached answer (HIT), or runs `load` once for all concurrent callers of the same
   * key (MISS; coalesced), or serves a stale answer while one background `load` refreshes it
   * (STALE). A failed load rejects every coalesced caller with the same error and caches nothing.
   * With `refresh: true` (a caller's `Cache-Control: no-cache`) any stored answer is skipped: the
   * call loads (joining a load already in flight for the key), stores the result, and is a MISS.
   */
  get(key: string, policy: CachePolicy, load: Loader, options?: GetOptions): Promise<CacheLookup>;
  /**
   * The stored answer without loading: a HIT when fresh, STALE within the stale window (then one
   * background `load` refreshes it, as in `get`), undefined when there is none. Lets the caller
   * serve a hit synchronously and meter it with a single write.
   */
  peek(key: string, policy: CachePolicy, load: Loader): CacheLookup | undefined;
  /** Drops every entry whose key starts with `prefix` (see cacheKeyPrefix); loads in flight for them are not stored. */
  delete(prefix: string): void;
  stats(): CacheStats;
}

export const DEFAULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Bytes charged per entry beyond its body and key: the entry and answer objects, the ETag string,
 * the two prebuilt results and lru-cache's per-slot bookkeeping. Measured at about 520 bytes on
 * Node 20 (heapUsed + arrayBuffers growth over 51,666 entries of ~190-byte bodies and ~75-byte
 * keys, after GC: 784 bytes an entry in all; 938 when bodies were Buffers), rounded up so that
 * the byte bound bounds the process's memory, not just the bodies.
 */
export const ENTRY_OVERHEAD_BYTES = 1024;

interface Entry {
  readonly answer: Answer;
  readonly freshUntil: number;
  readonly staleUntil: number;
  /** Built once when stored, so a hit allocates nothing. */
  readonly hitResult: CacheLookup;
  readonly staleResult: CacheLookup;
}

interface Load {
  readonly promise: Promise<Answer>;
  /** Cleared by delete(): the load still answers its callers but must not be stored. */
  store: boolean;
  /** Aborted once nobody waits (the load's own signal). */
  readonly controller: AbortController;
  /** Callers with a signal still waiting. */
  leavable: number;
  /** A caller that cannot leave (no signal, or a background refresh) waits: never aborted. */
  pinned: boolean;
}

export function createResultCache(options: ResultCacheOptions = {}): ResultCache {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES;
  const now = options.now ?? Date.now;
  const onRefreshError = options.onRefreshError;
  const lru = new LRUCache<string, Entry>({
    maxSize: maxBytes,
    sizeCalculation: (entry, key) => bodyMemory(entry.answer) + key.length + ENTRY_OVERHEAD_BYTES,
    // Same clock as ours, so lru-cache's hard expiry and our fresh/stale deadlines agree. A fake
    // clock must be read every time (lru-cache otherwise reuses a reading for 1 ms of real time).
    perf: { now },
    ttlResolution: options.now === undefined ? 1 : 0,
    dispose: (_entry, _key, reason) => {
      if (reason === 'evict') evictions++;
    },
  });
  const loads = new Map<string, Load>();
  let hits = 0;
  let misses = 0;
  let stale = 0;
  let evictions = 0;

  function store(key: string, policy: CachePolicy, answer: Answer): Answer {
    const ttlMs = Math.max(0, policy.ttlSeconds) * 1000;
    const lifeMs = ttlMs + Math.max(0, policy.staleSeconds) * 1000;
    // lru-cache reads ttl 0 as "forever": an analytic without caching stores nothing.
    if (lifeMs <= 0) return answer;
    const start = now();
    const hitResult: CacheLookup = { answer, outcome: 'HIT' };
    const staleResult: CacheLookup = { answer, outcome: 'STALE' };
    const entry: Entry = {
      answer,
      freshUntil: start + ttlMs,
      staleUntil: start + lifeMs,
      hitResult,
      staleResult,
    };
    // An entry bigger than the whole cache is silently not stored by lru-cache; the caller
    // still gets its answer.
    lru.set(key, entry, { ttl: lifeMs, start });
    return answer;
  }

  function startLoad(key: string, policy: CachePolicy, load: Loader): Load {
    const controller = new AbortController();
    const record: Load = {
      promise: Promise.resolve()
        .then(() => load(controller.signal))
        .then(
          (answer) => {
            if (loads.get(key) === record) loads.delete(key);
            return record.store ? store(key, policy, answer) : answer;
          },
          (error: unknown) => {
            if (loads.get(key) === record) loads.delete(key);
            throw error;
          },
        ),
      store: true,
      controller,
      leavable: 0,
      pinned: false,
    };
    loads.set(key, record);
    return record;
  }

  /** The load in flight for `key` that callers may still join (not one cancelled for want of them). */
  function liveLoad(key: string): Load | undefined {
    const record = loads.get(key);
    return record === undefined || record.controller.signal.aborted ? undefined : record;
  }

  /** Waits on a load as one of its callers; a caller with a signal may leave (see the file head). */
  function join(record: Load, signal: AbortSignal | undefined): Promise<Answer> {
    if (signal === undefined) {
      record.pinned = true;
      return record.promise;
    }
    if (signal.aborted) {
      leave(record);
      return Promise.reject(callerLeft());
    }
    record.leavable++;
    return new Promise<Answer>((resolve, reject) => {
      const onAbort = () => {
        record.leavable--;
        leave(record);
        reject(callerLeft());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      record.promise.then(
        (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** A caller left: with nobody left waiting, the load is cancelled and not stored. */
  function leave(record: Load): void {
    if (record.pinned || record.leavable > 0 || record.controller.signal.aborted) return;
    record.controller.abort();
  }

  /** The stored answer as a HIT or, starting the one background refresh, STALE; counted. */
  function lookup(key: string, policy: CachePolicy, load: Loader): CacheLookup | undefined {
    const entry = lru.get(key);
    if (entry === undefined) return undefined;
    const t = now();
    if (t < entry.freshUntil) {
      hits++;
      return entry.hitResult;
    }
    if (t < entry.staleUntil) {
      stale++;
      if (liveLoad(key) === undefined) {
        // Background refresh: its failure must not surface as an unhandled rejection.
        const refresh = startLoad(key, policy, load);
        refresh.pinned = true;
        refresh.promise.catch((error: unknown) => onRefreshError?.(key, error));
      }
      return entry.staleResult;
    }
    return undefined;
  }

  return {
    get(key, policy, load, getOptions) {
      const stored = getOptions?.refresh === true ? undefined : lookup(key, policy, load);
      if (stored !== undefined) return Promise.resolve(stored);
      misses++;
      const running = liveLoad(key) ?? startLoad(key, policy, load);
      return join(running, getOptions?.signal).then(toMiss);
    },

    peek: lookup,

    delete(prefix) {
      // Collected first: deleting from lru-cache while iterating it may skip entries.
      const doomed = [...lru.keys()].filter((key) => key.startsWith(prefix));
      for (const key of doomed) lru.delete(key);
      for (const [key, record] of loads) {
        if (key.startsWith(prefix)) {
          record.store = false;
          loads.delete(key);
        }
      }
    },

    stats() {
      return { entries: lru.size, bytes: lru.calculatedSize, maxBytes, hits, misses, stale, evictions };
    },
  };
}

function toMiss(answer: Answer): CacheLookup {
  return { answer, outcome: 'MISS' };
}

/**
 * Heap bytes of a body string: one per character when it is ASCII (V8 then stores one byte per
 * character), else at most two (V8's two-byte strings; Latin-1 text would fit in one, so this
 * over-counts it).
 */
function bodyMemory(answer: Answer): number {
  const chars = answer.body.length;
  return answer.bodyBytes === chars ? chars : 2 * chars;
}

/** What a caller that left gets: what its own query would have failed with. */
function callerLeft(): ConnectorError {
  return new ConnectorError('QUERY_ABORTED', 'the caller went away before the answer was ready');
}
