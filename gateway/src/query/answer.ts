// The answer of a served call, serialised so a cache hit does no JSON work on the data: an
// Answer holds the body up to and including the cacheable part of `meta` (row_count, truncated);
// each request appends only its own tail (request_id, cached, duration_ms, credits, version, and
// next_price/next_price_at while a price rise is scheduled).
// `meta` is written here and nowhere else.

import { etagOfJson } from '../cache/etag.js';
import { type Answer, answerOf } from '../cache/result-cache.js';
import type { QueryResult } from './query-service.js';

/** Serialises a warehouse result (everything but the per-request part of `meta`); `store`: it may be cached. */
export function storedAnswer(result: QueryResult, now: number, store = true): Answer {
  const data = {
    source: result.source,
    results: result.results,
    ...(result.insights === undefined ? {} : { insights: result.insights }),
    columns: result.columns,
  };
  const json = JSON.stringify(data);
  // `{"source":…,"columns":[…]}` → `{"source":…,"columns":[…],"meta":{"row_count":…,"truncated":…,`
  const head = `${json.slice(0, -1)},"meta":{"row_count":${result.rowCount},"truncated":${result.truncated},`;
  return answerOf(head, etagOfJson(result.version, json), now, store);
}

/** The per-request part of `meta`. */
export interface RequestMeta {
  readonly requestId: string;
  readonly cached: boolean;
  readonly durationMs: number;
  readonly credits: number;
  readonly version: number;
  /** A marketplace preview (capped rows, free). */
  readonly preview: boolean;
  /** A price rise the owner scheduled and not yet in force: `meta.next_price` and `next_price_at`. */
  readonly nextPrice?: { readonly price: number; readonly at: number } | undefined;
}

/** The whole body: the stored head plus this request's meta, and its length in UTF-8 bytes. */
export function answerBody(answer: Answer, meta: RequestMeta): { text: string; bytes: number } {
  const end =
    `"request_id":${JSON.stringify(meta.requestId)},"cached":${meta.cached},` +
    `"duration_ms":${Math.round(meta.durationMs * 10) / 10},"credits":${meta.credits},"version":${meta.version}` +
    (meta.nextPrice === undefined
      ? ''
      : `,"next_price":${meta.nextPrice.price},"next_price_at":"${new Date(meta.nextPrice.at).toISOString()}"`) +
    (meta.preview ? ',"preview":true}}' : '}}');
  return { text: answer.body + end, bytes: answer.bodyBytes + Buffer.byteLength(end) };
}
