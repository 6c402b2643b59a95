// Tests' check that the day rollups (migration 017) equal the raw ledger to the unit: every
// (owner | account, period, day, analytic, plan, origin) sum of the served events against its
// rollup row, both ways. An empty result means they agree.

/** One disagreement: which rollup, its key, and the two sums as text (raw | rollup). */
export interface LedgerDrift {
  readonly rollup: 'owner' | 'account' | 'callers' | 'caller_days';
  readonly key: string;
  readonly raw: string | null;
  readonly rolled: string | null;
}

const OWNER_SUMS = `calls || ' ' || millicredits || ' ' || owner_millicredits || ' ' || platform_millicredits
                    || ' ' || value_musd || ' ' || owner_musd || ' ' || platform_musd`;
const ACCOUNT_SUMS = `calls || ' ' || millicredits || ' ' || value_musd || ' ' || owner_musd || ' ' || platform_musd`;
const RAW_OWNER = `SELECT owner_id || ' ' || period || ' ' || day || ' ' || analytic_id || ' ' || analytic_name || ' '
                          || plan || ' ' || origin AS key, ${OWNER_SUMS} AS sums
                     FROM (SELECT owner_id, period, (reserved_at AT TIME ZONE 'UTC')::date AS day, analytic_id,
                                  analytic_name, coalesce(plan, '') AS plan, origin, count(*) AS calls,
                                  sum(millicredits) AS millicredits, sum(owner_millicredits) AS owner_millicredits,
                                  sum(platform_millicredits) AS platform_millicredits, sum(value_musd) AS value_musd,
                                  sum(owner_musd) AS owner_musd, sum(platform_musd) AS platform_musd
                             FROM %S.usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7) r`;
const ROLLED_OWNER = `SELECT owner_id || ' ' || period || ' ' || day || ' ' || analytic_id || ' ' || analytic_name || ' '
                             || plan || ' ' || origin AS key, ${OWNER_SUMS} AS sums FROM %S.usage_owner_days`;
const RAW_ACCOUNT = `SELECT account_id || ' ' || period || ' ' || day || ' ' || analytic_id || ' ' || analytic_name || ' '
                            || owner_id || ' ' || plan || ' ' || origin AS key, ${ACCOUNT_SUMS} AS sums
                       FROM (SELECT account_id, period, (reserved_at AT TIME ZONE 'UTC')::date AS day, analytic_id,
                                    analytic_name, owner_id, coalesce(plan, '') AS plan, origin, count(*) AS calls,
                                    sum(millicredits) AS millicredits, sum(value_musd) AS value_musd,
                                    sum(owner_musd) AS owner_musd, sum(platform_musd) AS platform_musd
                               FROM %S.usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7, 8) r`;
const ROLLED_ACCOUNT = `SELECT account_id || ' ' || period || ' ' || day || ' ' || analytic_id || ' ' || analytic_name || ' '
                               || owner_id || ' ' || plan || ' ' || origin AS key, ${ACCOUNT_SUMS} AS sums
                          FROM %S.usage_account_days`;

// Each paying caller's last paid day per analytic, and how many callers' last day each day is.
const RAW_CALLERS = `SELECT analytic_id || ' ' || account_id AS key, max((reserved_at AT TIME ZONE 'UTC')::date)::text AS day
                       FROM %S.usage_events WHERE status = 'ok' AND origin = 'paid' AND account_id <> owner_id
                      GROUP BY analytic_id, account_id`;
const ROLLED_CALLERS = `SELECT analytic_id || ' ' || account_id AS key, last_day::text AS day FROM %S.usage_analytic_callers`;
const RAW_CALLER_DAYS = `SELECT analytic_id || ' ' || last_day AS key, count(*)::text AS n FROM %S.usage_analytic_callers
                          GROUP BY analytic_id, last_day`;
const ROLLED_CALLER_DAYS = `SELECT analytic_id || ' ' || day AS key, callers::text AS n FROM %S.usage_analytic_caller_days
                             WHERE callers > 0`;

/**
 * The query listing every disagreement in `schema` (or the current schema when omitted). Only
 * valid while the raw events of every month with rollups are still kept.
 */
export function ledgerDriftSql(schema?: string): string {
  const s = (q: string) => q.replaceAll('%S.', schema === undefined ? '' : `${schema}.`);
  return `SELECT 'owner' AS rollup, coalesce(a.key, b.key) AS key, a.sums AS raw, b.sums AS rolled
            FROM (${s(RAW_OWNER)}) a FULL JOIN (${s(ROLLED_OWNER)}) b ON a.key = b.key
           WHERE a.sums IS DISTINCT FROM b.sums
          UNION ALL
          SELECT 'account', coalesce(a.key, b.key), a.sums, b.sums
            FROM (${s(RAW_ACCOUNT)}) a FULL JOIN (${s(ROLLED_ACCOUNT)}) b ON a.key = b.key
           WHERE a.sums IS DISTINCT FROM b.sums
          UNION ALL
          SELECT 'callers', coalesce(a.key, b.key), a.day, b.day
            FROM (${s(RAW_CALLERS)}) a FULL JOIN (${s(ROLLED_CALLERS)}) b ON a.key = b.key
           WHERE a.day IS DISTINCT FROM b.day
          UNION ALL
          SELECT 'caller_days', coalesce(a.key, b.key), a.n, b.n
            FROM (${s(RAW_CALLER_DAYS)}) a FULL JOIN (${s(ROLLED_CALLER_DAYS)}) b ON a.key = b.key
           WHERE a.n IS DISTINCT FROM b.n`;
}
