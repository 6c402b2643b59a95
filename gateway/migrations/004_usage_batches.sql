-- Group-committed metering: one call of this function reserves (or, for calls already answered
-- from the cache, reserves and finalises) a whole batch of calls in ONE round trip and one
-- transaction, deciding each call exactly as a single reservation would, in array order:
--   'ok'              reserved (or served) and counted,
--   'replayed'        this request id is already in the ledger for this account: nothing counted,
--   'conflict'        this request id belongs to another account,
--   'period_closed'   the billing period is closed,
--   'quota_exceeded'  the account's counter has reached its limit.
-- `used` is the account's counter for the call's period after the decision.
--
-- Locks, in a fixed order so that batches of several instances never deadlock: the shared
-- advisory lock of each period (sorted; closing a period takes it exclusively), then the
-- counters of the batch's (account, period) pairs FOR UPDATE in sorted order. Each statement
-- of a VOLATILE function takes a fresh snapshot under READ COMMITTED, so the closed-period check
-- runs after its lock is held.
--
-- The caller never sends one request id twice in a batch. Runs unchanged on PostgreSQL 15+ and
-- PGlite.
CREATE FUNCTION quarry_reserve_calls(
  p_request_ids     text[],
  p_account_ids     text[],
  p_key_ids         text[],
  p_periods         text[],
  p_limits          integer[],
  p_analytic_ids    text[],
  p_analytic_names  text[],
  p_versions        integer[],
  p_owner_ids       text[],
  p_origins         text[],
  p_credits         bigint[],
  p_owner_shares    bigint[],
  p_platform_shares bigint[],
  p_served          boolean[],
  p_latencies       double precision[]
) RETURNS TABLE (ord integer, outcome text, used integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n          integer := coalesce(cardinality(p_request_ids), 0);
  closed     text[];
  c_keys     text[];
  c_calls    integer[];
  ex_ids     text[];
  ex_owners  text[];
  -- Per call, indexed by its position (fixed-width arrays: O(1) subscripts; a text array's
  -- subscript walks the array, so text arrays are only ever read in order, through unnest).
  admit      boolean[] := array_fill(false, ARRAY[n]);
  r_code     smallint[] := array_fill(0::smallint, ARRAY[n]);
  r_used     integer[] := array_fill(0, ARRAY[n]);
  admitted   integer := 0;
  inserted   text[];
  item       record;
  k          integer;
  pos        integer;
  cnt        integer;
BEGIN
  IF n = 0 THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock_shared(hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || s.p))
     FROM (SELECT DISTINCT u.p FROM unnest(p_periods) AS u(p) ORDER BY u.p) AS s;

  closed := ARRAY(SELECT cp.period::text FROM closed_periods cp WHERE cp.period = ANY (p_periods));

  INSERT INTO usage_counters (account_id, period, calls)
  SELECT DISTINCT u.a, u.p, 0 FROM unnest(p_account_ids, p_periods) AS u(a, p) ORDER BY u.a, u.p
  ON CONFLICT (account_id, period) DO NOTHING;

  SELECT array_agg(l.account_id || ' ' || l.period ORDER BY l.account_id, l.period),
         array_agg(l.calls ORDER BY l.account_id, l.period)
    INTO c_keys, c_calls
    FROM (SELECT c.account_id, c.period, c.calls
            FROM usage_counters c
            JOIN (SELECT DISTINCT u.a, u.p FROM unnest(p_account_ids, p_periods) AS u(a, p)) AS w
              ON c.account_id = w.a AND c.period = w.p
           ORDER BY c.account_id, c.period
             FOR UPDATE OF c) AS l;

  SELECT coalesce(array_agg(e.request_id), '{}'), coalesce(array_agg(e.account_id), '{}')
    INTO ex_ids, ex_owners
    FROM usage_events e WHERE e.request_id = ANY (p_request_ids);

  -- Codes: 1 ok, 2 replayed, 3 conflict, 4 period_closed, 5 quota_exceeded.
  FOR item IN
    SELECT u.rid, u.acc, u.per, u.lim, u.org, u.i
      FROM unnest(p_request_ids, p_account_ids, p_periods, p_limits, p_origins)
           WITH ORDINALITY AS u(rid, acc, per, lim, org, i)
  LOOP
    k := array_position(c_keys, item.acc || ' ' || item.per);
    cnt := c_calls[k];
    pos := array_position(ex_ids, item.rid);
    IF pos IS NOT NULL THEN
      r_code[item.i] := CASE WHEN ex_owners[pos] = item.acc THEN 2 ELSE 3 END;
    ELSIF item.per = ANY (closed) THEN
      r_code[item.i] := 4;
    ELSIF item.org = 'api' AND item.lim IS NOT NULL AND cnt >= item.lim THEN
      r_code[item.i] := 5;
    ELSE
      IF item.org = 'api' THEN
        cnt := cnt + 1;
        c_calls[k] := cnt;
      END IF;
      r_code[item.i] := 1;
      admit[item.i] := true;
      admitted := admitted + 1;
    END IF;
    r_used[item.i] := cnt;
  END LOOP;

  IF admitted > 0 THEN
    -- ON CONFLICT: another instance wrote the same request id since we looked (a client's retry
    -- racing its first attempt); only rows really inserted are counted.
    WITH ins AS (
      INSERT INTO usage_events (request_id, account_id, key_id, period, analytic_id, analytic_name, version,
                                owner_id, origin, credits, owner_share, platform_share, status, latency_ms,
                                completed_at)
      SELECT u.rid, u.acc, u.kid, u.per, u.aid, u.aname, u.ver, u.own, u.org, u.cr, u.osh, u.psh,
             CASE WHEN u.srv THEN 'ok' ELSE 'pending' END,
             CASE WHEN u.srv THEN u.lat END,
             CASE WHEN u.srv THEN now() END
        FROM unnest(p_request_ids, p_account_ids, p_key_ids, p_periods, p_analytic_ids, p_analytic_names,
                    p_versions, p_owner_ids, p_origins, p_credits, p_owner_shares, p_platform_shares,
                    p_served, p_latencies)
             WITH ORDINALITY AS u(rid, acc, kid, per, aid, aname, ver, own, org, cr, osh, psh, srv, lat, i)
       WHERE admit[u.i]
      ON CONFLICT (request_id) DO NOTHING
      RETURNING usage_events.request_id, usage_events.account_id, usage_events.period, usage_events.origin
    ), counted AS (
      UPDATE usage_counters c SET calls = c.calls + x.n
        FROM (SELECT ins.account_id, ins.period, count(*)::integer AS n FROM ins
               WHERE ins.origin = 'api' GROUP BY ins.account_id, ins.period) AS x
       WHERE c.account_id = x.account_id AND c.period = x.period
      RETURNING 1
    )
    SELECT coalesce(array_agg(ins.request_id), '{}') INTO inserted FROM ins;
    IF cardinality(inserted) < admitted THEN
      FOR item IN SELECT u.rid, u.i FROM unnest(p_request_ids) WITH ORDINALITY AS u(rid, i) LOOP
        IF admit[item.i] AND NOT (item.rid = ANY (inserted)) THEN r_code[item.i] := 2; END IF;
      END LOOP;
    END IF;
  END IF;

  RETURN QUERY
    SELECT g.i::integer,
           (ARRAY['ok', 'replayed', 'conflict', 'period_closed', 'quota_exceeded'])[r_code[g.i]],
           r_used[g.i]
      FROM generate_series(1, n) AS g(i);
END
$$;

-- The optimistic variant for the common case, an account far from its limit: the events are
-- written first, without any counter lock, and each account's counter is bumped by its batch in
-- one final UPDATE guarded by the limit, so the counter row is locked only for that statement and
-- the commit. Several batches of one account then overlap instead of queueing behind each
-- other's inserts. When the guard fails, a period is closed, or a request id is already in the
-- ledger, it raises SQLSTATE QRY01 and the transaction rolls back: the caller then runs the exact
-- quarry_reserve_calls on the batch. Same arguments and result.
CREATE FUNCTION quarry_reserve_calls_optimistic(
  p_request_ids     text[],
  p_account_ids     text[],
  p_key_ids         text[],
  p_periods         text[],
  p_limits          integer[],
  p_analytic_ids    text[],
  p_analytic_names  text[],
  p_versions        integer[],
  p_owner_ids       text[],
  p_origins         text[],
  p_credits         bigint[],
  p_owner_shares    bigint[],
  p_platform_shares bigint[],
  p_served          boolean[],
  p_latencies       double precision[]
) RETURNS TABLE (ord integer, outcome text, used integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n        integer := coalesce(cardinality(p_request_ids), 0);
  written  integer;
  grp      record;
  total    integer;
BEGIN
  IF n = 0 THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock_shared(hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || s.p))
     FROM (SELECT DISTINCT u.p FROM unnest(p_periods) AS u(p) ORDER BY u.p) AS s;
  IF EXISTS (SELECT 1 FROM closed_periods cp WHERE cp.period = ANY (p_periods)) THEN
    RAISE EXCEPTION 'a period of this batch is closed' USING ERRCODE = 'QRY01';
  END IF;

  INSERT INTO usage_events (request_id, account_id, key_id, period, analytic_id, analytic_name, version,
                            owner_id, origin, credits, owner_share, platform_share, status, latency_ms,
                            completed_at)
  SELECT u.rid, u.acc, u.kid, u.per, u.aid, u.aname, u.ver, u.own, u.org, u.cr, u.osh, u.psh,
         CASE WHEN u.srv THEN 'ok' ELSE 'pending' END,
         CASE WHEN u.srv THEN u.lat END,
         CASE WHEN u.srv THEN now() END
    FROM unnest(p_request_ids, p_account_ids, p_key_ids, p_periods, p_analytic_ids, p_analytic_names,
                p_versions, p_owner_ids, p_origins, p_credits, p_owner_shares, p_platform_shares,
                p_served, p_latencies)
         AS u(rid, acc, kid, per, aid, aname, ver, own, org, cr, osh, psh, srv, lat)
  ON CONFLICT (request_id) DO NOTHING;
  GET DIAGNOSTICS written = ROW_COUNT;
  IF written < n THEN
    RAISE EXCEPTION 'a request id of this batch is already in the ledger' USING ERRCODE = 'QRY01';
  END IF;

  -- One guarded bump per (account, period), in sorted order (deadlock-free across instances).
  FOR grp IN
    SELECT u.acc, u.per, count(*)::integer AS calls, min(u.lim) AS lim
      FROM unnest(p_account_ids, p_periods, p_origins, p_limits) AS u(acc, per, org, lim)
     WHERE u.org = 'api'
     GROUP BY u.acc, u.per ORDER BY u.acc, u.per
  LOOP
    INSERT INTO usage_counters AS c (account_id, period, calls) VALUES (grp.acc, grp.per, grp.calls)
    ON CONFLICT (account_id, period) DO UPDATE SET calls = c.calls + excluded.calls
     WHERE grp.lim IS NULL OR c.calls + excluded.calls <= grp.lim
    RETURNING c.calls INTO total;
    IF total IS NULL OR (grp.lim IS NOT NULL AND total > grp.lim) THEN
      RAISE EXCEPTION 'the batch would cross an account''s limit' USING ERRCODE = 'QRY01';
    END IF;
  END LOOP;

  -- `used` per call: its account's counter right after the call was counted.
  RETURN QUERY
    WITH items AS (
      SELECT u.i::integer AS i, u.acc, u.per, u.org,
             row_number() OVER (PARTITION BY u.acc, u.per, u.org = 'api' ORDER BY u.i) AS k,
             count(*) OVER (PARTITION BY u.acc, u.per, u.org = 'api') AS m
        FROM unnest(p_account_ids, p_periods, p_origins) WITH ORDINALITY AS u(acc, per, org, i)
    )
    SELECT items.i, 'ok'::text,
           CASE WHEN items.org = 'api' THEN c.calls - (items.m - items.k)::integer ELSE c.calls END
      FROM items
      LEFT JOIN usage_counters c ON c.account_id = items.acc AND c.period = items.per
     ORDER BY items.i;
END
$$;

-- The ledger is the hottest table: every served call appends a row. Its three foreign keys
-- checked (and share-locked) the referenced account, owner and analytic rows for every event,
-- which measured 2.3× the cost of the insert itself (3,000 events: 86 ms with them, 33–40 ms
-- without, PostgreSQL 15 on this machine). Those rows are never deleted (analytics and accounts
-- are retired with deleted_at / closed_at), and events are written only by the two functions
-- above, from ids the gateway has just resolved; the ledger keeps its CHECK constraints.
ALTER TABLE usage_events
  DROP CONSTRAINT usage_events_account_id_fkey,
  DROP CONSTRAINT usage_events_owner_id_fkey,
  DROP CONSTRAINT usage_events_analytic_id_fkey;
