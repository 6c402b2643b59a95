-- OAuth 2.0 client credentials (issue 7): the clients an account registers, and the signing keys
-- of the access tokens. Keys live here, in the control-plane store, so every gateway instance
-- signs and verifies with the same set. Runs unchanged on PostgreSQL 15+ and PGlite.

-- A client's secret is shown once; only its SHA-256 digest is kept (like API keys). `id` (ocl_…)
-- names the record in the API, `client_id` (qci_…) is what the client authenticates with.
CREATE TABLE oauth_clients (
  id             text PRIMARY KEY,
  client_id      text NOT NULL UNIQUE,
  account_id     text NOT NULL REFERENCES accounts (id),
  name           text NOT NULL,
  secret_digest  bytea NOT NULL,
  scopes         text[] NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz
);
CREATE INDEX oauth_clients_account_idx ON oauth_clients (account_id);

-- ES256 signing keys. The private key is a secret-box envelope (AES-256-GCM under
-- QUARRY_SECRET_KEY, see secret-box.ts) of its JWK, with the id of the key that sealed it.
-- Lifecycle: a key signs from `activated_at` until a rotation sets `superseded_at`; it keeps
-- verifying (and stays in the JWKS) until `retired_at`, which the rotation sets far enough ahead
-- (token lifetime + clock leeway + the instances' key reload interval) for every token it signed
-- to have expired. `retired_at` is therefore usually in the future when written.
CREATE TABLE oauth_signing_keys (
  kid                 text PRIMARY KEY,
  public_jwk          jsonb NOT NULL,
  private_key         bytea NOT NULL,
  private_key_key_id  text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  activated_at        timestamptz NOT NULL DEFAULT now(),
  superseded_at       timestamptz,
  retired_at          timestamptz,
  CONSTRAINT oauth_signing_keys_retired_once_superseded CHECK ((superseded_at IS NULL) = (retired_at IS NULL))
);
-- At most one key signs at a time: instances creating the first key at once cannot make two.
CREATE UNIQUE INDEX oauth_signing_keys_one_signer ON oauth_signing_keys ((superseded_at IS NULL))
  WHERE superseded_at IS NULL;
