-- The recent-calls page (GET /v1/account/calls, docs/console.md): an account's served and failed
-- calls, newest first, over the last 30 days. Each index serves one side of that listing as a
-- keyset scan on (account, time): on the partitioned ledger the index is made on every month's
-- partition, and the listing names its months so the others are pruned. Additive only, like every
-- migration (docs/deploy.md, "Upgrades and rollbacks"): the previous release runs on it unchanged.
CREATE INDEX IF NOT EXISTS usage_events_account_time_idx ON usage_events (account_id, reserved_at);
CREATE INDEX IF NOT EXISTS failed_calls_account_time_idx ON failed_calls (account_id, failed_at);
