-- Agent tools and failed calls (issue 29).
--
-- account_tools: the analytics of other owners an account chose as its agents' MCP tools
-- (its own analytics are tools without a row). Keyed by name: a name stays with its owner even
-- after a delete (migration 007), so a row never comes to mean another owner's analytic; a row
-- whose analytic is deleted or no longer callable by the account is simply not offered.
CREATE TABLE account_tools (
  account_id  text NOT NULL REFERENCES accounts (id),
  name        text NOT NULL,
  added_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, name)
);

-- The account's MCP settings: the price limit of a tool call that names no `max_credits`
-- (NULL: none).
CREATE TABLE account_mcp_settings (
  account_id   text PRIMARY KEY REFERENCES accounts (id),
  max_credits  bigint CHECK (max_credits >= 1),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Failed calls that ran in an owner's warehouse (timeouts, results too large, warehouse
-- errors): free for the caller, shown to the owner on its statement by caller. Kept apart from
-- usage_events (the ledger of charged calls) on purpose: nothing here is money.
CREATE TABLE failed_calls (
  request_id    text PRIMARY KEY,
  owner_id      text NOT NULL,
  analytic_id   text NOT NULL,
  analytic_name text NOT NULL,
  account_id    text NOT NULL,
  code          text NOT NULL,
  warehouse_ms  integer NOT NULL CHECK (warehouse_ms >= 0),
  failed_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX failed_calls_owner_idx ON failed_calls (owner_id, failed_at);
