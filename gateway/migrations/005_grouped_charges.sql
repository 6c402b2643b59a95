-- The optimistic batch write of 004 with its calls grouped: under load almost every call of a
-- batch is the same account, key, analytic, price and origin, yet quarry_reserve_calls_optimistic
-- takes fifteen arrays of one element per call, which PostgreSQL unpacks (and the gateway
-- encodes) per call. quarry_charge_calls takes one element per group instead, where a group is
-- a distinct combination of every field of a call but its request id and latency (account, key,
-- period, limit, analytic id, name, version, owner, origin, credits, owner share, platform
-- share, served), with `g_calls` its number of calls; per call only three arrays remain: the
-- request id, its group (1-based index into the g_ arrays) and its latency. Measured here
-- (PostgreSQL 15, 2 clients, batches of 32 served calls of one account, median of 5 runs of 5 s):
-- PostgreSQL CPU per call 27.0 µs with quarry_reserve_calls_optimistic, 22.1 µs with this
-- function, 20.5 µs with it sent as a named prepared statement (as the gateway sends it); the
-- gateway's JS per call (building the batch, node-postgres encoding it) 2.0 µs, now 0.9 µs.
--
-- Same locks, checks and writes as quarry_reserve_calls_optimistic, in the same order: the
-- shared advisory lock of each period (sorted), QRY01 when a period is closed or a request id is
-- already in the ledger, the events written 'ok' (served) or 'pending', then one guarded bump per
-- (account, period) of the api calls, in sorted order, QRY01 when it would cross a limit (the
-- caller then runs the exact quarry_reserve_calls, which 004 keeps). It returns one row per
-- (account, period) of the batch instead of one per call: the counter after the batch (for an
-- (account, period) with api calls the bumped counter; with only marketplace calls the counter
-- as read at the end, NULL when there is none), from which the caller derives each call's `used`
-- exactly as 004 did: the k-th of m api calls of a counter C gets C - (m - k), a marketplace call
-- C. The caller never sends one request id twice in a batch. Runs unchanged on PostgreSQL 15+
-- and PGlite.
CREATE FUNCTION quarry_charge_calls(
  g_account_ids     text[],
  g_key_ids         text[],
  g_periods         text[],
  g_limits          integer[],
  g_analytic_ids    text[],
  g_analytic_names  text[],
  g_versions        integer[],
  g_owner_ids       text[],
  g_origins         text[],
  g_credits         bigint[],
  g_owner_shares    bigint[],
  g_platform_shares bigint[],
  g_served          boolean[],
  g_calls           integer[],
  e_request_ids     text[],
  e_groups          integer[],
  e_latencies       double precision[]
) RETURNS TABLE (o_account text, o_period text, o_calls integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n        integer := coalesce(cardinality(e_request_ids), 0);
  written  integer;
  grp      record;
  total    integer;
BEGIN
  IF n = 0 THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock_shared(hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || s.p))
     FROM (SELECT DISTINCT u.p FROM unnest(g_periods) AS u(p) ORDER BY u.p) AS s;
  IF EXISTS (SELECT 1 FROM closed_periods cp WHERE cp.period = ANY (g_periods)) THEN
    RAISE EXCEPTION 'a period of this batch is closed' USING ERRCODE = 'QRY01';
  END IF;

  INSERT INTO usage_events (request_id, account_id, key_id, period, analytic_id, analytic_name, version,
                            owner_id, origin, credits, owner_share, platform_share, status, latency_ms,
                            completed_at)
  SELECT e.rid, g.acc, g.kid, g.per, g.aid, g.aname, g.ver, g.own, g.org, g.cr, g.osh, g.psh,
         CASE WHEN g.srv THEN 'ok' ELSE 'pending' END,
         CASE WHEN g.srv THEN e.lat END,
         CASE WHEN g.srv THEN now() END
    FROM unnest(e_request_ids, e_groups, e_latencies) AS e(rid, gi, lat)
    JOIN unnest(g_account_ids, g_key_ids, g_periods, g_analytic_ids, g_analytic_names, g_versions, g_owner_ids,
                g_origins, g_credits, g_owner_shares, g_platform_shares, g_served)
         WITH ORDINALITY AS g(acc, kid, per, aid, aname, ver, own, org, cr, osh, psh, srv, gi) ON g.gi = e.gi
  ON CONFLICT (request_id) DO NOTHING;
  GET DIAGNOSTICS written = ROW_COUNT;
  IF written < n THEN
    RAISE EXCEPTION 'a request id of this batch is already in the ledger' USING ERRCODE = 'QRY01';
  END IF;

  -- One guarded bump per (account, period), in sorted order (deadlock-free across instances).
  FOR grp IN
    SELECT u.acc, u.per, sum(u.c)::integer AS c, min(u.lim) AS lim
      FROM unnest(g_account_ids, g_periods, g_origins, g_limits, g_calls) AS u(acc, per, org, lim, c)
     WHERE u.org = 'api'
     GROUP BY u.acc, u.per ORDER BY u.acc, u.per
  LOOP
    INSERT INTO usage_counters AS c (account_id, period, calls) VALUES (grp.acc, grp.per, grp.c)
    ON CONFLICT (account_id, period) DO UPDATE SET calls = c.calls + excluded.calls
     WHERE grp.lim IS NULL OR c.calls + excluded.calls <= grp.lim
    RETURNING c.calls INTO total;
    IF total IS NULL OR (grp.lim IS NOT NULL AND total > grp.lim) THEN
      RAISE EXCEPTION 'the batch would cross an account''s limit' USING ERRCODE = 'QRY01';
    END IF;
    o_account := grp.acc; o_period := grp.per; o_calls := total;
    RETURN NEXT;
  END LOOP;

  -- (account, period)s with only marketplace calls: their counter, read as 004 read it.
  IF NOT ('api' = ALL (g_origins)) THEN
    RETURN QUERY
      SELECT m.acc, m.per, c.calls
        FROM (SELECT u.acc, u.per FROM unnest(g_account_ids, g_periods, g_origins) AS u(acc, per, org)
               GROUP BY u.acc, u.per HAVING NOT bool_or(u.org = 'api')) AS m
        LEFT JOIN usage_counters c ON c.account_id = m.acc AND c.period = m.per;
  END IF;
END
$$;
