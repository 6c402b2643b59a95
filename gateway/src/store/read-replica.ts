// The heavy readers' store client (QUARRY_READ_DATABASE_URL): owners' statements, usage and
// recent-calls pages and the marketplace read through a read replica's pool, so they take no CPU
// from the primary that meters calls. Nothing written goes here: the gateway builds only its
// read-only pages' repositories on this client (create-gateway.ts), every write, money decision,
// authentication and the close stay on the primary.
//
// While the replica does not answer, its reads go to the primary instead: a read is safe to run
// twice. The first failure marks the replica down (told once, `onDown`); for `retryAfterMs`
// reads then go straight to the primary without waiting on the replica again, after which the
// next read (or a readiness probe, `check`) tries it again, and the first success marks it up.
// A read the replica cancelled because it conflicted with replaying the primary's changes
// (SQLSTATE 40001 on a hot standby) is run again on the primary without marking it down.
import { isStoreUnavailable } from '../errors/store-error.js';
import type { SqlClient, SqlClientStats, SqlExecutor } from './sql-client.js';

/** After a failure, how long reads skip the replica before trying it again. */
const RETRY_AFTER_MS = 5_000;
/**
 * The longest a readiness probe waits for the replica: /readyz must answer within a proxy's check
 * interval (HAProxy's `inter 2s` in docs/deploy.md) even when the replica is blackholed.
 */
const CHECK_MS = 1_000;

/** Options for {@link createReadReplica}. */
export interface ReadReplicaOptions {
  /** The replica's pool (read-only: a role that may only SELECT is enough). */
  readonly replica: SqlClient;
  /** Where reads go while the replica is down. */
  readonly primary: SqlExecutor;
  /** The replica stopped answering: called once per outage, with the failure. */
  readonly onDown?: (error: unknown) => void;
  /** The replica answers again after an outage. */
  readonly onUp?: () => void;
  /** After a failure, how long reads go straight to the primary (default 5,000 ms). */
  readonly retryAfterMs?: number;
  readonly now?: () => number;
}

/** The replica as /metrics shows it. */
export interface ReadReplicaStats {
  /** True while reads go to the primary because the replica does not answer. */
  readonly down: boolean;
  /** Reads the primary served in the replica's stead since start. */
  readonly fallbacks: number;
  /** The replica pool's figures. */
  readonly pool: SqlClientStats | undefined;
}

/** A read-only {@link SqlClient} on the replica that falls back to the primary. */
export interface ReadReplica extends SqlClient {
  /**
   * Whether the replica answers `SELECT 1` within `boundMs` (default 1,000 ms); marks it down or up
   * accordingly. While it is down and not yet due for another try, false without asking it.
   */
  check(boundMs?: number): Promise<boolean>;
  replicaStats(): ReadReplicaStats;
}

/** PostgreSQL cancelled a standby's statement that conflicted with recovery. */
function isRecoveryConflict(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '40001';
}

/** Reads through `replica`, through `primary` while the replica does not answer. */
export function createReadReplica(options: ReadReplicaOptions): ReadReplica {
  const { replica, primary } = options;
  const retryAfterMs = options.retryAfterMs ?? RETRY_AFTER_MS;
  const now = options.now ?? Date.now;
  let down = false;
  let retryAt = 0;
  let fallbacks = 0;

  const markDown = (error: unknown) => {
    retryAt = now() + retryAfterMs;
    if (down) return;
    down = true;
    options.onDown?.(error);
  };
  const markUp = () => {
    if (!down) return;
    down = false;
    options.onUp?.();
  };

  const read = async <T>(fn: (sql: SqlExecutor) => Promise<T>): Promise<T> => {
    if (down && now() < retryAt) {
      fallbacks += 1;
      return fn(primary);
    }
    try {
      const result = await fn(replica);
      markUp();
      return result;
    } catch (error) {
      if (isStoreUnavailable(error)) markDown(error);
      else if (!isRecoveryConflict(error)) throw error;
      fallbacks += 1;
      return fn(primary);
    }
  };

  return {
    kind: replica.kind,
    query: (sql, params, queryOptions) => read((c) => c.query(sql, params, queryOptions)),
    exec: (script) => read((c) => c.exec(script)),
    transaction: (fn) => read((c) => c.transaction(fn)),
    async check(boundMs = CHECK_MS) {
      if (down && now() < retryAt) return false;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          markDown(new Error(`the read replica did not answer SELECT 1 within ${boundMs} ms`));
          resolve(false);
        }, boundMs);
      });
      const probe = replica.query('SELECT 1').then(
        () => {
          markUp();
          return true;
        },
        (error: unknown) => {
          markDown(error);
          return false;
        },
      );
      try {
        return await Promise.race([probe, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    replicaStats: () => ({ down, fallbacks, pool: replica.stats?.() }),
    close: () => replica.close(),
  };
}
