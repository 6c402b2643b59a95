// Accounts and API keys: sign-up makes the account and its first key in one transaction; a key's
// secret is returned once and only its digest is stored. A key never gets a scope its creator
// lacks (docs/design.md §4), as OAuth clients never do (oauth/client-service.ts).

import { grantableScopes, SCOPES, type Scope } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import type { MoneyStore } from '../money/money-store.js';
import type { RateLimitOverride } from '../rate-limit/plan-policies.js';
import { generateApiKey } from '../security/api-key.js';
import type { Account, ListOptions } from '../store/account-repository.js';
import type { ApiKey } from '../store/api-key-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';

/** Who creates a key: its account and the scopes it may pass on (a Principal is one). */
export interface KeyCreator {
  readonly accountId: string;
  readonly scopes: readonly Scope[];
}

export interface NewKeyRequest {
  readonly name: string;
  /** Defaults to every scope of the creator. */
  readonly scopes?: readonly Scope[];
  readonly expiresAt?: Date | null;
}

export interface IssuedKey {
  readonly key: ApiKey;
  /** Shown once. */
  readonly secret: string;
}

export interface AccountService {
  /** `passwordHash`: the console's sign-up stores the password's hash in the same transaction. */
  signUp(input: {
    email: string;
    name: string;
    plan?: string;
    passwordHash?: string;
  }): Promise<{ account: Account; key: IssuedKey }>;
  get(accountId: string): Promise<Account>;
  /** A key of the creator's account; FORBIDDEN for a scope the creator lacks. */
  createKey(creator: KeyCreator, request: NewKeyRequest): Promise<IssuedKey>;
  listKeys(accountId: string): Promise<readonly ApiKey[]>;
  revokeKey(accountId: string, keyId: string): Promise<ApiKey>;
  /** Operator: a page of accounts, each with its calls counted in `period`. */
  listWithCalls(
    page: ListOptions,
    period: string,
  ): Promise<readonly { readonly account: Account; readonly calls: number }[]>;
  /** Operator: moves an account to `plan` (verified credentials then forget their plan). */
  setPlan(accountId: string, plan: string): Promise<Account>;
  /** Operator: sets (or, with null, lifts) a key's rate-limit override. */
  setKeyRateLimit(keyId: string, override: RateLimitOverride | null): Promise<ApiKey>;
}

export interface AccountServiceOptions {
  /** Told when a plan or a key's limit changes, so cached verdicts are dropped at once here. */
  readonly onPlanChanged?: (accountId: string) => void;
  readonly onKeyChanged?: (keyId: string) => void;
}

export function createAccountService(
  store: ControlPlaneStore,
  money: MoneyStore,
  options: AccountServiceOptions = {},
): AccountService {
  async function issue(
    tx: ControlPlaneStore,
    creator: KeyCreator,
    request: NewKeyRequest,
  ): Promise<IssuedKey> {
    const scopes = grantableScopes(request.scopes, creator.scopes, 'key');
    if (request.expiresAt && request.expiresAt.getTime() <= Date.now()) {
      throw new ApiError('INVALID_REQUEST', 'expires_at must be in the future.', {
        details: [{ field: 'expires_at', message: 'must be in the future' }],
      });
    }
    const generated = generateApiKey('live');
    const key = await tx.keys.create({
      accountId: creator.accountId,
      name: request.name,
      prefix: generated.prefix,
      digest: generated.digest,
      scopes,
      expiresAt: request.expiresAt ?? null,
    });
    return { key, secret: generated.secret };
  }

  return {
    signUp(input) {
      return store.transaction(async (tx) => {
        const { passwordHash, ...fields } = input;
        const account = await tx.accounts.create(fields);
        if (passwordHash !== undefined) await tx.sessions.setPasswordHash(account.id, passwordHash);
        // The account's first key: every scope, as its owner holds them all.
        const key = await issue(tx, { accountId: account.id, scopes: SCOPES }, { name: 'default' });
        return { account, key };
      });
    },
    async get(accountId) {
      const account = await store.accounts.get(accountId);
      if (!account) throw new ApiError('NOT_FOUND', 'No such account.');
      return account;
    },
    createKey: (creator, request) => issue(store, creator, request),
    listKeys: (accountId) => store.keys.listForAccount(accountId),
    revokeKey: (accountId, keyId) => store.keys.revoke(accountId, keyId),
    async listWithCalls(page, period) {
      const accounts = await store.accounts.list(page);
      const calls = await Promise.all(accounts.map((a) => money.usage.counter(a.id, period)));
      return accounts.map((account, i) => ({ account, calls: Number(calls[i] ?? 0) }));
    },
    async setPlan(accountId, plan) {
      const account = await store.accounts.setPlan(accountId, plan);
      options.onPlanChanged?.(accountId);
      return account;
    },
    async setKeyRateLimit(keyId, override) {
      const key = await store.keys.setRateLimit(keyId, override);
      options.onKeyChanged?.(key.id);
      return key;
    },
  };
}
