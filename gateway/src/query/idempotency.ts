// Idempotency-Key on POST /v1/query: a replay of a completed call returns the stored answer and
// is not charged again; the same key with a different body, or while the first is still running,
// is refused. Failed calls are not stored, so a retry runs (and is charged) once. The answer is
// stored by the call's charge itself, in the same store transaction (money/metering.ts), so a
// process that dies after the charge leaves the answer for the retry to replay: never a charged
// call whose retry runs, and is charged, again.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../errors/api-error.js';
import type { IdempotencyRepository } from '../store/idempotency-repository.js';
import type { QueryReply } from './query-reply.js';

/** The header's value: 1–255 visible ASCII characters (also its OpenAPI description). */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key must be 1–255 visible ASCII characters.');

/** Longer than any query may run (10 minutes), so a crashed instance's claim can be taken over. */
const IDEMPOTENCY_LEASE_MS = 15 * 60_000;

/** The claimed key a served call stores its answer under, with its charge. */
export interface IdempotencyClaimed {
  readonly accountId: string;
  readonly key: string;
}

/**
 * Runs `run` at most once per (account, key): replays a completed reply, refuses a running or
 * mismatching one. `run` stores its answer under the claim in its charge's transaction; when it
 * throws, the claim is dropped so a retry may run.
 */
export async function withIdempotency(
  idempotency: IdempotencyRepository,
  accountId: string,
  key: string,
  body: string | Uint8Array,
  run: (claimed: IdempotencyClaimed) => Promise<QueryReply>,
): Promise<
  { readonly replay: { readonly status: number; readonly body: string } } | { readonly reply: QueryReply }
> {
  if (!IdempotencyKeySchema.safeParse(key).success) {
    throw new ApiError('INVALID_REQUEST', 'Idempotency-Key must be 1–255 visible ASCII characters.');
  }
  const fingerprint = createHash('sha256').update(body).digest('hex');
  const claim = await idempotency.claim(accountId, key, fingerprint, {
    takeOverAfterMs: IDEMPOTENCY_LEASE_MS,
  });
  if (claim.state === 'done') return { replay: { status: claim.statusCode, body: claim.body } };
  if (claim.state === 'in_progress') {
    throw new ApiError(
      'CONFLICT',
      'A request with this Idempotency-Key is still running; retry when it has finished.',
      { retryAfter: 1 },
    );
  }
  if (claim.state === 'mismatch') {
    throw new ApiError('INVALID_REQUEST', 'This Idempotency-Key was used with a different request.');
  }
  let reply: QueryReply;
  try {
    reply = await run({ accountId, key });
  } catch (error) {
    await idempotency.abandon(accountId, key);
    throw error;
  }
  return { reply };
}
