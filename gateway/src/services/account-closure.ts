// Deleting an account (DELETE /v1/account; docs/money.md, "Deleting an account"). Who may: the
// account holder, proven by the account's email typed back (`confirm`) and, when the account has a
// password, by that password, whatever the credential (a key alone cannot delete the console's
// account; an account made by API without a password is deleted with a key of `account` scope).
// What stays: the money. Usage events, statements, payouts and invoices are kept; an owner whose
// earnings cannot reach it yet (payouts not set up) is asked to set them up first, so its last
// payout is paid (whatever the minimum) at the next close; a subscription ends at the provider; a
// Pay as you Go card stays on file for the month's invoice. Then, in one store transaction,
// everything that acts as the account ends (store/account-closure-repository.ts).
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import type { PaymentsService } from '../money/payments-service.js';
import type { PayoutsService } from '../money/payouts.js';
import { formatUsd, MICRO_USD_PER_CENT } from '../money/units.js';
import type { AccountClosure } from '../store/account-closure-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { SessionService } from './session-service.js';

export interface CloseAccountRequest {
  /** The account's email, typed back. */
  readonly confirm: string;
  /** The account's password, required when it has one. */
  readonly password?: string;
}

export interface ClosedAccount extends AccountClosure {
  readonly subscriptionCancelled: boolean;
  /** What the owner is still to be paid at the next close (µUSD; 0 when nothing). */
  readonly unpaidMicroUsd: number;
}

export interface AccountClosureDeps {
  readonly store: Pick<ControlPlaneStore, 'accounts' | 'sessions' | 'closures'>;
  /** Checks the password, its failures throttled like failed logins. */
  readonly sessions: Pick<SessionService, 'confirmPassword'>;
  readonly payments: Pick<PaymentsService, 'endForClosure'>;
  readonly payouts: Pick<PayoutsService, 'unpaid'>;
  /** Told once the account is closed, to drop this instance's caches at once. */
  readonly onClosed?: (closure: AccountClosure) => void;
}

export async function closeAccount(
  deps: AccountClosureDeps,
  principal: Principal,
  request: CloseAccountRequest,
): Promise<ClosedAccount> {
  if (principal.credential === 'try_token') throw new ApiError('FORBIDDEN', 'Use a key or a session.');
  const account = await deps.store.accounts.get(principal.accountId);
  if (account === null || account.closedAt !== null) throw new ApiError('NOT_FOUND', 'No such account.');
  if (request.confirm.trim().toLowerCase() !== account.email.toLowerCase()) {
    throw new ApiError('INVALID_REQUEST', "Type the account's email in `confirm` to delete it.", {
      details: [{ field: 'confirm', message: "must be the account's email" }],
    });
  }
  const hash = await deps.store.sessions.passwordHash(account.id);
  if (hash !== null) {
    if (!(await deps.sessions.confirmPassword(account.id, request.password, hash))) {
      throw new ApiError(
        'FORBIDDEN',
        request.password === undefined
          ? 'This account has a password: send it in `password` to delete the account.'
          : 'The password is wrong.',
        {
          details: [
            { field: 'password', message: request.password === undefined ? 'required' : 'does not match' },
          ],
        },
      );
    }
  }
  // Earnings that could not reach their owner after it leaves: refused until payouts are set up.
  const { unpaidMicroUsd, reachable } = await deps.payouts.unpaid(account.id);
  if (unpaidMicroUsd >= MICRO_USD_PER_CENT && !reachable) {
    throw new ApiError(
      'CONFLICT',
      `You have ${formatUsd(unpaidMicroUsd)} USD of earnings not paid out yet, and payouts are not set up: set them up first (POST /v1/owner/payouts/onboarding, or Statements → Payouts in the console), so your last payout can reach you.`,
      { details: [{ field: 'payouts', message: 'not set up' }] },
    );
  }
  // The provider first: a failure there leaves the account whole, to delete again.
  const { subscriptionCancelled } = await deps.payments.endForClosure(account.id);
  const closure = await deps.store.closures.close(account.id);
  deps.onClosed?.(closure);
  return { ...closure, subscriptionCancelled, unpaidMicroUsd: Math.max(0, unpaidMicroUsd) };
}
