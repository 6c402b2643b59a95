-- The web console's accounts in a browser: a password per account (scrypt, never in clear; an
-- account made through the API has none until it sets one with a key) and sign-in sessions,
-- looked up by the SHA-256 digest of their token (the token itself is only in the cookie).
CREATE TABLE account_passwords (
  account_id  text PRIMARY KEY REFERENCES accounts (id),
  hash        text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE console_sessions (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  digest      bytea NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX console_sessions_account_idx ON console_sessions (account_id);
