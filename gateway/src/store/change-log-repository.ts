// The change log: one row per change other gateway instances must react to (a revoked or
// re-limited key, a new analytic version, a deleted connection). Instances poll for rows past
// the last id they saw (about once a second), which works the same on PGlite and PostgreSQL;
// the id is the only ordering consumers may rely on.
import type { SqlExecutor } from './sql-client.js';

/** What changed: the consumer reloads or evicts the named thing. */
export type ChangeKind =
  | 'key'
  | 'analytic'
  | 'analytic_cache'
  | 'listing'
  | 'connection'
  | 'oauth_client'
  | 'signing_key'
  | 'account_plan'
  | 'agent_tools';

/**
 * One change. `ref` is the key id, the analytic name, the analytic id (`analytic_cache`: its
 * owner dropped its cached answers), the analytic id (`listing`: published, edited or unpublished
 * on the marketplace), the connection id, the OAuth client's id, the kid of the
 * new signing key, or the account id (`account_plan`: its plan changed; `agent_tools`: its agent
 * tools or MCP settings changed).
 */
export interface ChangeEvent {
  readonly id: number;
  readonly kind: ChangeKind;
  readonly ref: string;
  readonly at: Date;
}

/** Options for {@link ChangeLogRepository.since}. */
export interface ChangeQuery {
  readonly limit?: number;
  readonly alsoIds?: readonly number[];
}

/** Reads and appends change-log rows. */
export interface ChangeLogRepository {
  /** Records a change (normally inside the transaction that made it). */
  append(kind: ChangeKind, ref: string): Promise<void>;
  /**
   * Changes with an id above `afterId`, plus those in `alsoIds` (ids a poller skipped because
   * their transactions had not committed yet), oldest first, at most `limit` (default 1000).
   */
  since(afterId: number, options?: ChangeQuery): Promise<readonly ChangeEvent[]>;
  /** The newest id, or 0 when the log is empty: where a starting instance begins polling. */
  latestId(): Promise<number>;
}

/** Builds the change-log repository over `sql`. */
export function createChangeLogRepository(sql: SqlExecutor): ChangeLogRepository {
  return {
    async append(kind, ref) {
      await sql.query('INSERT INTO change_log (kind, ref) VALUES ($1, $2)', [kind, ref]);
    },
    since(afterId, options = {}) {
      return sql.query<ChangeEvent>(
        'SELECT id, kind, ref, at FROM change_log WHERE id > $1 OR id = ANY ($3::bigint[]) ORDER BY id LIMIT $2',
        [afterId, options.limit ?? 1000, [...(options.alsoIds ?? [])]],
      );
    },
    async latestId() {
      const [row] = await sql.query<{ id: number | null }>('SELECT max(id) AS id FROM change_log');
      return row?.id ?? 0;
    },
  };
}
