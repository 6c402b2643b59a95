-- Asynchronous queries (docs/large-results.md, "Asynchronous queries"): one row per job, bound to
-- the account (and, for an embed token, to that token) that submitted it. The instance that
-- accepted a job runs it and renews heartbeat_at while it does; any instance marks a queued or
-- running job whose heartbeat lapsed as failed (its instance died), uncharged. The result itself
-- stays in the running instance's result store (result_instance, snapshot_id). Additive only.

CREATE TABLE query_jobs (
  id              text PRIMARY KEY,
  account_id      text NOT NULL REFERENCES accounts(id),
  -- The embed token that submitted it (NULL for an API key): only that token reads it.
  embed_token_id  text,
  source          text NOT NULL,
  version         integer NOT NULL,
  -- The usage event's request id: the job's charge (reserved at submission, committed on success).
  request_id      text NOT NULL UNIQUE,
  state           text NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  instance_id     text NOT NULL,
  heartbeat_at    timestamptz NOT NULL DEFAULT now(),
  timeout_ms      integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  finished_at     timestamptz,
  -- The error envelope's {code, message, details} of a failed job.
  error           jsonb,
  row_count       bigint,
  truncated       boolean,
  credits         bigint,
  snapshot_id     text
);
CREATE INDEX query_jobs_account_idx ON query_jobs (account_id, created_at DESC);
CREATE INDEX query_jobs_live_idx ON query_jobs (heartbeat_at) WHERE state IN ('queued', 'running');
