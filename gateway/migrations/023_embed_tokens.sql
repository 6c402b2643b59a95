-- Embed tokens (docs/embedding.md): short-lived JWTs a web page may hold, restricted to named
-- analytics, fixed params and allowed origins. Additive only, like every migration
-- (docs/deploy.md, "Upgrades and rollbacks"): the previous release runs on it unchanged.

-- The account's HS256 signing secrets, with which its own backend mints embed tokens offline.
-- The secret is shown once; the gateway must verify HMACs with it, so it is kept sealed with the
-- secret box (AES-256-GCM under QUARRY_SECRET_KEY), like connection secrets. A rotation sets the
-- old secret's `expires_at` (the overlap); a revocation sets `revoked_at` and ends it at once.
CREATE TABLE embed_secrets (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  name           text NOT NULL,
  secret         bytea NOT NULL,
  secret_key_id  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz,
  revoked_at     timestamptz
);
CREATE INDEX embed_secrets_account_idx ON embed_secrets (account_id);

-- Whether the account lets its API keys and OAuth tokens be used from a browser page of another
-- origin (off by default: a key in a page is a key anyone can copy).
CREATE TABLE account_cors_settings (
  account_id            text PRIMARY KEY REFERENCES accounts (id),
  allow_keys_from_browsers boolean NOT NULL DEFAULT false,
  updated_at            timestamptz NOT NULL DEFAULT now()
);
