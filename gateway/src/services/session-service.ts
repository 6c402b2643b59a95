// The web console's sign-in: passwords (scrypt, security/password-hash.ts) and sessions
// (store/session-repository.ts). Logins are throttled per client address and per account, in the
// gateway's rate limiter (shared by every instance when they share Redis): only failures count,
// and while either allowance is spent every attempt is refused before any password is checked,
// so guessing costs the guesser time and the gateway no scrypt. Every hash goes through the
// gateway's password hasher, whose limiter answers 429 when too many wait (security/hash-limiter.ts).
import { ApiError } from '../errors/api-error.js';
import type { FailureThrottle } from '../rate-limit/failure-throttle.js';
import type { PasswordHasher } from '../security/password-hash.js';
import { generateSessionToken } from '../security/session-token.js';
import type { Account } from '../store/account-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { ConsoleSession } from '../store/session-repository.js';

/** Failed logins an address may make: 20 at once, then one every 30 s. */
export const LOGIN_FAILURES_PER_ADDRESS = { limit: 20, windowSeconds: 600, burst: 20 } as const;
/** Failed logins into one account, from anywhere: 10 at once, then one a minute. */
export const LOGIN_FAILURES_PER_ACCOUNT = { limit: 10, windowSeconds: 600, burst: 10 } as const;

export interface SignedIn {
  readonly account: Account;
  readonly session: ConsoleSession;
  /** The session token: goes into the cookie and nowhere else. */
  readonly token: string;
}

export interface SessionService {
  /** A session for the account, e.g. right after sign-up. */
  open(account: Account): Promise<SignedIn>;
  /**
   * Checks the email and password; UNAUTHENTICATED (one message for an unknown email, a wrong
   * password, or an account without a password), RATE_LIMIT_EXCEEDED past the throttles or
   * when too many password hashes wait already.
   */
  logIn(email: string, password: string, address: string): Promise<SignedIn>;
  /** Ends the session on every instance. */
  logOut(sessionId: string): Promise<void>;
  /**
   * Sets the account's password. `current` must be the present one when the account has one
   * and the caller is a session (a key holder proves itself with the key). Every other session
   * of the account ends.
   */
  setPassword(input: {
    readonly accountId: string;
    readonly password: string;
    readonly current?: string;
    readonly sessionId?: string;
  }): Promise<void>;
}

export interface SessionServiceOptions {
  readonly store: ControlPlaneStore;
  /** Hashes and verifies passwords through the gateway's hash limiter. */
  readonly passwords: PasswordHasher;
  /** Lifetime of a session from login (absolute: no sliding renewal). */
  readonly ttlSeconds: number;
  /** Failures per address and per account (see the policies above). */
  readonly addressFailures: FailureThrottle;
  readonly accountFailures: FailureThrottle;
  /** Told when a session ends, to drop cached verdicts of try-tokens it minted. */
  readonly onSessionEnded?: (sessionId: string) => void;
}

const BAD_LOGIN = 'The email or password is wrong.';

function throttled(wait: number): ApiError {
  return new ApiError('RATE_LIMIT_EXCEEDED', `Too many failed logins; retry in ${Math.ceil(wait)} s.`, {
    retryAfter: wait,
  });
}

export function createSessionService(options: SessionServiceOptions): SessionService {
  const { store, passwords } = options;
  async function open(account: Account): Promise<SignedIn> {
    const generated = generateSessionToken();
    const session = await store.sessions.create({
      accountId: account.id,
      digest: generated.digest,
      expiresAt: new Date(Date.now() + options.ttlSeconds * 1000),
    });
    return { account, session, token: generated.token };
  }
  return {
    open,
    async logIn(email, password, address) {
      const addressKey = `login-failures:address:${address}`;
      const accountKey = `login-failures:account:${email.toLowerCase()}`;
      const wait = Math.max(
        await options.addressFailures.lockedFor(addressKey),
        await options.accountFailures.lockedFor(accountKey),
      );
      if (wait > 0) throw throttled(wait);
      // Busy: refused before the store is asked anything, so refusals stay cheap.
      passwords.refuseIfBusy();
      const account = await store.accounts.findByEmail(email);
      const hash =
        account === null || account.closedAt !== null ? null : await store.sessions.passwordHash(account.id);
      // Verified against a decoy when there is no hash: the same time whether the email exists.
      // Refused as busy (429), the attempt is not a failure: no password was checked.
      const ok = await passwords.verify(password, hash);
      if (!ok || hash === null || account === null) {
        await options.addressFailures.recordFailure(addressKey);
        await options.accountFailures.recordFailure(accountKey);
        throw new ApiError('UNAUTHENTICATED', BAD_LOGIN);
      }
      return open(account);
    },
    async logOut(sessionId) {
      await store.sessions.revoke(sessionId);
      options.onSessionEnded?.(sessionId);
    },
    async setPassword({ accountId, password, current, sessionId }) {
      const existing = await store.sessions.passwordHash(accountId);
      if (sessionId !== undefined && existing !== null) {
        if (current === undefined || !(await passwords.verify(current, existing))) {
          throw new ApiError('FORBIDDEN', 'The current password is wrong.', {
            details: [{ field: 'current_password', message: 'does not match' }],
          });
        }
      }
      await store.sessions.setPasswordHash(accountId, await passwords.hash(password));
      await store.sessions.revokeAll(accountId, sessionId);
    },
  };
}
