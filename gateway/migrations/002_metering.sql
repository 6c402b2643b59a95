-- Metering and the marketplace: monthly quota counters, the usage ledger (one event per charged
-- call, keyed by request id), frozen owner statements of closed periods, idempotency keys, and
-- marketplace listings. Money and credits are integers (bigint, read back as JS numbers).
-- Periods are calendar months in UTC, 'YYYY-MM'. Runs unchanged on PostgreSQL 15+ and PGlite.

-- Calls reserved against an account's plan in one period: api-origin usage events, pending or
-- final. The reserve upsert increments it only below the plan's limit (race-free: the
-- conflicting row is locked and the WHERE re-checked on its latest version).
CREATE TABLE usage_counters (
  account_id  text NOT NULL REFERENCES accounts (id),
  period      char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  calls       integer NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (account_id, period)
);

-- The ledger. A row is born 'pending' when quota is reserved and becomes 'ok' once the call is
-- served; a failed call's pending row is deleted (never charged), and so is one whose instance
-- died before it finished (reapStale). The split is computed by the gateway and stored per
-- event, so a later change of the percentage never rewrites history.
CREATE TABLE usage_events (
  request_id      text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts (id),
  key_id          text,
  period          char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  analytic_id     text NOT NULL REFERENCES analytics (id),
  analytic_name   text NOT NULL,
  version         integer NOT NULL,
  owner_id        text NOT NULL REFERENCES accounts (id),
  origin          text NOT NULL CHECK (origin IN ('api', 'marketplace')),
  credits         bigint NOT NULL CHECK (credits >= 0),
  owner_share     bigint NOT NULL CHECK (owner_share >= 0),
  platform_share  bigint NOT NULL CHECK (platform_share >= 0),
  status          text NOT NULL CHECK (status IN ('pending', 'ok')),
  latency_ms      double precision,
  reserved_at     timestamptz NOT NULL DEFAULT now(),
  completed_at    timestamptz,
  CONSTRAINT usage_events_split_sums CHECK (owner_share + platform_share = credits),
  -- Marketplace try-it calls are free, whatever a caller sent.
  CONSTRAINT usage_events_marketplace_free CHECK (origin = 'api' OR credits = 0),
  CONSTRAINT usage_events_final_completed CHECK ((status = 'ok') = (completed_at IS NOT NULL))
);
CREATE INDEX usage_events_account_idx ON usage_events (account_id, period);
CREATE INDEX usage_events_owner_idx ON usage_events (owner_id, period);
-- The reaper's scan: only pending rows, oldest first.
CREATE INDEX usage_events_pending_idx ON usage_events (reserved_at) WHERE status = 'pending';
-- Marketplace popularity: served calls per analytic in the last 30 days.
CREATE INDEX usage_events_popularity_idx ON usage_events (analytic_id, completed_at) WHERE status = 'ok';

-- A closed period refuses new reservations; its statements are read from owner_statements.
CREATE TABLE closed_periods (
  period     char(7) PRIMARY KEY CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  closed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE owner_statements (
  period          char(7) NOT NULL REFERENCES closed_periods (period),
  owner_id        text NOT NULL REFERENCES accounts (id),
  analytic_name   text NOT NULL,
  calls           integer NOT NULL CHECK (calls >= 0),
  credits         bigint NOT NULL CHECK (credits >= 0),
  owner_share     bigint NOT NULL CHECK (owner_share >= 0),
  platform_share  bigint NOT NULL CHECK (platform_share >= 0),
  PRIMARY KEY (period, owner_id, analytic_name),
  CONSTRAINT owner_statements_split_sums CHECK (owner_share + platform_share = credits)
);
CREATE INDEX owner_statements_owner_idx ON owner_statements (owner_id, period);

-- Idempotency-Key replays: a claimed key is in progress until its response is stored
-- (status_code set); rows expire after 24 hours.
CREATE TABLE idempotency_keys (
  account_id           text NOT NULL REFERENCES accounts (id),
  key                  text NOT NULL,
  request_fingerprint  text NOT NULL,
  status_code          integer,
  response_body        text,
  created_at           timestamptz NOT NULL DEFAULT now(),
  completed_at         timestamptz,
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Marketplace listings: one per analytic; unpublishing keeps the row (and its history).
CREATE TABLE listings (
  analytic_id     text PRIMARY KEY REFERENCES analytics (id),
  owner_id        text NOT NULL REFERENCES accounts (id),
  title           text NOT NULL,
  description     text NOT NULL DEFAULT '',
  category        text NOT NULL,
  tags            text[] NOT NULL DEFAULT '{}',
  price           integer NOT NULL CHECK (price >= 0),
  example_params  jsonb NOT NULL DEFAULT '{}',
  published_at    timestamptz NOT NULL DEFAULT now(),
  unpublished_at  timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX listings_live_idx ON listings (category, published_at) WHERE unpublished_at IS NULL;
