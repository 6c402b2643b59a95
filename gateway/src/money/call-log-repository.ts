// An account's recent calls (GET /v1/account/calls): its served calls from the usage ledger and
// its failed calls (failed_calls: free, never charged), merged newest first and paged by a keyset
// on (time, request id). Read only. Each side is read by its (account, time) index (migration
// 022) and the ledger side names its months (as the partition key's type, bpchar: compared as
// text, nothing would be pruned) so the other partitions are skipped.
// Calls refused before any work (401, 403, 429, 400) are stored nowhere and never appear.
import type { SqlExecutor } from '../store/sql-client.js';
import { periodOf } from './billing-period.js';
import type { UsageOrigin } from './revenue-split.js';

/** Which calls to list: every one, the served ones, the failed ones, or those failed with a code. */
export type CallStatusFilter = 'ok' | 'failed' | { readonly code: string };

/** Where a page starts: strictly older than this call. */
export interface CallCursor {
  /** The call's time, as the database holds it (ISO 8601 with microseconds, UTC). */
  readonly at: string;
  readonly requestId: string;
}

export interface CallListQuery {
  readonly accountId: string;
  /** Calls at or after this time only. */
  readonly since: Date;
  /** Calls up to this time (the months between `since` and `until` are read). */
  readonly until: Date;
  readonly analytic?: string;
  readonly status?: CallStatusFilter;
  readonly limit: number;
  readonly before?: CallCursor;
}

/** One call of the listing. */
export interface CallRecord {
  readonly requestId: string;
  readonly analytic: string;
  /** The analytic's version that served the call (not recorded for failed calls). */
  readonly version: number | null;
  /** `ok`, or the error code the caller got. */
  readonly status: string;
  readonly millicredits: number;
  /** Served: the call's latency; failed: how long it waited on the warehouse. */
  readonly latencyMs: number | null;
  /** Served calls only (failed calls have none). */
  readonly origin: UsageOrigin | null;
  /** When the call was reserved (served) or failed, with microseconds: the cursor's time. */
  readonly at: string;
}

export interface CallLogRepository {
  /** Up to `limit` calls of the account, newest first (time, then request id, descending). */
  list(query: CallListQuery): Promise<readonly CallRecord[]>;
}

/** The months (`YYYY-MM`, UTC) from `since`'s to `until`'s, inclusive. */
export function periodsBetween(since: Date, until: Date): string[] {
  const out: string[] = [];
  const d = new Date(Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), 1));
  const last = periodOf(until);
  for (let i = 0; i < 24; i++) {
    const p = periodOf(d);
    out.push(p);
    if (p >= last) break;
    d.setUTCMonth(d.getUTCMonth() + 1);
  }
  return out;
}

const AT = `to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

interface Row {
  readonly request_id: string;
  readonly analytic: string;
  readonly version: number | null;
  readonly status: string;
  readonly millicredits: number | string;
  readonly latency_ms: number | string | null;
  readonly origin: UsageOrigin | null;
  readonly at: string;
}

export function createCallLogRepository(sql: SqlExecutor): CallLogRepository {
  return {
    async list(q) {
      const params: unknown[] = [q.accountId, q.since, q.limit];
      const param = (v: unknown) => {
        params.push(v);
        return `$${params.length}`;
      };
      const branches: string[] = [];
      const status = q.status;
      const analytic = q.analytic === undefined ? undefined : param(q.analytic);
      const keyset = (time: string) =>
        q.before === undefined
          ? ''
          : ` AND (${time}, request_id) < (${param(q.before.at)}::timestamptz, ${param(q.before.requestId)})`;
      if (status === undefined || status === 'ok') {
        const periods = param(periodsBetween(q.since, q.until));
        branches.push(
          `(SELECT request_id, analytic_name AS analytic, version, 'ok'::text AS status, millicredits,
                   latency_ms, origin, reserved_at AS t
              FROM usage_events
             WHERE account_id = $1 AND period = ANY(${periods}::bpchar[]) AND reserved_at >= $2
               AND status = 'ok'${analytic === undefined ? '' : ` AND analytic_name = ${analytic}`}${keyset('reserved_at')}
             ORDER BY reserved_at DESC, request_id DESC LIMIT $3)`,
        );
      }
      if (status === undefined || status === 'failed' || typeof status === 'object') {
        const code = typeof status === 'object' ? ` AND code = ${param(status.code)}` : '';
        branches.push(
          `(SELECT request_id, analytic_name AS analytic, NULL::integer AS version, code AS status,
                   0::bigint AS millicredits, warehouse_ms::double precision AS latency_ms,
                   NULL::text AS origin, failed_at AS t
              FROM failed_calls
             WHERE account_id = $1 AND failed_at >= $2${code}${analytic === undefined ? '' : ` AND analytic_name = ${analytic}`}${keyset('failed_at')}
             ORDER BY failed_at DESC, request_id DESC LIMIT $3)`,
        );
      }
      const rows = await sql.query<Row>(
        `SELECT request_id, analytic, version, status, millicredits, latency_ms, origin,
                ${AT.replace('%s', 'c.t')} AS at
           FROM (${branches.join(' UNION ALL ')}) c
          ORDER BY c.t DESC, c.request_id DESC LIMIT $3`,
        params,
      );
      return rows.map((r) => ({
        requestId: r.request_id,
        analytic: r.analytic,
        version: r.version === null ? null : Number(r.version),
        status: r.status,
        millicredits: Number(r.millicredits),
        latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
        origin: r.origin,
        at: r.at,
      }));
    },
  };
}
