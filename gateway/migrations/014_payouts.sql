-- Owners are paid (docs/money.md, "Owners' payouts"): where each owner is paid (its connected
-- account at the payment provider), reversals of owner shares when a caller's payment is
-- refunded or disputed, each payout's state and transfer, and which instance closes a month.

-- Where an owner is paid: its connected account, as the gateway last read it.
CREATE TABLE payout_accounts (
  owner_id              text PRIMARY KEY REFERENCES accounts (id),
  provider              text NOT NULL CHECK (provider IN ('sandbox', 'stripe')),
  connected_account_id  text NOT NULL,
  details_submitted     boolean NOT NULL DEFAULT false,
  payouts_enabled       boolean NOT NULL DEFAULT false,
  -- What the provider still needs before it pays out (field names, as it gives them).
  requirements          jsonb NOT NULL DEFAULT '[]',
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX payout_accounts_connected ON payout_accounts (provider, connected_account_id);

-- A refunded or disputed caller payment takes back the owner's (and the platform's) shares of the
-- credits it paid for: one row an owner and analytic, netted against the owner's next payout
-- (`applied_period`: the close that netted it).
CREATE TABLE owner_adjustments (
  provider        text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('refund', 'dispute')),
  reference       text NOT NULL,
  owner_id        text NOT NULL REFERENCES accounts (id),
  analytic_name   text NOT NULL,
  payer_id        text NOT NULL REFERENCES accounts (id),
  usage_period    char(7) NOT NULL CHECK (usage_period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  owner_musd      bigint NOT NULL CHECK (owner_musd >= 0),
  platform_musd   bigint NOT NULL CHECK (platform_musd >= 0),
  applied_period  char(7),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, kind, reference, owner_id, analytic_name)
);
CREATE INDEX owner_adjustments_unapplied ON owner_adjustments (owner_id) WHERE applied_period IS NULL;

-- The period a refunded payment paid for, and its amount (a partial refund takes back its share).
ALTER TABLE payment_adjustments
  ADD COLUMN usage_period char(7),
  ADD COLUMN paid_cents bigint CHECK (paid_cents IS NULL OR paid_cents >= 0);

-- A payout is held (below the minimum, not onboarded, or a negative balance: the whole payable
-- amount carried, which may now be negative), pending (a transfer to make), paid, failed (carried
-- and tried again at the next close), reversed, or `operator` (no payment provider: the operator
-- pays it by hand, as before this migration). Adjustments are netted in.
ALTER TABLE owner_payouts DROP CONSTRAINT owner_payouts_nothing_lost;
ALTER TABLE owner_payouts DROP CONSTRAINT owner_payouts_carried_in_musd_check;
ALTER TABLE owner_payouts DROP CONSTRAINT owner_payouts_carried_out_musd_check;
ALTER TABLE owner_payouts
  ADD COLUMN adjusted_musd bigint NOT NULL DEFAULT 0 CHECK (adjusted_musd >= 0),
  ADD COLUMN status text NOT NULL DEFAULT 'operator'
    CHECK (status IN ('held', 'pending', 'paid', 'failed', 'reversed', 'operator')),
  ADD COLUMN reason text,
  ADD COLUMN transfer_id text,
  ADD COLUMN paid_at timestamptz,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE owner_payouts ADD CONSTRAINT owner_payouts_nothing_lost
  CHECK (carried_in_musd + earned_musd - adjusted_musd = payout_cents * 10000 + carried_out_musd);
ALTER TABLE owner_payouts ADD CONSTRAINT owner_payouts_paid_has_cents
  CHECK (status NOT IN ('pending', 'paid') OR payout_cents > 0);
CREATE INDEX owner_payouts_pending ON owner_payouts (period) WHERE status = 'pending';

-- Closing a month: one instance at a time holds the claim (a lease it renews); one that dies
-- mid-close lets it lapse and another resumes (every step is idempotent).
CREATE TABLE period_closes (
  period         char(7) PRIMARY KEY CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  claimed_by     text NOT NULL,
  claimed_until  timestamptz NOT NULL,
  finished_at    timestamptz
);
