-- A deleted analytic's name stays its owner's. Callers address analytics by name alone, so an
-- integration that calls a name must never reach another owner's SQL or price: once an account
-- has used a name, only that account may create an analytic under it again.
CREATE TABLE analytic_names (
  name        text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (name, account_id)
);

-- Names used before this migration go to their live analytic's owner, else to the owner of the
-- analytic deleted last (earlier code let another account take a deleted name).
INSERT INTO analytic_names (name, account_id, created_at)
SELECT DISTINCT ON (name) name, account_id, created_at
  FROM analytics
 ORDER BY name, deleted_at IS NOT NULL, deleted_at DESC, created_at DESC;

-- The store itself refuses an analytic under a name another account holds.
-- NOT VALID: rows from before this migration (an old owner's deleted analytic under a name another
-- account took since) are history and stay as they are; every new row is checked. Soft-deleting
-- an old row does not touch its key columns, so it is not checked either.
ALTER TABLE analytics
  ADD CONSTRAINT analytics_name_owner_fkey FOREIGN KEY (name, account_id)
  REFERENCES analytic_names (name, account_id) NOT VALID;
