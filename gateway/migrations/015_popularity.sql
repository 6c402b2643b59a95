-- Marketplace popularity (issue 29): only paid calls by callers other than the owner count, with
-- the distinct paying callers among them. An owner's own calls and previews are free and were
-- climbing the ranking. The index holds just those rows, with the caller, so both counts read
-- the index alone; the old one (every served call) served nothing else.
-- Runs unchanged on PostgreSQL 15+ and PGlite.
DROP INDEX IF EXISTS usage_events_popularity_idx;
CREATE INDEX usage_events_paid_popularity_idx ON usage_events (analytic_id, completed_at, account_id)
  WHERE status = 'ok' AND origin = 'paid';
