// Closing an account (DELETE /v1/account; docs/money.md, "Deleting an account"), in one
// transaction: the account row is marked closed and its email freed (the address is kept in
// `closed_email`), and everything that lets anyone act as it or reach its data ends: keys, OAuth
// clients (so their access tokens), console sessions, password-reset links; its listings leave the
// marketplace, its analytics are deleted (their names stay its own, so no one else's SQL answers
// them) and its connections deleted with their sealed credentials wiped. Each change is written to
// the change log, so every instance drops its cached keys, clients, analytics, listings and pools.
// Nothing of the money tables is touched: usage events, statements, payouts and invoices stay.
import { StoreError } from '../errors/store-error.js';
import { createChangeLogRepository } from './change-log-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** What closing an account ended. */
export interface AccountClosure {
  readonly accountId: string;
  readonly closedAt: Date;
  /** The address the account logged in with (now free for a new sign-up). */
  readonly email: string;
  readonly keysRevoked: number;
  readonly oauthClientsRevoked: number;
  readonly sessionsEnded: number;
  /** Names of the analytics whose listing left the marketplace. */
  readonly listingsUnpublished: readonly string[];
  /** Names of the analytics deleted (their names stay the closed account's). */
  readonly analyticsDeleted: readonly string[];
  readonly connectionsDeleted: number;
}

export interface AccountClosureRepository {
  /** Closes the account; NOT_FOUND when it does not exist or is closed already. */
  close(accountId: string): Promise<AccountClosure>;
}

/** The email of a closed account: never an address, so no sign-up or change can collide with it. */
export const closedEmail = (accountId: string): string => `closed:${accountId}`;

export function createAccountClosureRepository(sql: SqlExecutor): AccountClosureRepository {
  return {
    close(accountId) {
      return sql.transaction(async (tx) => {
        const [account] = await tx.query<{ closed_at: Date; closed_email: string }>(
          `UPDATE accounts SET closed_at = now(), closed_email = email, email = $2
            WHERE id = $1 AND closed_at IS NULL RETURNING closed_at, closed_email`,
          [accountId, closedEmail(accountId)],
        );
        if (account === undefined) throw new StoreError('NOT_FOUND', `account ${accountId} not found`);
        const changes = createChangeLogRepository(tx);
        const keys = await tx.query<{ id: string }>(
          `UPDATE api_keys SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL RETURNING id`,
          [accountId],
        );
        for (const key of keys) await changes.append('key', key.id);
        const clients = await tx.query<{ id: string }>(
          `UPDATE oauth_clients SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL RETURNING id`,
          [accountId],
        );
        for (const client of clients) await changes.append('oauth_client', client.id);
        const sessions = await tx.query(
          `UPDATE console_sessions SET revoked_at = now()
            WHERE account_id = $1 AND revoked_at IS NULL RETURNING id`,
          [accountId],
        );
        await tx.query(
          'UPDATE password_resets SET used_at = now() WHERE account_id = $1 AND used_at IS NULL',
          [accountId],
        );
        // No one logs in to a closed account: its password hash goes.
        await tx.query('DELETE FROM account_passwords WHERE account_id = $1', [accountId]);
        const unlisted = await tx.query<{ analytic_id: string; name: string }>(
          `UPDATE listings l SET unpublished_at = now(), updated_at = now()
             FROM analytics a
            WHERE l.owner_id = $1 AND l.unpublished_at IS NULL AND a.id = l.analytic_id
            RETURNING l.analytic_id, a.name`,
          [accountId],
        );
        for (const listing of unlisted) await changes.append('listing', listing.analytic_id);
        const deleted = await tx.query<{ name: string }>(
          `UPDATE analytics SET deleted_at = now(), updated_at = now()
            WHERE account_id = $1 AND deleted_at IS NULL RETURNING name`,
          [accountId],
        );
        for (const analytic of deleted) await changes.append('analytic', analytic.name);
        // The owner's warehouse credentials are not kept past the account.
        const connections = await tx.query<{ id: string }>(
          `UPDATE connections SET deleted_at = now(), updated_at = now(), secrets = NULL, secrets_key_id = NULL
            WHERE account_id = $1 AND deleted_at IS NULL RETURNING id`,
          [accountId],
        );
        for (const connection of connections) await changes.append('connection', connection.id);
        // Nothing more is sent on its behalf: its webhook endpoints go, then their pending
        // deliveries. The endpoints first: an event being written for them holds them (FOR SHARE,
        // webhook-repository.ts), so this waits for it, and the deliveries' update, a statement
        // of its own, then sees and fails its delivery too. Locked in id order, as the event's
        // write locks them, so the two never wait on each other in a cycle.
        const endpoints = await tx.query<{ id: string }>(
          `UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
            WHERE id IN (SELECT id FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL
                          ORDER BY id FOR UPDATE)
            RETURNING id`,
          [accountId],
        );
        if (endpoints.length > 0) {
          await tx.query(
            `UPDATE webhook_deliveries SET status = 'failed', last_error = 'account deleted'
              WHERE status = 'pending' AND endpoint_id = ANY ($1::text[])`,
            [endpoints.map((e) => e.id)],
          );
        }
        // Cached principals carry the account: every instance drops them (as for a plan change).
        await changes.append('account_plan', accountId);
        return {
          accountId,
          closedAt: account.closed_at,
          email: account.closed_email,
          keysRevoked: keys.length,
          oauthClientsRevoked: clients.length,
          sessionsEnded: sessions.length,
          listingsUnpublished: unlisted.map((l) => l.name).sort(),
          analyticsDeleted: deleted.map((a) => a.name).sort(),
          connectionsDeleted: connections.length,
        };
      });
    },
  };
}
