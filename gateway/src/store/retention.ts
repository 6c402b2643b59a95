// Pruning of the tables that only grow: the change log (cross-instance invalidations, read within
// seconds by every instance's feed; older rows serve nobody), console sessions that expired or
// were signed out, and what keeps pinned analytic versions (migration 024): expired pins, and
// pinned calls older than the 30 days that count (a deploy prunes its own analytic's too). Every instance runs it on a timer (create-gateway.ts); a DELETE run twice
// deletes once. The newest change-log row is always kept: a starting instance begins its feed
// at it (store/change-feed.ts).
import { VERSION_CALLED_WITHIN_MS } from './analytic-version-repository.js';
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
  /** Expired version pins and pinned-call records past 30 days. */
  readonly versionPins: number;
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
  const [pins] = await sql.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM analytic_version_pins WHERE expires_at <= $1 RETURNING 1
     ), old AS (
       DELETE FROM analytic_version_calls WHERE last_called_at <= $2 RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int + (SELECT count(*) FROM old)::int AS n`,
    [new Date(now), new Date(now - VERSION_CALLED_WITHIN_MS)],
  );
  return { changeLog: changes?.n ?? 0, sessions: sessions?.n ?? 0, versionPins: pins?.n ?? 0 };
}
