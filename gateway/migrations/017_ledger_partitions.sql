-- The ledger at scale (docs/scale.md). Three changes, data kept:
--
-- 1. usage_events is partitioned by month (LIST on period, one partition a month, named
--    usage_events_pYYYY_MM, plus usage_events_default for a month nobody prepared).
--    quarry_ledger_partition(period) creates a month's partition (the scheduler's tick creates
--    this month's and the next two ahead; an event that lands in the default partition is moved
--    into its month's partition when that is created). A month's raw events can then be dropped
--    whole (DETACH + DROP) once it is closed and older than QUARRY_LEDGER_RETENTION_MONTHS.
--    The primary key becomes (request_id, period): a call's period is decided once, when the
--    gateway makes its request id, and every retry of the call carries both, so a request id is
--    still unique where it matters (ids are server-made, time-ordered and never reused).
--
-- 2. Day rollups of served calls, maintained by the same statements, in the same
--    transaction, as the events they sum (quarry_roll_up below, called by quarry_reserve_calls,
--    quarry_charge_calls and the commit of a pending call): per (owner, period, day, analytic,
--    payer plan, origin) for statements and the monthly close, and per (account, period, day,
--    analytic, owner, payer plan, origin) for usage pages, marketplace popularity, Pay as you Go
--    invoices and refunds, and each paying caller's last day per analytic for the marketplace's
--    distinct paying callers (see usage_analytic_callers). Each row holds calls and the exact integer sums of the events'
--    millicredits and µUSD, so a rollup total equals the raw sum to the unit: they commit or roll
--    back together. Locks, in order: the period's shared advisory lock, the counters (sorted),
--    then the rollup rows (sorted; owner rollup before account rollup): deadlock-free.
--    `day` is the UTC day of the call's reservation, as statements already count it; `plan` is ''
--    for events from before plans were recorded.
--
-- 3. The two batch functions of 009, unchanged but for the key (request_id, period) and the
--    rollups.
--
-- Runs unchanged on PostgreSQL 15+ and PGlite.

CREATE TABLE usage_owner_days (
  owner_id              text NOT NULL,
  period                char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  day                   date NOT NULL,
  analytic_id           text NOT NULL,
  analytic_name         text NOT NULL,
  plan                  text NOT NULL,
  origin                text NOT NULL CHECK (origin IN ('paid', 'free', 'marketplace', 'owner')),
  calls                 bigint NOT NULL CHECK (calls >= 0),
  millicredits          bigint NOT NULL CHECK (millicredits >= 0),
  owner_millicredits    bigint NOT NULL CHECK (owner_millicredits >= 0),
  platform_millicredits bigint NOT NULL CHECK (platform_millicredits >= 0),
  value_musd            bigint NOT NULL CHECK (value_musd >= 0),
  owner_musd            bigint NOT NULL CHECK (owner_musd >= 0),
  platform_musd         bigint NOT NULL CHECK (platform_musd >= 0),
  PRIMARY KEY (owner_id, period, day, analytic_id, analytic_name, plan, origin),
  CONSTRAINT usage_owner_days_credit_sums CHECK (owner_millicredits + platform_millicredits = millicredits),
  CONSTRAINT usage_owner_days_money_sums CHECK (owner_musd + platform_musd = value_musd)
);
-- The monthly close reads a whole period.
CREATE INDEX usage_owner_days_period_idx ON usage_owner_days (period);

CREATE TABLE usage_account_days (
  account_id     text NOT NULL,
  period         char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  day            date NOT NULL,
  analytic_id    text NOT NULL,
  analytic_name  text NOT NULL,
  owner_id       text NOT NULL,
  plan           text NOT NULL,
  origin         text NOT NULL CHECK (origin IN ('paid', 'free', 'marketplace', 'owner')),
  calls          bigint NOT NULL CHECK (calls >= 0),
  millicredits   bigint NOT NULL CHECK (millicredits >= 0),
  value_musd     bigint NOT NULL CHECK (value_musd >= 0),
  owner_musd     bigint NOT NULL CHECK (owner_musd >= 0),
  platform_musd  bigint NOT NULL CHECK (platform_musd >= 0),
  PRIMARY KEY (account_id, period, day, analytic_id, analytic_name, owner_id, plan, origin),
  CONSTRAINT usage_account_days_money_sums CHECK (owner_musd + platform_musd = value_musd)
);
-- Pay as you Go invoices read a whole period.
CREATE INDEX usage_account_days_period_idx ON usage_account_days (period);

-- Marketplace popularity (015's rule: paid calls by callers other than the owner) over the last
-- 30 UTC days, exactly, without scanning events: the calls come from usage_owner_days (by analytic
-- and day); the distinct paying callers from each (analytic, caller)'s last paid day, counted per
-- (analytic, day): the callers of the last 30 days are the sum of the last 30 days' counts. A
-- caller's row moves (and two counts change) only on its first paid call of a new day.
CREATE TABLE usage_analytic_callers (
  analytic_id  text NOT NULL,
  account_id   text NOT NULL,
  last_day     date,
  PRIMARY KEY (analytic_id, account_id)
);
CREATE TABLE usage_analytic_caller_days (
  analytic_id  text NOT NULL,
  day          date NOT NULL,
  -- No CHECK (callers >= 0): a caller leaving a day is a -1 upsert, and PostgreSQL checks the row
  -- proposed for insertion before it finds the row the upsert then updates.
  callers      bigint NOT NULL,
  PRIMARY KEY (analytic_id, day)
);
CREATE INDEX usage_owner_days_popularity_idx ON usage_owner_days (analytic_id, day) INCLUDE (calls)
  WHERE origin = 'paid';

-- Adds served calls to both rollups: one element per row of sums (its calls and the total
-- amounts of those calls), any number of elements per rollup key.
CREATE FUNCTION quarry_roll_up(
  r_periods         text[],
  r_days            date[],
  r_account_ids     text[],
  r_owner_ids       text[],
  r_analytic_ids    text[],
  r_analytic_names  text[],
  r_plans           text[],
  r_origins         text[],
  r_calls           bigint[],
  r_millicredits    bigint[],
  r_owner_mc        bigint[],
  r_platform_mc     bigint[],
  r_values          bigint[],
  r_owner_musd      bigint[],
  r_platform_musd   bigint[]
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  p_aids    text[];
  p_accs    text[];
  p_days    date[];
  p_deltas  bigint[];
BEGIN
  INSERT INTO usage_owner_days AS d (owner_id, period, day, analytic_id, analytic_name, plan, origin, calls,
                                     millicredits, owner_millicredits, platform_millicredits, value_musd,
                                     owner_musd, platform_musd)
  SELECT u.own, u.per, u.day, u.aid, u.aname, coalesce(u.pl, ''), u.org, sum(u.c), sum(u.cr), sum(u.ocr),
         sum(u.pcr), sum(u.vl), sum(u.ovl), sum(u.pvl)
    FROM unnest(r_periods, r_days, r_owner_ids, r_analytic_ids, r_analytic_names, r_plans, r_origins, r_calls,
                r_millicredits, r_owner_mc, r_platform_mc, r_values, r_owner_musd, r_platform_musd)
         AS u(per, day, own, aid, aname, pl, org, c, cr, ocr, pcr, vl, ovl, pvl)
   GROUP BY 1, 2, 3, 4, 5, 6, 7
   ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (owner_id, period, day, analytic_id, analytic_name, plan, origin) DO UPDATE
     SET calls = d.calls + excluded.calls, millicredits = d.millicredits + excluded.millicredits,
         owner_millicredits = d.owner_millicredits + excluded.owner_millicredits,
         platform_millicredits = d.platform_millicredits + excluded.platform_millicredits,
         value_musd = d.value_musd + excluded.value_musd, owner_musd = d.owner_musd + excluded.owner_musd,
         platform_musd = d.platform_musd + excluded.platform_musd;

  INSERT INTO usage_account_days AS d (account_id, period, day, analytic_id, analytic_name, owner_id, plan, origin,
                                       calls, millicredits, value_musd, owner_musd, platform_musd)
  SELECT u.acc, u.per, u.day, u.aid, u.aname, u.own, coalesce(u.pl, ''), u.org, sum(u.c), sum(u.cr), sum(u.vl),
         sum(u.ovl), sum(u.pvl)
    FROM unnest(r_periods, r_days, r_account_ids, r_owner_ids, r_analytic_ids, r_analytic_names, r_plans,
                r_origins, r_calls, r_millicredits, r_values, r_owner_musd, r_platform_musd)
         AS u(per, day, acc, own, aid, aname, pl, org, c, cr, vl, ovl, pvl)
   GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
   ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
  ON CONFLICT (account_id, period, day, analytic_id, analytic_name, owner_id, plan, origin) DO UPDATE
     SET calls = d.calls + excluded.calls, millicredits = d.millicredits + excluded.millicredits,
         value_musd = d.value_musd + excluded.value_musd, owner_musd = d.owner_musd + excluded.owner_musd,
         platform_musd = d.platform_musd + excluded.platform_musd;

  -- Paying callers (not the owner): each (analytic, caller)'s last paid day, and the counts by day.
  IF NOT ('paid' = ANY (r_origins)) THEN RETURN; END IF;
  SELECT array_agg(x.aid ORDER BY x.aid, x.acc), array_agg(x.acc ORDER BY x.aid, x.acc),
         array_agg(x.day ORDER BY x.aid, x.acc)
    INTO p_aids, p_accs, p_days
    FROM (SELECT u.aid, u.acc, max(u.day) AS day
            FROM unnest(r_analytic_ids, r_account_ids, r_owner_ids, r_origins, r_days) AS u(aid, acc, own, org, day)
           WHERE u.org = 'paid' AND u.acc <> u.own GROUP BY u.aid, u.acc) AS x;
  IF p_aids IS NULL THEN RETURN; END IF;
  INSERT INTO usage_analytic_callers (analytic_id, account_id, last_day)
  SELECT u.aid, u.acc, NULL FROM unnest(p_aids, p_accs) AS u(aid, acc)
  ON CONFLICT (analytic_id, account_id) DO NOTHING;
  -- Locked in key order, then read at their latest version.
  WITH locked AS (
    SELECT c.analytic_id, c.account_id, c.last_day FROM usage_analytic_callers c
      JOIN unnest(p_aids, p_accs, p_days) AS u(aid, acc, day) ON c.analytic_id = u.aid AND c.account_id = u.acc
     ORDER BY c.analytic_id, c.account_id
       FOR UPDATE OF c
  ), moved AS (
    SELECT l.analytic_id, l.account_id, l.last_day AS old_day, u.day AS new_day
      FROM locked l JOIN unnest(p_aids, p_accs, p_days) AS u(aid, acc, day)
        ON l.analytic_id = u.aid AND l.account_id = u.acc
     WHERE l.last_day IS NULL OR l.last_day < u.day
  ), updated AS (
    UPDATE usage_analytic_callers c SET last_day = m.new_day FROM moved m
     WHERE c.analytic_id = m.analytic_id AND c.account_id = m.account_id
    RETURNING 1
  )
  SELECT array_agg(d.aid ORDER BY d.aid, d.day), array_agg(d.day ORDER BY d.aid, d.day),
         array_agg(d.n ORDER BY d.aid, d.day)
    INTO p_aids, p_days, p_deltas
    FROM (SELECT e.aid, e.day, sum(e.n)::bigint AS n
            FROM (SELECT m.analytic_id AS aid, m.new_day AS day, 1 AS n FROM moved m
                  UNION ALL
                  SELECT m.analytic_id, m.old_day, -1 FROM moved m WHERE m.old_day IS NOT NULL) AS e
           GROUP BY e.aid, e.day HAVING sum(e.n) <> 0) AS d;
  IF p_aids IS NULL THEN RETURN; END IF;
  INSERT INTO usage_analytic_caller_days AS d (analytic_id, day, callers)
  SELECT u.aid, u.day, u.n FROM unnest(p_aids, p_days, p_deltas) AS u(aid, day, n)
  ON CONFLICT (analytic_id, day) DO UPDATE SET callers = d.callers + excluded.callers;
END
$$;

-- The partitioned ledger, replacing the unpartitioned table (same columns, in the same order,
-- and the same checks but one: the owner's 800 millicredits a credit, NOT VALID on the old table
-- for events split before 009, is kept by each partition: NOT VALID on the months copied here,
-- enforced on every month created from now on).
ALTER TABLE usage_events RENAME TO usage_events_unpartitioned;
ALTER TABLE usage_events_unpartitioned RENAME CONSTRAINT usage_events_pkey TO usage_events_unpartitioned_pkey;
DROP INDEX usage_events_account_idx;
DROP INDEX usage_events_owner_idx;
DROP INDEX usage_events_pending_idx;
DROP INDEX usage_events_paid_popularity_idx;

CREATE TABLE usage_events (
  request_id            text NOT NULL,
  account_id            text NOT NULL,
  key_id                text,
  period                char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  analytic_id           text NOT NULL,
  analytic_name         text NOT NULL,
  version               integer NOT NULL,
  owner_id              text NOT NULL,
  origin                text NOT NULL CHECK (origin IN ('paid', 'free', 'marketplace', 'owner')),
  millicredits          bigint NOT NULL CHECK (millicredits >= 0),
  owner_millicredits    bigint NOT NULL CHECK (owner_millicredits >= 0),
  platform_millicredits bigint NOT NULL CHECK (platform_millicredits >= 0),
  status                text NOT NULL CHECK (status IN ('pending', 'ok')),
  latency_ms            double precision,
  reserved_at           timestamptz NOT NULL DEFAULT now(),
  completed_at          timestamptz,
  plan                  text,
  value_musd            bigint NOT NULL DEFAULT 0 CHECK (value_musd >= 0),
  owner_musd            bigint NOT NULL DEFAULT 0 CHECK (owner_musd >= 0),
  platform_musd         bigint NOT NULL DEFAULT 0 CHECK (platform_musd >= 0),
  PRIMARY KEY (request_id, period),
  CONSTRAINT usage_events_final_completed CHECK ((status = 'ok') = (completed_at IS NOT NULL)),
  CONSTRAINT usage_events_credit_split_sums CHECK (owner_millicredits + platform_millicredits = millicredits),
  CONSTRAINT usage_events_money_split_sums CHECK (owner_musd + platform_musd = value_musd),
  CONSTRAINT usage_events_uncharged_free CHECK (origin IN ('paid', 'free') OR (millicredits = 0 AND value_musd = 0)),
  CONSTRAINT usage_events_free_worthless CHECK (origin <> 'free' OR value_musd = 0),
  CONSTRAINT usage_events_owner_at_most_80 CHECK (owner_musd * 100 <= value_musd * 80)
) PARTITION BY LIST (period);
CREATE INDEX usage_events_account_idx ON usage_events (account_id, period);
CREATE INDEX usage_events_owner_idx ON usage_events (owner_id, period);
-- The reaper's scan and the close's in-flight check: only pending rows.
CREATE INDEX usage_events_pending_idx ON usage_events (reserved_at) WHERE status = 'pending';

CREATE TABLE usage_events_default PARTITION OF usage_events DEFAULT;
ALTER TABLE usage_events_default ADD CONSTRAINT usage_events_default_owner_800_per_credit
  CHECK (owner_millicredits * 10 = millicredits * 8);

-- Creates `p_period`'s partition unless it exists (true when it did), moving into it any event of
-- that month that landed in the default partition. `p_legacy`: the month holds events from before
-- 009, whose owner split is not checked (the check is added NOT VALID afterwards by the caller).
-- One at a time (an advisory lock): instances ticking together do not race.
CREATE FUNCTION quarry_ledger_partition(p_period text, p_legacy boolean DEFAULT false) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  part text := 'usage_events_p' || replace(p_period, '-', '_');
BEGIN
  IF p_period IS NULL OR p_period !~ '^[0-9]{4}-(0[1-9]|1[0-2])$' THEN
    RAISE EXCEPTION 'a ledger partition needs a period YYYY-MM, got %', p_period USING ERRCODE = '22023';
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('quarry.ledger-partitions:' || coalesce(current_schema(), '')));
  IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'usage_events'::regclass AND c.relname = part) THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE usage_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
  -- Lets ATTACH skip scanning the table for rows of another month.
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (period = %L)', part, part || '_month', p_period);
  IF NOT p_legacy THEN
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (owner_millicredits * 10 = millicredits * 8)',
                   part, part || '_owner_800_per_credit');
  END IF;
  EXECUTE format('WITH moved AS (DELETE FROM usage_events_default WHERE period = %L RETURNING *) '
                 'INSERT INTO %I SELECT * FROM moved', p_period, part);
  EXECUTE format('ALTER TABLE usage_events ATTACH PARTITION %I FOR VALUES IN (%L)', part, p_period);
  RETURN true;
END
$$;

-- The months already in the ledger, copied as they are; then this month and the next two.
DO $$
DECLARE
  p text;
BEGIN
  FOR p IN SELECT DISTINCT period::text FROM usage_events_unpartitioned ORDER BY 1 LOOP
    PERFORM quarry_ledger_partition(p, true);
  END LOOP;
  FOR p IN SELECT to_char((now() AT TIME ZONE 'UTC') + make_interval(months => k), 'YYYY-MM')
             FROM generate_series(0, 2) AS k LOOP
    PERFORM quarry_ledger_partition(p);
  END LOOP;
END
$$;

INSERT INTO usage_events SELECT request_id, account_id, key_id, period, analytic_id, analytic_name, version,
                                owner_id, origin, millicredits, owner_millicredits, platform_millicredits, status,
                                latency_ms, reserved_at, completed_at, plan, value_musd, owner_musd, platform_musd
                           FROM usage_events_unpartitioned;

DO $$
DECLARE
  p text;
BEGIN
  FOR p IN SELECT DISTINCT period::text FROM usage_events_unpartitioned ORDER BY 1 LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (owner_millicredits * 10 = millicredits * 8) NOT VALID',
                   'usage_events_p' || replace(p, '-', '_'), 'usage_events_p' || replace(p, '-', '_') || '_owner_800_per_credit');
  END LOOP;
END
$$;
DROP TABLE usage_events_unpartitioned;

-- The rollups of the events already served.
INSERT INTO usage_owner_days (owner_id, period, day, analytic_id, analytic_name, plan, origin, calls, millicredits,
                              owner_millicredits, platform_millicredits, value_musd, owner_musd, platform_musd)
SELECT owner_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, coalesce(plan, ''),
       origin, count(*), sum(millicredits), sum(owner_millicredits), sum(platform_millicredits), sum(value_musd),
       sum(owner_musd), sum(platform_musd)
  FROM usage_events WHERE status = 'ok'
 GROUP BY 1, 2, 3, 4, 5, 6, 7;
INSERT INTO usage_account_days (account_id, period, day, analytic_id, analytic_name, owner_id, plan, origin, calls,
                                millicredits, value_musd, owner_musd, platform_musd)
SELECT account_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, owner_id,
       coalesce(plan, ''), origin, count(*), sum(millicredits), sum(value_musd), sum(owner_musd), sum(platform_musd)
  FROM usage_events WHERE status = 'ok'
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO usage_analytic_callers (analytic_id, account_id, last_day)
SELECT analytic_id, account_id, max((reserved_at AT TIME ZONE 'UTC')::date)
  FROM usage_events WHERE status = 'ok' AND origin = 'paid' AND account_id <> owner_id
 GROUP BY 1, 2;
INSERT INTO usage_analytic_caller_days (analytic_id, day, callers)
SELECT analytic_id, last_day, count(*) FROM usage_analytic_callers GROUP BY 1, 2;

-- Drops `p_period`'s raw events (the rollups and frozen statements stay): only a closed month with
-- no call in flight. True when a partition was dropped.
CREATE FUNCTION quarry_ledger_drop_month(p_period text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  part text := 'usage_events_p' || replace(p_period, '-', '_');
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('quarry.ledger-partitions:' || coalesce(current_schema(), '')));
  IF NOT EXISTS (SELECT 1 FROM closed_periods WHERE period = p_period) THEN
    RAISE EXCEPTION 'period % is not closed: its raw events are kept', p_period USING ERRCODE = '55000';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                  WHERE i.inhparent = 'usage_events'::regclass AND c.relname = part) THEN
    RETURN false;
  END IF;
  EXECUTE format('ALTER TABLE usage_events DETACH PARTITION %I', part);
  EXECUTE format('DROP TABLE %I', part);
  RETURN true;
END
$$;

-- The batch functions of 009 with the key (request_id, period) and the rollups.
CREATE OR REPLACE FUNCTION quarry_reserve_calls(
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
    FROM usage_events e WHERE e.request_id = ANY (p_request_ids) AND e.period = ANY (p_periods);

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
      ON CONFLICT (request_id, period) DO NOTHING
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
    -- The day rollups of the calls written served, after the counters (locked above).
    PERFORM quarry_roll_up(
              array_agg(e.period::text), array_agg((e.reserved_at AT TIME ZONE 'UTC')::date), array_agg(e.account_id),
              array_agg(e.owner_id), array_agg(e.analytic_id), array_agg(e.analytic_name), array_agg(e.plan),
              array_agg(e.origin), array_agg(1::bigint), array_agg(e.millicredits), array_agg(e.owner_millicredits),
              array_agg(e.platform_millicredits), array_agg(e.value_musd), array_agg(e.owner_musd),
              array_agg(e.platform_musd))
       FROM usage_events e
      WHERE e.request_id = ANY (inserted) AND e.period = ANY (p_periods) AND e.status = 'ok'
     HAVING count(*) > 0;
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
  ON CONFLICT (request_id, period) DO NOTHING;
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
