-- Payments (docs/money.md, "Paying for a plan"): each account's standing with the payment
-- provider, the provider's events applied once each, Pay as you Go invoices (one an account and
-- period), and refunds or disputes recorded for the owners' adjustments.

-- One row an account that ever started a checkout. The provider's objects are the truth; this is
-- what the gateway last read of them.
CREATE TABLE billing_accounts (
  account_id            text PRIMARY KEY REFERENCES accounts (id),
  provider              text NOT NULL CHECK (provider IN ('sandbox', 'stripe')),
  customer_id           text NOT NULL,
  subscription_id       text,
  -- The plan the subscription pays for.
  subscription_plan     text,
  status                text NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'active', 'past_due', 'canceled')),
  current_period_end    timestamptz,
  cancel_at_period_end  boolean NOT NULL DEFAULT false,
  -- A downgrade or a cancel: the plan the account moves to at pending_at.
  pending_plan          text,
  pending_at            timestamptz,
  -- When a payment first failed; the account falls back to Free after the grace period.
  past_due_since        timestamptz,
  card_on_file          boolean NOT NULL DEFAULT false,
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT billing_accounts_pending CHECK ((pending_plan IS NULL) = (pending_at IS NULL))
);
CREATE UNIQUE INDEX billing_accounts_customer ON billing_accounts (provider, customer_id);
CREATE INDEX billing_accounts_due ON billing_accounts (pending_at) WHERE pending_at IS NOT NULL;
CREATE INDEX billing_accounts_past_due ON billing_accounts (past_due_since) WHERE past_due_since IS NOT NULL;

-- Every provider event applied, by id: a replayed delivery changes nothing.
CREATE TABLE payment_events (
  provider     text NOT NULL,
  event_id     text NOT NULL,
  type         text NOT NULL,
  account_id   text,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);

-- A Pay as you Go account's invoice for one closed period: claimed before the provider is asked,
-- so closing a period twice, or on two instances, invoices once.
CREATE TABLE payg_invoices (
  account_id        text NOT NULL REFERENCES accounts (id),
  period            char(7) NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  provider          text NOT NULL,
  -- The period's Pay as you Go value plus the sub-cent rest carried from the last invoice.
  amount_musd       bigint NOT NULL CHECK (amount_musd >= 0),
  amount_cents      bigint NOT NULL CHECK (amount_cents >= 0),
  carry_musd        bigint NOT NULL CHECK (carry_musd >= 0 AND carry_musd < 10000),
  lines             jsonb NOT NULL,
  invoice_id        text,
  status            text NOT NULL CHECK (status IN ('pending', 'paid', 'failed', 'nothing_due')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, period),
  CONSTRAINT payg_invoices_amount CHECK (amount_cents * 10000 + carry_musd = amount_musd)
);

-- A refund or dispute of a payment: recorded once, for the owners' adjustments on a later statement.
CREATE TABLE payment_adjustments (
  provider         text NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('refund', 'dispute')),
  reference        text NOT NULL,
  account_id       text NOT NULL REFERENCES accounts (id),
  charge_id        text,
  invoice_id       text,
  amount_cents     bigint NOT NULL CHECK (amount_cents >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, kind, reference)
);
