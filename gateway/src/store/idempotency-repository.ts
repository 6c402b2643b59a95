// Idempotency-Key support: the first request with a key claims it, and its response is stored
// when it completes; a replay of the same request gets that stored response instead of running
// (and being charged) again, a different request under the same key is refused, and a replay
// racing the original sees it in progress. Keys are per account and expire after 24 hours.
import type { SqlExecutor } from './sql-client.js';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** What {@link IdempotencyRepository.claim} found. */
export type IdempotencyClaim =
  /** The caller now owns the key: run the request, then `complete` (or `abandon`) it. */
  | { readonly state: 'new' }
  /** The same request is running elsewhere right now. */
  | { readonly state: 'in_progress' }
  /** The same request already ran: answer with this response. */
  | { readonly state: 'done'; readonly statusCode: number; readonly body: string }
  /** The key was used for a different request. */
  | { readonly state: 'mismatch' };

/** Options of {@link IdempotencyRepository.claim}. */
export interface ClaimOptions {
  /**
   * Take over a claim still in progress after this long (its instance presumably died). Must
   * exceed the longest request, or a slow original and its replay would both run. Default:
   * never before the key expires.
   */
  readonly takeOverAfterMs?: number;
}

/** Idempotency keys. */
export interface IdempotencyRepository {
  /** `fingerprint` identifies the request (e.g. a hash of method, path and body). */
  claim(
    accountId: string,
    key: string,
    fingerprint: string,
    options?: ClaimOptions,
  ): Promise<IdempotencyClaim>;
  /** Stores the response of a claimed key; false when the claim is gone (expired or abandoned). */
  complete(
    accountId: string,
    key: string,
    response: { readonly statusCode: number; readonly body: string },
  ): Promise<boolean>;
  /** Drops an in-progress claim so the caller may retry (e.g. the request failed before charging). */
  abandon(accountId: string, key: string): Promise<void>;
  /** Deletes keys older than `olderThanMs` (default 24 h); returns how many. */
  purgeExpired(olderThanMs?: number): Promise<number>;
}

interface KeyRow {
  readonly request_fingerprint: string;
  readonly status_code: number | null;
  readonly response_body: string | null;
}

/** Builds the idempotency-key repository over `sql`. */
export function createIdempotencyRepository(sql: SqlExecutor): IdempotencyRepository {
  const claim = async (
    accountId: string,
    key: string,
    fingerprint: string,
    options: ClaimOptions = {},
  ): Promise<IdempotencyClaim> => {
    // Insert, or take over an expired key (or an abandoned in-progress one); one statement, so
    // two racing claims cannot both win.
    const won = await sql.query(
      `INSERT INTO idempotency_keys AS k (account_id, key, request_fingerprint) VALUES ($1, $2, $3)
         ON CONFLICT (account_id, key) DO UPDATE
            SET request_fingerprint = excluded.request_fingerprint, status_code = NULL, response_body = NULL,
                created_at = now(), completed_at = NULL
          WHERE k.created_at < now() - $4::double precision * interval '1 millisecond'
             OR (k.status_code IS NULL AND $5::double precision IS NOT NULL
                 AND k.created_at < now() - $5::double precision * interval '1 millisecond')
         RETURNING 1`,
      [accountId, key, fingerprint, IDEMPOTENCY_TTL_MS, options.takeOverAfterMs ?? null],
    );
    if (won.length > 0) return { state: 'new' };
    const [row] = await sql.query<KeyRow>(
      `SELECT request_fingerprint, status_code, response_body FROM idempotency_keys
          WHERE account_id = $1 AND key = $2`,
      [accountId, key],
    );
    // Purged between the two statements: try again from the start.
    if (row === undefined) return claim(accountId, key, fingerprint, options);
    if (row.request_fingerprint !== fingerprint) return { state: 'mismatch' };
    if (row.status_code === null) return { state: 'in_progress' };
    return { state: 'done', statusCode: row.status_code, body: row.response_body ?? '' };
  };

  return {
    claim,

    async complete(accountId, key, response) {
      const rows = await sql.query(
        `UPDATE idempotency_keys SET status_code = $3, response_body = $4, completed_at = now()
          WHERE account_id = $1 AND key = $2 AND status_code IS NULL RETURNING 1`,
        [accountId, key, response.statusCode, response.body],
      );
      return rows.length > 0;
    },

    async abandon(accountId, key) {
      await sql.query(
        'DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status_code IS NULL',
        [accountId, key],
      );
    },

    async purgeExpired(olderThanMs = IDEMPOTENCY_TTL_MS) {
      const [row] = await sql.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM idempotency_keys WHERE created_at < now() - $1::double precision * interval '1 millisecond'
           RETURNING 1
         ) SELECT count(*)::integer AS n FROM gone`,
        [olderThanMs],
      );
      return row?.n ?? 0;
    },
  };
}
