-- Price notice (issue 29): a rise of an analytic's price takes effect only after the operator's
-- notice (QUARRY_PRICE_NOTICE_HOURS), so a caller is never charged a price it could not have
-- seen. The price a call pays is no longer the current definition's `price` but:
--   next_price  when next_price_at <= now (the rise has taken effect),
--   price       otherwise.
-- Both are kept on the analytic row (not per version): the schedule belongs to the name callers
-- call, and every instance picks the price in force by time alone, with no job to flip it.
-- NULL price: a row this migration could not price (read as its definition's price).
ALTER TABLE analytics
  ADD COLUMN price          integer CHECK (price >= 0),
  ADD COLUMN next_price     integer CHECK (next_price >= 0),
  ADD COLUMN next_price_at  timestamptz,
  ADD CONSTRAINT analytics_next_price_whole CHECK ((next_price IS NULL) = (next_price_at IS NULL));

-- Until now the current version's price applied at once: that is the price in force.
UPDATE analytics a
   SET price = CASE WHEN jsonb_typeof(v.definition -> 'price') = 'number'
                    THEN (v.definition ->> 'price')::integer ELSE 1 END
  FROM analytic_versions v
 WHERE v.analytic_id = a.id AND v.version = a.current_version;
