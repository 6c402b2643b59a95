-- Additive only, like every migration (docs/deploy.md, "Upgrades and rollbacks"): the same
-- quarry_charge_calls (migration 017), with the same arguments, result and errors, whose insert of
-- the batch's events is a plain INSERT instead of INSERT … ON CONFLICT DO NOTHING followed by a
-- count of the rows written. ON CONFLICT makes every row a speculative insertion: the primary key
-- probed before the insert and a second WAL record to confirm it. A duplicate request id (an
-- in-doubt batch retried, docs/money.md) now fails the insert on the primary key, caught here and
-- raised as QRY01 as before, so the caller falls back to the exact path (quarry_reserve_calls),
-- which tells a replay from a conflict. PostgreSQL's CPU per usage event, one writer
-- (gateway/src/money/usage-write.bench.ts, bench/README.md): 18.0–18.5 → 15.8–16.6 µs in batches of
-- 32 calls, 11.7–12.2 → 9.9–10.4 µs in batches of 64.
-- Runs unchanged on PostgreSQL 15+ and PGlite.
CREATE OR REPLACE FUNCTION quarry_charge_calls(
  g_account_ids     text[],
  g_key_ids         text[],
  g_periods         text[],
  g_plans           text[],
  g_limits          bigint[],
  g_budgeted        boolean[],
  g_analytic_ids    text[],
  g_analytic_names  text[],
  g_versions        integer[],
  g_owner_ids       text[],
  g_origins         text[],
  g_millicredits    bigint[],
  g_owner_mc        bigint[],
  g_platform_mc     bigint[],
  g_values          bigint[],
  g_owner_musd      bigint[],
  g_platform_musd   bigint[],
  g_served          boolean[],
  g_calls           integer[],
  e_request_ids     text[],
  e_groups          integer[],
  e_latencies       double precision[],
  p_default_budget  bigint,
  p_budget_cap      bigint
) RETURNS TABLE (o_account text, o_period text, o_mc bigint, o_musd bigint, o_budget bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n        integer := coalesce(cardinality(e_request_ids), 0);
  grp      record;
  t_mc     bigint;
  t_val    bigint;
  bud      bigint;
BEGIN
  IF n = 0 THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock_shared(hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || s.p))
     FROM (SELECT DISTINCT u.p FROM unnest(g_periods) AS u(p) ORDER BY u.p) AS s;
  IF EXISTS (SELECT 1 FROM closed_periods cp WHERE cp.period = ANY (g_periods)) THEN
    RAISE EXCEPTION 'a period of this batch is closed' USING ERRCODE = 'QRY01';
  END IF;

  -- A plain insert: a request id already in the ledger (or twice in the batch) fails on the primary
  -- key and is turned into QRY01, as the ON CONFLICT DO NOTHING and row count of 017 did, without
  -- the speculative insertion (a probe of the key, then a confirmation record) for every event.
  BEGIN
    INSERT INTO usage_events (request_id, account_id, key_id, period, plan, analytic_id, analytic_name, version,
                              owner_id, origin, millicredits, owner_millicredits, platform_millicredits,
                              value_musd, owner_musd, platform_musd, status, latency_ms, completed_at)
    SELECT e.rid, g.acc, g.kid, g.per, g.pl, g.aid, g.aname, g.ver, g.own, g.org, g.cr, g.ocr, g.pcr,
           g.vl, g.ovl, g.pvl,
           CASE WHEN g.srv THEN 'ok' ELSE 'pending' END,
           CASE WHEN g.srv THEN e.lat END,
           CASE WHEN g.srv THEN now() END
      FROM unnest(e_request_ids, e_groups, e_latencies) AS e(rid, gi, lat)
      JOIN unnest(g_account_ids, g_key_ids, g_periods, g_plans, g_analytic_ids, g_analytic_names, g_versions,
                  g_owner_ids, g_origins, g_millicredits, g_owner_mc, g_platform_mc, g_values, g_owner_musd,
                  g_platform_musd, g_served)
           WITH ORDINALITY AS g(acc, kid, per, pl, aid, aname, ver, own, org, cr, ocr, pcr, vl, ovl, pvl, srv, gi)
        ON g.gi = e.gi;
  EXCEPTION WHEN unique_violation THEN
    RAISE EXCEPTION 'a request id of this batch is already in the ledger' USING ERRCODE = 'QRY01';
  END;

  FOR grp IN
    SELECT u.acc, u.per, sum(u.c)::integer AS c, sum(u.cr * u.c)::bigint AS cr, sum(u.vl * u.c)::bigint AS vl,
           min(u.lim) AS lim, bool_or(u.bgt) AS bgt
      FROM unnest(g_account_ids, g_periods, g_origins, g_limits, g_budgeted, g_millicredits, g_values, g_calls)
           AS u(acc, per, org, lim, bgt, cr, vl, c)
     WHERE u.org IN ('paid', 'free')
     GROUP BY u.acc, u.per ORDER BY u.acc, u.per
  LOOP
    bud := NULL;
    IF grp.bgt THEN
      SELECT least(coalesce(a.budget_musd, p_default_budget), p_budget_cap) INTO bud
        FROM accounts a WHERE a.id = grp.acc;
      bud := coalesce(bud, least(p_default_budget, p_budget_cap));
    END IF;
    t_mc := NULL;
    INSERT INTO usage_counters AS c (account_id, period, calls, millicredits, value_musd)
    VALUES (grp.acc, grp.per, grp.c, grp.cr, grp.vl)
    ON CONFLICT (account_id, period) DO UPDATE
       SET calls = c.calls + excluded.calls, millicredits = c.millicredits + excluded.millicredits,
           value_musd = c.value_musd + excluded.value_musd
     WHERE (grp.lim IS NULL OR c.millicredits + excluded.millicredits <= grp.lim)
       AND (bud IS NULL OR c.value_musd + excluded.value_musd <= bud)
    RETURNING c.millicredits, c.value_musd INTO t_mc, t_val;
    IF t_mc IS NULL OR (grp.lim IS NOT NULL AND t_mc > grp.lim) OR (bud IS NOT NULL AND t_val > bud) THEN
      RAISE EXCEPTION 'the batch would cross an account''s limit or budget' USING ERRCODE = 'QRY01';
    END IF;
    o_account := grp.acc; o_period := grp.per; o_mc := t_mc; o_musd := t_val; o_budget := bud;
    RETURN NEXT;
  END LOOP;

  -- The day rollups of the served calls, after the counters: per group, its calls times a call's
  -- amounts, on today's UTC day (every event of the batch was reserved at now()).
  IF true = ANY (g_served) THEN
    PERFORM quarry_roll_up(
              array_agg(g.per), array_agg((now() AT TIME ZONE 'UTC')::date), array_agg(g.acc), array_agg(g.own),
              array_agg(g.aid), array_agg(g.aname), array_agg(g.pl), array_agg(g.org), array_agg(g.c::bigint),
              array_agg(g.cr * g.c), array_agg(g.ocr * g.c), array_agg(g.pcr * g.c), array_agg(g.vl * g.c),
              array_agg(g.ovl * g.c), array_agg(g.pvl * g.c))
       FROM unnest(g_account_ids, g_periods, g_plans, g_analytic_ids, g_analytic_names, g_owner_ids, g_origins,
                   g_millicredits, g_owner_mc, g_platform_mc, g_values, g_owner_musd, g_platform_musd, g_served,
                   g_calls)
            AS g(acc, per, pl, aid, aname, own, org, cr, ocr, pcr, vl, ovl, pvl, srv, c)
      WHERE g.srv;
  END IF;

  -- (account, period)s with only uncounted calls (marketplace, owner): their counter as read.
  IF EXISTS (SELECT 1 FROM unnest(g_origins) AS u(org) WHERE u.org NOT IN ('paid', 'free')) THEN
    RETURN QUERY
      SELECT m.acc, m.per, c.millicredits, c.value_musd, NULL::bigint
        FROM (SELECT u.acc, u.per FROM unnest(g_account_ids, g_periods, g_origins) AS u(acc, per, org)
               GROUP BY u.acc, u.per HAVING NOT bool_or(u.org IN ('paid', 'free'))) AS m
        LEFT JOIN usage_counters c ON c.account_id = m.acc AND c.period = m.per;
  END IF;
END
$$;
