-- Events out (docs/webhooks.md): an account's webhook endpoints, the outbox of events, one
-- delivery per (event, endpoint) with its attempts, and the account's alert thresholds.
-- An event is written in the same transaction as what caused it, with a delivery row for each
-- endpoint of the account subscribed to its type; any instance claims due deliveries with
-- FOR UPDATE SKIP LOCKED and a lease, so a stopped instance's claims are taken over once the
-- lease runs out. Additive only, like every migration (docs/deploy.md, "Upgrades and rollbacks").

CREATE TABLE webhook_endpoints (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts(id),
  url             text NOT NULL,
  description     text NOT NULL DEFAULT '',
  -- Event types the endpoint receives; empty: every type.
  event_types     text[] NOT NULL DEFAULT '{}',
  enabled         boolean NOT NULL DEFAULT true,
  -- Why the gateway disabled it (failing for days), NULL when enabled or disabled by its owner.
  disabled_reason text,
  -- The signing secrets (Standard Webhooks `whsec_…`) as one JSON object {current, previous},
  -- sealed with the secret box like connection secrets, and the id of the key that sealed it.
  -- After a rotation the previous secret keeps signing too, until previous_secret_until.
  secrets         bytea NOT NULL,
  secrets_key_id  text,
  previous_secret_until timestamptz,
  -- When its deliveries started failing without a success since (NULL: the last one succeeded).
  failing_since   timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id) WHERE deleted_at IS NULL;

-- The outbox: one row per event. `dedupe_key` makes an event that must happen once (a threshold
-- of a month, a key's expiry notice) happen once whichever instance writes it.
CREATE TABLE webhook_events (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts(id),
  type        text NOT NULL,
  payload     jsonb NOT NULL,
  dedupe_key  text UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_account_idx ON webhook_events (account_id, created_at);

-- One event to one endpoint. Its id is the `webhook-id` header: the same on every attempt.
CREATE TABLE webhook_deliveries (
  id            text PRIMARY KEY,
  event_id      text NOT NULL REFERENCES webhook_events(id),
  endpoint_id   text NOT NULL REFERENCES webhook_endpoints(id),
  -- pending: to be (re)tried at next_attempt_at; delivered; failed: gave up (3 days) or the
  -- endpoint was disabled or deleted.
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- A claim: the instance sending it now, until lease_until.
  leased_by     text,
  lease_until   timestamptz,
  last_status   integer,
  last_error    text,
  last_latency_ms double precision,
  delivered_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at);

-- Every attempt of a delivery, for the log (status, latency) and the test that nothing is sent twice.
CREATE TABLE webhook_attempts (
  delivery_id   text NOT NULL REFERENCES webhook_deliveries(id),
  attempt       integer NOT NULL,
  instance      text NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  status_code   integer,
  error         text,
  latency_ms    double precision,
  PRIMARY KEY (delivery_id, attempt)
);

-- An account's alert settings (PUT /v1/account/alerts): the usage thresholds in percent of the
-- month's credits (Pay as you Go: of the budget) and the error rate that marks an analytic failing.
CREATE TABLE account_alerts (
  account_id         text PRIMARY KEY REFERENCES accounts(id),
  usage_thresholds   integer[] NOT NULL DEFAULT '{50,80,100}',
  error_rate_percent integer NOT NULL DEFAULT 50 CHECK (error_rate_percent BETWEEN 1 AND 100),
  updated_at         timestamptz NOT NULL DEFAULT now()
);

-- Whether an owner's analytic is failing (its error rate over 5 minutes past the owner's
-- threshold): changed by a conditional update, so `analytic.failing` and `analytic.recovered`
-- are written once per change whichever instance saw it.
CREATE TABLE analytic_health (
  analytic_id  text PRIMARY KEY,
  failing      boolean NOT NULL,
  changed_at   timestamptz NOT NULL DEFAULT now()
);
