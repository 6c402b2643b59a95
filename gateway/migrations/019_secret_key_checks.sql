-- Secret key checks (issue 37): one short value per secret-key id, sealed by the first instance
-- that started with that key. An instance starting later opens each check of the keys it has:
-- a key under a known id but with other bytes (a mistyped QUARRY_SECRET_KEY) fails to open it,
-- and the instance refuses to start instead of serving 500s or sealing the fleet's OAuth signing
-- key with a key no other instance can read. A key no instance registered yet cannot become the
-- current one of a fleet that already sealed something: it must be added as readable first.
CREATE TABLE secret_key_checks (
  key_id      text PRIMARY KEY,
  sealed      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- The rows a rotation re-seals are found by the key that sealed them.
CREATE INDEX oauth_signing_keys_private_key_key_idx ON oauth_signing_keys (private_key_key_id);
