-- Owner statements by origin, and payouts (issue 16; docs/money.md). Closing a period freezes
-- each owner's lines (per analytic and origin: calls, millicredits, µUSD value and both shares)
-- and computes the owner's payout in whole cents: what the owner earned in the period plus what
-- was carried from the owner's previous payout, in cents rounded down; the sub-cent remainder
-- (under 10,000 µUSD) is carried into the next payout, never lost. Runs on PostgreSQL 15+ and PGlite.

CREATE TABLE owner_statement_lines (
  period                 char(7) NOT NULL REFERENCES closed_periods (period),
  owner_id               text NOT NULL REFERENCES accounts (id),
  analytic_name          text NOT NULL,
  origin                 text NOT NULL CHECK (origin IN ('paid', 'free', 'marketplace', 'owner')),
  calls                  integer NOT NULL CHECK (calls >= 0),
  millicredits           bigint NOT NULL CHECK (millicredits >= 0),
  owner_millicredits     bigint NOT NULL CHECK (owner_millicredits >= 0),
  platform_millicredits  bigint NOT NULL CHECK (platform_millicredits >= 0),
  value_musd             bigint NOT NULL CHECK (value_musd >= 0),
  owner_musd             bigint NOT NULL CHECK (owner_musd >= 0),
  platform_musd          bigint NOT NULL CHECK (platform_musd >= 0),
  PRIMARY KEY (period, owner_id, analytic_name, origin),
  CONSTRAINT owner_statement_lines_credit_sums CHECK (owner_millicredits + platform_millicredits = millicredits),
  CONSTRAINT owner_statement_lines_money_sums CHECK (owner_musd + platform_musd = value_musd)
);
CREATE INDEX owner_statement_lines_owner_idx ON owner_statement_lines (owner_id, period);

-- Statements frozen before this migration: their calls were paid-origin, in whole credits, and
-- carried no money value.
INSERT INTO owner_statement_lines (period, owner_id, analytic_name, origin, calls, millicredits,
                                   owner_millicredits, platform_millicredits, value_musd, owner_musd, platform_musd)
SELECT period, owner_id, analytic_name, 'paid', calls, credits * 1000, owner_share * 1000, platform_share * 1000,
       0, 0, 0
  FROM owner_statements;
DROP TABLE owner_statements;

-- One row per owner with calls in a closed period. `seq` orders payouts as they were computed:
-- each carries in what the owner's previous one carried out.
CREATE TABLE owner_payouts (
  seq               bigserial UNIQUE,
  period            char(7) NOT NULL REFERENCES closed_periods (period),
  owner_id          text NOT NULL REFERENCES accounts (id),
  carried_in_musd   bigint NOT NULL CHECK (carried_in_musd >= 0 AND carried_in_musd < 10000),
  earned_musd       bigint NOT NULL CHECK (earned_musd >= 0),
  payout_cents      bigint NOT NULL CHECK (payout_cents >= 0),
  carried_out_musd  bigint NOT NULL CHECK (carried_out_musd >= 0 AND carried_out_musd < 10000),
  PRIMARY KEY (period, owner_id),
  CONSTRAINT owner_payouts_nothing_lost CHECK (carried_in_musd + earned_musd = payout_cents * 10000 + carried_out_musd)
);
CREATE INDEX owner_payouts_owner_idx ON owner_payouts (owner_id, seq);
