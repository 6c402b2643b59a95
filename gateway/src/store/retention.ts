// Pruning of the tables that only grow: the change log (cross-instance invalidations, read within
// seconds by every instance's feed; older rows serve nobody) and console sessions that expired or
// were signed out. Every instance runs it on a timer (create-gateway.ts); a DELETE run twice
// deletes once. The newest change-log row is always kept: a starting instance begins its feed
// at it (store/change-feed.ts).
import type { SqlExecutor } from './sql-client.js';

export interface RetentionPolicy {
  /** Change-log rows older than this are deleted (QUARRY_CHANGE_LOG_RETENTION_HOURS). */
  readonly changeLogMs: number;
  /** Sessions expired or signed out longer ago than this are deleted (QUARRY_SESSION_RETENTION_DAYS). */
  readonly sessionsMs: number;
}

export interface Pruned {
  readonly changeLog: number;
  readonly sessions: number;
}

/** Deletes what the policy no longer keeps, as of `now`; returns how many rows went. */
export async function pruneStore(
  sql: SqlExecutor,
  policy: RetentionPolicy,
  now = Date.now(),
): Promise<Pruned> {
  const [changes] = await sql.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM change_log
        WHERE at < $1 AND id < (SELECT max(id) FROM change_log)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [new Date(now - policy.changeLogMs)],
  );
  const [sessions] = await sql.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM console_sessions
        WHERE expires_at < $1 OR revoked_at < $1
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [new Date(now - policy.sessionsMs)],
  );
  return { changeLog: changes?.n ?? 0, sessions: sessions?.n ?? 0 };
}
