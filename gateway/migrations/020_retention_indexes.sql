-- Retention (store/retention.ts) deletes change-log rows by age and console sessions by expiry
-- or sign-out: indexes so each run reads only what it deletes. Additive only, like every
-- migration (docs/deploy.md, "Upgrades and rollbacks"): the previous release runs on it unchanged.
CREATE INDEX IF NOT EXISTS change_log_at_idx ON change_log (at);
CREATE INDEX IF NOT EXISTS console_sessions_expires_idx ON console_sessions (expires_at);
CREATE INDEX IF NOT EXISTS console_sessions_revoked_idx ON console_sessions (revoked_at) WHERE revoked_at IS NOT NULL;
