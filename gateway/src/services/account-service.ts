// Accounts and API keys: sign-up makes the account and its first key in one transaction; a key's
// secret is returned once and only its digest is stored.

import { SCOPES, type Scope } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import { generateApiKey } from '../security/api-key.js';
import type { Account } from '../store/account-repository.js';
import type { ApiKey } from '../store/api-key-repository.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';

export interface NewKeyRequest {
  readonly name: string;
  readonly scopes?: readonly Scope[];
  readonly expiresAt?: Date | null;
}

export interface IssuedKey {
  readonly key: ApiKey;
  /** Shown once. */
  readonly secret: string;
}

export interface AccountService {
  signUp(input: {
    email: string;
    name: string;
    plan?: string;
  }): Promise<{ account: Account; key: IssuedKey }>;
  get(accountId: string): Promise<Account>;
  createKey(accountId: string, request: NewKeyRequest): Promise<IssuedKey>;
  listKeys(accountId: string): Promise<readonly ApiKey[]>;
  revokeKey(accountId: string, keyId: string): Promise<ApiKey>;
}

export function createAccountService(store: ControlPlaneStore): AccountService {
  async function issue(tx: ControlPlaneStore, accountId: string, request: NewKeyRequest): Promise<IssuedKey> {
    if (request.expiresAt && request.expiresAt.getTime() <= Date.now()) {
      throw new ApiError('INVALID_REQUEST', 'expires_at must be in the future.', {
        details: [{ field: 'expires_at', message: 'must be in the future' }],
      });
    }
    const generated = generateApiKey('live');
    const key = await tx.keys.create({
      accountId,
      name: request.name,
      prefix: generated.prefix,
      digest: generated.digest,
      scopes: request.scopes ?? SCOPES,
      expiresAt: request.expiresAt ?? null,
    });
    return { key, secret: generated.secret };
  }

  return {
    signUp(input) {
      return store.transaction(async (tx) => {
        const account = await tx.accounts.create(input);
        const key = await issue(tx, account.id, { name: 'default' });
        return { account, key };
      });
    },
    async get(accountId) {
      const account = await store.accounts.get(accountId);
      if (!account) throw new ApiError('NOT_FOUND', 'No such account.');
      return account;
    },
    createKey: (accountId, request) => issue(store, accountId, request),
    listKeys: (accountId) => store.keys.listForAccount(accountId),
    revokeKey: (accountId, keyId) => store.keys.revoke(accountId, keyId),
  };
}
