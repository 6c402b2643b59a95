// The web console's sign-in: passwords (scrypt, security/password-hash.ts) and sessions
// (store/session-repository.ts). Logins are throttled per client address and per account, in the
// gateway's rate limiter (shared by every instance when they share Redis): only failures count,
// and while either allowance is spent every attempt is refused before any password is checked,
// so guessing costs the guesser time and the gateway no scrypt. Every hash goes through the
// gateway's password hasher, whose limiter answers 429 when too many wait (security/hash-limiter.ts).
import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { FailureThrottle } from '../rate-limit/failure-throttle.js';
import { encodeBase62 } from '../security/base62.js';
import type { PasswordHasher } from '../security/password-hash.js';
import { digestSessionToken, generateSessionToken } from '../security/session-token.js';
import type { Account } from '../store/account-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { ConsoleSession } from '../store/session-repository.js';
import type { Mailer } from './mailer.js';

/** Failed logins an address may make: 20 at once, then one every 30 s. */
export const LOGIN_FAILURES_PER_ADDRESS = { limit: 20, windowSeconds: 600, burst: 20 } as const;
/** How long a password-reset link works. */
export const RESET_LINK_TTL_MS = 30 * 60 * 1000;
/** Password-reset requests an address may make: 5 at once, then one every 12 minutes. */
export const RESETS_PER_ADDRESS = { limit: 5, windowSeconds: 3600, burst: 5 } as const;
/** Password-reset requests for one email, from anywhere: 3 at once, then one every 20 minutes. */
export const RESETS_PER_EMAIL = { limit: 3, windowSeconds: 3600, burst: 3 } as const;

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
  /**
   * Mails a one-time link that sets a new password (RESET_LINK_TTL_MS), when an open account has
   * this email; otherwise does nothing. Callers answer the same either way, without waiting.
   */
  requestPasswordReset(email: string): Promise<void>;
  /**
   * Sets the password with a reset link's token, once; every session of the account ends.
   * INVALID_REQUEST when the link is unknown, used, replaced by a newer one or expired.
   */
  resetPassword(token: string, password: string): Promise<void>;
  /**
   * Changes the email the account logs in with. `current` must be the present password when the
   * account has one, whatever the credential: a key alone must not move the console's login.
   * CONFLICT when another account has the email. The old address is told.
   */
  changeEmail(input: {
    readonly accountId: string;
    readonly email: string;
    readonly current?: string;
  }): Promise<Account>;
  /**
   * Whether `candidate` is the account's password (`hash`), for acts that ask for it again
   * (changing the email or password, deleting the account). Failures count against the account
   * like failed logins (LOGIN_FAILURES_PER_ACCOUNT), so a stolen key cannot guess the password
   * through these routes: RATE_LIMIT_EXCEEDED once they are spent.
   */
  confirmPassword(accountId: string, candidate: string | undefined, hash: string): Promise<boolean>;
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
  /** Sends password-reset links and email-change notices. */
  readonly mailer: Mailer;
  /** The gateway's public URL: reset links point at its console. */
  readonly publicUrl: string;
}

const RESET_PREFIX = 'qpr_';
const RESET_DIGITS = 43;
const RESET_TOKEN = /^qpr_[0-9A-Za-z]{43}$/;

const BAD_RESET =
  'This password-reset link is invalid, used, replaced by a newer one or expired: ask for a new one.';

const BAD_LOGIN = 'The email or password is wrong.';

function throttled(wait: number, what = 'Too many failed logins'): ApiError {
  return new ApiError('RATE_LIMIT_EXCEEDED', `${what}; retry in ${Math.ceil(wait)} s.`, {
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
  async function confirmPassword(accountId: string, candidate: string | undefined, hash: string) {
    const key = `password-confirm-failures:account:${accountId}`;
    const wait = await options.accountFailures.lockedFor(key);
    if (wait > 0) throw throttled(wait, 'Too many wrong passwords');
    // A missing password is not a guess: refused without counting.
    if (candidate === undefined) return false;
    if (await passwords.verify(candidate, hash)) return true;
    await options.accountFailures.recordFailure(key);
    return false;
  }
  return {
    open,
    confirmPassword,
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
        if (!(await confirmPassword(accountId, current, existing))) {
          throw new ApiError('FORBIDDEN', 'The current password is wrong.', {
            details: [{ field: 'current_password', message: 'does not match' }],
          });
        }
      }
      await store.sessions.setPasswordHash(accountId, await passwords.hash(password));
      await store.sessions.revokeAll(accountId, sessionId);
    },
    async requestPasswordReset(email) {
      const account = await store.accounts.findByEmail(email);
      if (account === null || account.closedAt !== null) return;
      const token = RESET_PREFIX + encodeBase62(randomBytes(32), RESET_DIGITS);
      await store.sessions.createReset({
        accountId: account.id,
        digest: digestSessionToken(token),
        expiresAt: new Date(Date.now() + RESET_LINK_TTL_MS),
      });
      // The token rides in the fragment: browsers never send it to a server, so no access log,
      // proxy or Referer carries it.
      const link = `${options.publicUrl}/#/reset?token=${token}`;
      await options.mailer.send({
        to: account.email,
        subject: 'Reset your Quarry password',
        text:
          `Someone (we hope you) asked to reset the password of the Quarry account ${account.email}.\n\n` +
          `Set a new one here within ${RESET_LINK_TTL_MS / 60_000} minutes (the link works once):\n${link}\n\n` +
          'If it was not you, ignore this message: your password stays as it is.\n',
      });
    },
    async resetPassword(token, password) {
      if (!RESET_TOKEN.test(token)) throw new ApiError('INVALID_REQUEST', BAD_RESET);
      // Hashed before the link is used up: a busy hasher (429) leaves the link working.
      const hash = await passwords.hash(password);
      const accountId = await store.sessions.takeReset(digestSessionToken(token));
      if (accountId === null) throw new ApiError('INVALID_REQUEST', BAD_RESET);
      await store.sessions.setPasswordHash(accountId, hash);
      await store.sessions.revokeAll(accountId);
    },
    async changeEmail({ accountId, email, current }) {
      const existing = await store.sessions.passwordHash(accountId);
      if (existing !== null && !(await confirmPassword(accountId, current, existing))) {
        throw new ApiError('FORBIDDEN', 'The current password is wrong.', {
          details: [{ field: 'current_password', message: 'does not match' }],
        });
      }
      const before = await store.accounts.get(accountId);
      const account = await store.accounts.update(accountId, { email });
      if (before !== null && before.email.toLowerCase() !== email.toLowerCase()) {
        options.mailer.sendLater({
          to: before.email,
          subject: 'Your Quarry login email changed',
          text:
            `The Quarry account that used ${before.email} now logs in with ${account.email}.\n\n` +
            'If you did not change it, ask your Quarry operator for help at once.\n',
        });
      }
      return account;
    },
  };
}
