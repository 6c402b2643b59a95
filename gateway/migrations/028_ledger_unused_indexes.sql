-- Additive only, like every migration (docs/deploy.md, "Upgrades and rollbacks"), but for two
-- indexes of the raw ledger that no statement reads, of this release or the one before: an
-- account's calls are read by (account_id, reserved_at) since 022, statements and usage pages
-- from the day rollups since 017. Each cost every served call an index entry (and an uncached
-- call that reserved first a second one, when its event turned from pending to ok).
-- gateway/src/money/ledger-reads.test.ts explains every read of the ledger on a filled month.
DROP INDEX IF EXISTS usage_events_account_idx;
DROP INDEX IF EXISTS usage_events_owner_idx;
