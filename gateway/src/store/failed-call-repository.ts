// Failed calls that ran in an owner's warehouse (timeouts, results too large, warehouse errors):
// free for their callers, recorded so the owner's statement shows who keeps its warehouse busy
// for nothing (docs/security.md). Kept apart from the ledger of charged calls: no money here.
import type { SqlExecutor } from './sql-client.js';

/** One failed call, as the query pipeline records it. */
export interface FailedCall {
  readonly requestId: string;
  readonly ownerId: string;
  readonly analyticId: string;
  readonly analyticName: string;
  /** The calling account. */
  readonly accountId: string;
  /** The error code the caller got (QUERY_TIMEOUT, RESULT_TOO_LARGE, UPSTREAM_ERROR). */
  readonly code: string;
  /** How long the call waited on the warehouse before it failed. */
  readonly warehouseMs: number;
}

/** An owner's failed calls in a period, per caller and analytic. */
export interface FailedCallsByCaller {
  readonly accountId: string;
  readonly analyticName: string;
  readonly calls: number;
  readonly callsByCode: Readonly<Record<string, number>>;
  readonly warehouseMs: number;
}

export interface FailedCallRepository {
  /** Records one failed call (a retried record of the same request id is ignored). */
  record(call: FailedCall): Promise<void>;
  /** The owner's failed calls from `from` (inclusive) to `to` (exclusive), most warehouse time first. */
  byCaller(ownerId: string, from: Date, to: Date): Promise<readonly FailedCallsByCaller[]>;
}

export function createFailedCallRepository(sql: SqlExecutor): FailedCallRepository {
  return {
    async record(call) {
      await sql.query(
        `INSERT INTO failed_calls (request_id, owner_id, analytic_id, analytic_name, account_id, code, warehouse_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (request_id) DO NOTHING`,
        [
          call.requestId,
          call.ownerId,
          call.analyticId,
          call.analyticName,
          call.accountId,
          call.code,
          Math.max(0, Math.round(call.warehouseMs)),
        ],
      );
    },

    async byCaller(ownerId, from, to) {
      const rows = await sql.query<{
        readonly account_id: string;
        readonly analytic_name: string;
        readonly code: string;
        readonly calls: number | string;
        readonly warehouse_ms: number | string;
      }>(
        `SELECT account_id, analytic_name, code, count(*)::int AS calls, sum(warehouse_ms)::bigint AS warehouse_ms
           FROM failed_calls
          WHERE owner_id = $1 AND failed_at >= $2 AND failed_at < $3
          GROUP BY account_id, analytic_name, code`,
        [ownerId, from, to],
      );
      const byKey = new Map<
        string,
        {
          accountId: string;
          analyticName: string;
          calls: number;
          callsByCode: Record<string, number>;
          warehouseMs: number;
        }
      >();
      for (const row of rows) {
        const key = `${row.account_id}\n${row.analytic_name}`;
        let entry = byKey.get(key);
        if (entry === undefined) {
          entry = {
            accountId: row.account_id,
            analyticName: row.analytic_name,
            calls: 0,
            callsByCode: {},
            warehouseMs: 0,
          };
          byKey.set(key, entry);
        }
        entry.calls += Number(row.calls);
        entry.callsByCode[row.code] = Number(row.calls);
        entry.warehouseMs += Number(row.warehouse_ms);
      }
      return [...byKey.values()].sort(
        (a, b) =>
          b.warehouseMs - a.warehouseMs ||
          a.accountId.localeCompare(b.accountId) ||
          a.analyticName.localeCompare(b.analyticName),
      );
    },
  };
}
