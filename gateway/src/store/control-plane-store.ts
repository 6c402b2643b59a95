// The control-plane store the gateway is built on: one object holding every repository over
// one SQL client (PGlite embedded, or PostgreSQL with DATABASE_URL). `transaction` gives the
// same store bound to one transaction, so multi-step writes (sign-up: account + first key)
// are all-or-nothing.
import type { SecretBox } from '../security/secret-box.js';
import { type AccountRepository, createAccountRepository } from './account-repository.js';
import { type AnalyticRepository, createAnalyticRepository } from './analytic-repository.js';
import { type ApiKeyRepository, createApiKeyRepository } from './api-key-repository.js';
import { type ChangeLogRepository, createChangeLogRepository } from './change-log-repository.js';
import { type ConnectionRepository, createConnectionRepository } from './connection-repository.js';
import type { SqlExecutor } from './sql-client.js';

/** Options for {@link createControlPlaneStore}. */
export interface ControlPlaneStoreOptions {
  /** Seals connection secrets at rest and opens them for connectors. */
  readonly secretBox: SecretBox;
}

/** Every control-plane repository over one database. */
export interface ControlPlaneStore {
  readonly accounts: AccountRepository;
  readonly keys: ApiKeyRepository;
  readonly connections: ConnectionRepository;
  readonly analytics: AnalyticRepository;
  readonly changes: ChangeLogRepository;
  /** Runs `fn` with a store whose every call is part of one transaction. */
  transaction<T>(fn: (store: ControlPlaneStore) => Promise<T>): Promise<T>;
}

/**
 * Builds the store over `sql` (run {@link migrate} on it first). The store does not own the
 * client: close the client yourself at shutdown.
 */
export function createControlPlaneStore(
  sql: SqlExecutor,
  options: ControlPlaneStoreOptions,
): ControlPlaneStore {
  return {
    accounts: createAccountRepository(sql),
    keys: createApiKeyRepository(sql),
    connections: createConnectionRepository(sql, options.secretBox),
    analytics: createAnalyticRepository(sql),
    changes: createChangeLogRepository(sql),
    transaction: (fn) => sql.transaction((tx) => fn(createControlPlaneStore(tx, options))),
  };
}
