// How a 200 answer is serialised so a cache hit does no JSON work on the data: the stored bytes
// are the body up to and including the cacheable part of `meta` (row_count, truncated); each
// request appends only its own small tail (request_id, cached, duration_ms, credits, version).
import type { QueryResponseBody } from '../services/query-service.js';
import { etagOfJson } from './etag.js';
import { type CachedAnswer, cachedAnswer } from './result-cache.js';

/** Serialises everything but the per-request part of `meta`; `store`: it may be cached. */
export function storedAnswer(body: QueryResponseBody, now: number, store = true): CachedAnswer {
  const { meta, ...data } = body;
  const json = JSON.stringify(data);
  // `{"source":…,"columns":[…]}` → `{"source":…,"columns":[…],"meta":{"row_count":…,"truncated":…,`
  const head = `${json.slice(0, -1)},"meta":{"row_count":${meta.row_count},"truncated":${meta.truncated},`;
  return cachedAnswer(head, etagOfJson(meta.version, json), now, store);
}

export interface AnswerTail {
  readonly requestId: string;
  readonly cached: boolean;
  readonly durationMs: number;
  readonly credits: number;
  readonly version: number;
}

/** The whole body: the stored head plus this request's tail, and its length in UTF-8 bytes. */
export function answerText(answer: CachedAnswer, tail: AnswerTail): { text: string; bytes: number } {
  const end =
    `"request_id":${JSON.stringify(tail.requestId)},"cached":${tail.cached},` +
    `"duration_ms":${Math.round(tail.durationMs * 10) / 10},"credits":${tail.credits},"version":${tail.version}}}`;
  return { text: answer.body + end, bytes: answer.bodyBytes + Buffer.byteLength(end) };
}
