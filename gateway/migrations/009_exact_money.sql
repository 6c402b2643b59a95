-- Money that adds up (issue 16; docs/money.md). Credits are stored as integer millicredits
-- (1 credit = 1,000) and money as integer micro-USD (µUSD). Each usage event records the payer's
-- plan, the credits, their money value (what the payer paid for them), the owner's share (800
-- millicredits a credit; floor(value × 80 / 100) µUSD) and the platform's (the rest). Origins:
--   paid         a call on a paying plan: counted against the quota (or the PAYG budget)
--   free         a call on a plan whose credits cost nothing (Free): counted, worth 0 µUSD
--   marketplace  a preview with a try-token: 0 credits, outside the quota
--   owner        an owner calling its own analytic: 0 credits, outside the quota, earns nothing
-- The monthly counter now counts credits (and µUSD for Pay as you Go budgets), not calls.
-- Runs unchanged on PostgreSQL 15+ and PGlite.

-- Pay as you Go: the account's monthly budget in µUSD; NULL means the operator's default.
ALTER TABLE accounts ADD COLUMN budget_musd bigint CHECK (budget_musd IS NULL OR budget_musd >= 0);

ALTER TABLE usage_events
  DROP CONSTRAINT usage_events_split_sums,
  DROP CONSTRAINT usage_events_marketplace_free,
  DROP CONSTRAINT usage_events_origin_check;
ALTER TABLE usage_events RENAME COLUMN credits TO millicredits;
ALTER TABLE usage_events RENAME COLUMN owner_share TO owner_millicredits;
ALTER TABLE usage_events RENAME COLUMN platform_share TO platform_millicredits;
ALTER TABLE usage_events
  ADD COLUMN plan text,
  ADD COLUMN value_musd bigint NOT NULL DEFAULT 0 CHECK (value_musd >= 0),
  ADD COLUMN owner_musd bigint NOT NULL DEFAULT 0 CHECK (owner_musd >= 0),
  ADD COLUMN platform_musd bigint NOT NULL DEFAULT 0 CHECK (platform_musd >= 0);

-- Events from before this migration: whole credits become millicredits; 'api' calls become
-- 'free' or 'paid' by the payer's plan now. Their money value was never recorded: 0 µUSD.
UPDATE usage_events e
   SET millicredits = e.millicredits * 1000,
       owner_millicredits = e.owner_millicredits * 1000,
       platform_millicredits = e.platform_millicredits * 1000,
       origin = CASE WHEN e.origin = 'marketplace' THEN 'marketplace'
                     WHEN (SELECT a.plan FROM accounts a WHERE a.id = e.account_id) = 'free' THEN 'free'
                     ELSE 'paid' END;

ALTER TABLE usage_events
  ADD CONSTRAINT usage_events_origin_check CHECK (origin IN ('paid', 'free', 'marketplace', 'owner')),
  ADD CONSTRAINT usage_events_credit_split_sums CHECK (owner_millicredits + platform_millicredits = millicredits),
  ADD CONSTRAINT usage_events_money_split_sums CHECK (owner_musd + platform_musd = value_musd),
  -- An owner never earns more than 80% of what the caller paid.
  ADD CONSTRAINT usage_events_owner_at_most_80 CHECK (owner_musd * 100 <= value_musd * 80),
  -- Previews and an owner's own calls are free and earn nothing.
  ADD CONSTRAINT usage_events_uncharged_free CHECK (
    origin IN ('paid', 'free') OR (millicredits = 0 AND value_musd = 0)),
  -- Free-plan credits are worth nothing.
  ADD CONSTRAINT usage_events_free_worthless CHECK (origin <> 'free' OR value_musd = 0);
-- Exactly 800 millicredits a credit for the owner. NOT VALID: events from before this migration
-- were split as floor(credits × 0.8) and stay as recorded; every new event is checked.
ALTER TABLE usage_events
  ADD CONSTRAINT usage_events_owner_800_per_credit CHECK (owner_millicredits * 10 = millicredits * 8) NOT VALID;

-- The counter: quota calls, their millicredits and their µUSD value in the period.
ALTER TABLE usage_counters
  ADD COLUMN millicredits bigint NOT NULL DEFAULT 0 CHECK (millicredits >= 0),
  ADD COLUMN value_musd bigint NOT NULL DEFAULT 0 CHECK (value_musd >= 0);
UPDATE usage_counters c
   SET millicredits = coalesce((SELECT sum(e.millicredits) FROM usage_events e
                                 WHERE e.account_id = c.account_id AND e.period = c.period
                                   AND e.origin IN ('paid', 'free')), 0);

DROP FUNCTION quarry_reserve_calls(
  text[], text[], text[], text[], integer[], text[], text[], integer[], text[], text[], bigint[],
  bigint[], bigint[], boolean[], double precision[]);
DROP FUNCTION quarry_charge_calls(
  text[], text[], text[], integer[], text[], text[], integer[], text[], text[], bigint[], bigint[],
  bigint[], boolean[], integer[], text[], integer[], double precision[]);

-- The exact batch decision (was 004's; same locks, order and outcomes), now in credits: a call
-- of a counted origin (paid, free) is admitted only while its credits fit under the period's
-- limit (`p_limits`, millicredits; NULL: no credit cap) and, for a budgeted account (Pay as you
-- Go, `p_budgeted`), while its value fits in the account's budget left:
-- least(coalesce(accounts.budget_musd, p_default_budget), p_budget_cap) µUSD a period. The
-- budget is read under the counter's row lock, so every instance sees the same budget left.
-- Returns per call the counter's millicredits and µUSD after its decision, and the budget.
CREATE FUNCTION quarry_reserve_calls(
  p_request_ids     text[],
  p_account_ids     text[],
  p_key_ids         text[],
  p_periods         text[],
  p_plans           text[],
  p_limits          bigint[],
  p_budgeted        boolean[],
  p_analytic_ids    text[],
  p_analytic_names  text[],
  p_versions        integer[],
  p_owner_ids       text[],
  p_origins         text[],
  p_millicredits    bigint[],
  p_owner_mc        bigint[],
  p_platform_mc     bigint[],
  p_values          bigint[],
  p_owner_musd      bigint[],
  p_platform_musd   bigint[],
  p_served          boolean[],
  p_latencies       double precision[],
  p_default_budget  bigint,
  p_budget_cap      bigint
) RETURNS TABLE (ord integer, outcome text, used_mc bigint, used_musd bigint, budget bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n          integer := coalesce(cardinality(p_request_ids), 0);
  closed     text[];
  c_keys     text[];
  c_mc       bigint[];
  c_val      bigint[];
  c_bud      bigint[];
  ex_ids     text[];
  ex_owners  text[];
  admit      boolean[] := array_fill(false, ARRAY[n]);
  r_code     smallint[] := array_fill(0::smallint, ARRAY[n]);
  r_mc       bigint[] := array_fill(0::bigint, ARRAY[n]);
  r_val      bigint[] := array_fill(0::bigint, ARRAY[n]);
  r_bud      bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  admitted   integer := 0;
  inserted   text[];
  item       record;
  k          integer;
  pos        integer;
  mc         bigint;
  val        bigint;
  bud        bigint;
BEGIN
  IF n = 0 THEN RETURN; END IF;

  PERFORM pg_advisory_xact_lock_shared(hashtext('quarry.period:' || coalesce(current_schema(), '') || ':' || s.p))
     FROM (SELECT DISTINCT u.p FROM unnest(p_periods) AS u(p) ORDER BY u.p) AS s;

  closed := ARRAY(SELECT cp.period::text FROM closed_periods cp WHERE cp.period = ANY (p_periods));

  INSERT INTO usage_counters (account_id, period, calls)
  SELECT DISTINCT u.a, u.p, 0 FROM unnest(p_account_ids, p_periods) AS u(a, p) ORDER BY u.a, u.p
  ON CONFLICT (account_id, period) DO NOTHING;

  SELECT array_agg(l.account_id || ' ' || l.period ORDER BY l.account_id, l.period),
         array_agg(l.millicredits ORDER BY l.account_id, l.period),
         array_agg(l.value_musd ORDER BY l.account_id, l.period)
    INTO c_keys, c_mc, c_val
    FROM (SELECT c.account_id, c.period, c.millicredits, c.value_musd
            FROM usage_counters c
            JOIN (SELECT DISTINCT u.a, u.p FROM unnest(p_account_ids, p_periods) AS u(a, p)) AS w
              ON c.account_id = w.a AND c.period = w.p
           ORDER BY c.account_id, c.period
             FOR UPDATE OF c) AS l;
  -- Each counter's budget, read after its row lock is held.
  c_bud := ARRAY(
    SELECT least(coalesce(a.budget_musd, p_default_budget), p_budget_cap)
      FROM unnest(c_keys) WITH ORDINALITY AS k(key, i)
      LEFT JOIN accounts a ON a.id = split_part(k.key, ' ', 1)
     ORDER BY k.i);

  SELECT coalesce(array_agg(e.request_id), '{}'), coalesce(array_agg(e.account_id), '{}')
    INTO ex_ids, ex_owners
    FROM usage_events e WHERE e.request_id = ANY (p_request_ids);

  -- Codes: 1 ok, 2 replayed, 3 conflict, 4 period_closed, 5 quota_exceeded.
  FOR item IN
    SELECT u.rid, u.acc, u.per, u.lim, u.bgt, u.org, u.cr, u.vl, u.i
      FROM unnest(p_request_ids, p_account_ids, p_periods, p_limits, p_budgeted, p_origins, p_millicredits, p_values)
           WITH ORDINALITY AS u(rid, acc, per, lim, bgt, org, cr, vl, i)
  LOOP
    k := array_position(c_keys, item.acc || ' ' || item.per);
    mc := c_mc[k];
    val := c_val[k];
    bud := CASE WHEN item.bgt THEN c_bud[k] END;
    pos := array_position(ex_ids, item.rid);
    IF pos IS NOT NULL THEN
      r_code[item.i] := CASE WHEN ex_owners[pos] = item.acc THEN 2 ELSE 3 END;
    ELSIF item.per = ANY (closed) THEN
      r_code[item.i] := 4;
    ELSIF item.org IN ('paid', 'free')
          AND ((item.lim IS NOT NULL AND mc + item.cr > item.lim) OR (bud IS NOT NULL AND val + item.vl > bud)) THEN
      r_code[item.i] := 5;
    ELSE
      IF item.org IN ('paid', 'free') THEN
        mc := mc + item.cr;
        val := val + item.vl;
        c_mc[k] := mc;
        c_val[k] := val;
      END IF;
      r_code[item.i] := 1;
      admit[item.i] := true;
      admitted := admitted + 1;
    END IF;
    r_mc[item.i] := mc;
    r_val[item.i] := val;
    r_bud[item.i] := bud;
  END LOOP;

  IF admitted > 0 THEN
    WITH ins AS (
      INSERT INTO usage_events (request_id, account_id, key_id, period, plan, analytic_id, analytic_name, version,
                                owner_id, origin, millicredits, owner_millicredits, platform_millicredits,
                                value_musd, owner_musd, platform_musd, status, latency_ms, completed_at)
      SELECT u.rid, u.acc, u.kid, u.per, u.pl, u.aid, u.aname, u.ver, u.own, u.org, u.cr, u.ocr, u.pcr,
             u.vl, u.ovl, u.pvl,
             CASE WHEN u.srv THEN 'ok' ELSE 'pending' END,
             CASE WHEN u.srv THEN u.lat END,
             CASE WHEN u.srv THEN now() END
        FROM unnest(p_request_ids, p_account_ids, p_key_ids, p_periods, p_plans, p_analytic_ids, p_analytic_names,
                    p_versions, p_owner_ids, p_origins, p_millicredits, p_owner_mc, p_platform_mc,
                    p_values, p_owner_musd, p_platform_musd, p_served, p_latencies)
             WITH ORDINALITY AS u(rid, acc, kid, per, pl, aid, aname, ver, own, org, cr, ocr, pcr, vl, ovl, pvl,
                                  srv, lat, i)
       WHERE admit[u.i]
      ON CONFLICT (request_id) DO NOTHING
      RETURNING usage_events.request_id, usage_events.account_id, usage_events.period, usage_events.origin,
                usage_events.millicredits, usage_events.value_musd
    ), counted AS (
      UPDATE usage_counters c
         SET calls = c.calls + x.n, millicredits = c.millicredits + x.mc, value_musd = c.value_musd + x.vl
        FROM (SELECT ins.account_id, ins.period, count(*)::integer AS n, sum(ins.millicredits)::bigint AS mc,
                     sum(ins.value_musd)::bigint AS vl
                FROM ins WHERE ins.origin IN ('paid', 'free') GROUP BY ins.account_id, ins.period) AS x
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
           r_mc[g.i], r_val[g.i], r_bud[g.i]
      FROM generate_series(1, n) AS g(i);
END
$$;

-- The optimistic grouped write (was 005's; same locks, checks and order), now in credits: the
-- events are written first, then one guarded bump per (account, period) of the counted calls,
-- in sorted order, by their millicredits and µUSD, refused (SQLSTATE QRY01, the caller then runs
-- quarry_reserve_calls) when it would cross the credit limit or the budget. Returns per
-- (account, period) the counter's millicredits and µUSD after the batch and the budget applied
-- (NULL when none); for an (account, period) with only uncounted calls, the counter as read.
CREATE FUNCTION quarry_charge_calls(
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
  written  integer;
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
      ON g.gi = e.gi
  ON CONFLICT (request_id) DO NOTHING;
  GET DIAGNOSTICS written = ROW_COUNT;
  IF written < n THEN
    RAISE EXCEPTION 'a request id of this batch is already in the ledger' USING ERRCODE = 'QRY01';
  END IF;

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
