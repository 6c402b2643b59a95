-- Additive only from here on, like every migration (docs/deploy.md, "Upgrades and rollbacks").
-- Password resets by a one-time link (docs/console.md). Only the SHA-256 digest of a
-- link's token is kept: a leaked database holds no usable link. A link works once, until
-- expires_at; taking it marks used_at in the same statement that checks it, so two clicks cannot
-- both set a password.
CREATE TABLE password_resets (
  digest      bytea PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz
);
CREATE INDEX password_resets_account_idx ON password_resets (account_id);
