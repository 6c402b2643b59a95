-- Version pinning (issue 31): callers may call an analytic at a version (`name@3`), so an
-- integration keeps what it was built against while its owner deploys new ones. Additive only,
-- like every migration (docs/deploy.md, "Upgrades and rollbacks"): the previous release runs on it
-- unchanged (it prunes versions without reading pins, so pins name versions without a foreign key).
--
-- Per version: the price schedule a call of it pays (as migration 016's on the analytic row, which
-- stays the current version's), and the owner's deprecation with its sunset date.
--   price NULL: a version deployed before this migration; it pays the analytic's schedule.
--   deprecated_at / sunset_at: both or neither; calls of it carry `Deprecation` and `Sunset`
--   headers, and from sunset_at on are refused (410 VERSION_SUNSET).
ALTER TABLE analytic_versions
  ADD COLUMN price          integer CHECK (price >= 0),
  ADD COLUMN next_price     integer CHECK (next_price >= 0),
  ADD COLUMN next_price_at  timestamptz,
  ADD COLUMN deprecated_at  timestamptz,
  ADD COLUMN sunset_at      timestamptz,
  ADD CONSTRAINT analytic_versions_next_price_whole CHECK ((next_price IS NULL) = (next_price_at IS NULL)),
  ADD CONSTRAINT analytic_versions_deprecation_whole CHECK ((deprecated_at IS NULL) = (sunset_at IS NULL));

-- The current versions price as their analytic does (it is the same schedule from now on).
UPDATE analytic_versions v
   SET price = a.price, next_price = a.next_price, next_price_at = a.next_price_at
  FROM analytics a
 WHERE v.analytic_id = a.id AND v.version = a.current_version AND a.price IS NOT NULL;

-- Pins: something that will call a version until `expires_at` (an embed token naming
-- `name@version`). A pinned version outlives QUARRY_MAX_VERSIONS_KEPT until its pins expire.
CREATE TABLE IF NOT EXISTS analytic_version_pins (
  analytic_id  text NOT NULL REFERENCES analytics (id),
  version      integer NOT NULL,
  -- What holds the pin (e.g. an embed token's id), unique per version.
  ref          text NOT NULL,
  account_id   text NOT NULL REFERENCES accounts (id),
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (analytic_id, version, ref)
);
CREATE INDEX IF NOT EXISTS analytic_version_pins_expiry_idx ON analytic_version_pins (expires_at);

-- Pinned calls: the last time each account called each version explicitly (`name@3`), written at
-- most about once an hour per instance. A version called in the last 30 days is kept; a caller's
-- usage lists the deprecated versions it calls.
CREATE TABLE IF NOT EXISTS analytic_version_calls (
  analytic_id     text NOT NULL REFERENCES analytics (id),
  version         integer NOT NULL,
  account_id      text NOT NULL REFERENCES accounts (id),
  last_called_at  timestamptz NOT NULL,
  PRIMARY KEY (analytic_id, version, account_id)
);
CREATE INDEX IF NOT EXISTS analytic_version_calls_account_idx ON analytic_version_calls (account_id, last_called_at);
