-- Additive only from here on, like every migration (docs/deploy.md, "Upgrades and rollbacks").
-- Deleting an account (DELETE /v1/account, docs/money.md "Deleting an account"): the account row
-- stays, closed (`closed_at`, since 001), because its usage events, statements, payouts and
-- invoices name it and are kept. Its login email is freed for a new sign-up: `email` becomes a
-- placeholder that is no address (`closed:<id>`), and the address it had is kept here, for the
-- operator's records of the account's last payout and invoice.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS closed_email text;
