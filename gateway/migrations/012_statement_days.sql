-- A frozen statement keeps its calls by UTC day too (the day of each call's reservation), so the
-- owner's earnings chart by day and analytic stays what it was when the period closed. Lines
-- frozen before this have no day (NULL): they still count in the statement's totals.
ALTER TABLE owner_statement_lines ADD COLUMN day date;
ALTER TABLE owner_statement_lines DROP CONSTRAINT owner_statement_lines_pkey;
CREATE UNIQUE INDEX owner_statement_lines_key
  ON owner_statement_lines (period, owner_id, analytic_name, origin, day) NULLS NOT DISTINCT;
