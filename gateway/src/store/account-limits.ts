// Bounds on what one account may hold (connections, analytics, keys, OAuth clients) and on the
// versions kept per analytic. Strangers sign up in a second, so each of these would otherwise
// grow the control-plane store, and every instance's caches, without end.
//
// A bound is checked and the row inserted in one transaction that first locks the account's
// row: concurrent creations by one account queue on that lock, so no burst of parallel requests
// can overshoot the bound. Other accounts are never blocked.

import { StoreError } from '../errors/store-error.js';
import type { SqlExecutor } from './sql-client.js';

/** The per-account bounds, each with the setting that raises it. */
export interface AccountLimits {
  /** Live (not deleted) warehouse connections. QUARRY_MAX_CONNECTIONS_PER_ACCOUNT. */
  readonly connections: number;
  /**
   * Analytic names held, live or deleted (a deleted name stays its owner's, so deleting and
   * creating again must not evade the bound). QUARRY_MAX_ANALYTICS_PER_ACCOUNT.
   */
  readonly analytics: number;
  /** Versions kept per analytic; older ones are dropped on deploy. QUARRY_MAX_VERSIONS_KEPT. */
  readonly versionsKept: number;
  /** Keys neither revoked nor expired. QUARRY_MAX_KEYS_PER_ACCOUNT. */
  readonly keys: number;
  /** OAuth clients not revoked. QUARRY_MAX_OAUTH_CLIENTS_PER_ACCOUNT. */
  readonly oauthClients: number;
}

export const DEFAULT_ACCOUNT_LIMITS: AccountLimits = {
  connections: 20,
  analytics: 100,
  versionsKept: 50,
  keys: 50,
  oauthClients: 20,
};

/** One bounded kind of row. */
export interface AccountBound {
  /** Plural noun for the message, e.g. "connections". */
  readonly what: string;
  readonly max: number;
  /** The environment variable an operator sets to change it. */
  readonly setting: string;
  /** `SELECT count(*)::int AS n …` over the account's rows, with the account id as `$1`. */
  readonly countSql: string;
}

/**
 * Runs `insert` only while the account holds fewer than `bound.max` such rows; otherwise
 * refuses with a LIMIT store error (409 CONFLICT naming the bound and how to free room).
 */
export function withinAccountBound<T>(
  sql: SqlExecutor,
  accountId: string,
  bound: AccountBound,
  insert: (tx: SqlExecutor) => Promise<T>,
): Promise<T> {
  return sql.transaction(async (tx) => {
    await checkAccountBound(tx, accountId, bound);
    return insert(tx);
  });
}

/**
 * Inside an open transaction: locks the account's row (serialising its creations; a missing
 * account falls through to the insert's own foreign-key error), then refuses when the account
 * already holds `bound.max` rows. `countParams` follow the account id as `$2…`.
 */
export async function checkAccountBound(
  tx: SqlExecutor,
  accountId: string,
  bound: AccountBound,
  countParams: readonly unknown[] = [],
): Promise<void> {
  await tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  const [row] = await tx.query<{ readonly n: number }>(bound.countSql, [accountId, ...countParams]);
  if ((row?.n ?? 0) >= bound.max) {
    throw new StoreError(
      'LIMIT',
      `This account already has ${bound.max} ${bound.what}, the most it may hold. ` +
        `Delete or revoke one first, or ask the operator to raise ${bound.setting}.`,
      { details: [{ field: bound.what, message: `at most ${bound.max} (${bound.setting})` }] },
    );
  }
}
