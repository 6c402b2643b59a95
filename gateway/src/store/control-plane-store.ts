// The control-plane store the gateway is built on: one object holding every repository over
// one SQL client (PGlite embedded, or PostgreSQL with DATABASE_URL). `transaction` gives the
// same store bound to one transaction, so multi-step writes (sign-up: account + first key)
// are all-or-nothing.

import type { SecretBox } from '../security/secret-box.js';
import {
  type AccountClosureRepository,
  createAccountClosureRepository,
} from './account-closure-repository.js';
import type { AccountLimits } from './account-limits.js';
import { type AccountRepository, createAccountRepository } from './account-repository.js';
import { type AgentToolRepository, createAgentToolRepository } from './agent-tool-repository.js';
import { type AnalyticRepository, createAnalyticRepository } from './analytic-repository.js';
import {
  type AnalyticVersionRepository,
  createAnalyticVersionRepository,
} from './analytic-version-repository.js';
import { type ApiKeyRepository, createApiKeyRepository } from './api-key-repository.js';
import { type ChangeLogRepository, createChangeLogRepository } from './change-log-repository.js';
import { type ConnectionRepository, createConnectionRepository } from './connection-repository.js';
import { createEmbedRepository, type EmbedRepository } from './embed-repository.js';
import { createFailedCallRepository, type FailedCallRepository } from './failed-call-repository.js';
import { createIdempotencyRepository, type IdempotencyRepository } from './idempotency-repository.js';
import { createJobRepository, type JobRepository } from './job-repository.js';
import { createListingRepository, type ListingRepository } from './listing-repository.js';
import { createOAuthClientRepository, type OAuthClientRepository } from './oauth-client-repository.js';
import {
  createOAuthSigningKeyRepository,
  type OAuthSigningKeyRepository,
} from './oauth-signing-key-repository.js';
import { createSealedSecretsRepository, type SealedSecretsRepository } from './sealed-secrets-repository.js';
import { createSessionRepository, type SessionRepository } from './session-repository.js';
import type { SqlExecutor } from './sql-client.js';
import { createWebhookRepository, type WebhookRepository } from './webhook-repository.js';

/** Options for {@link createControlPlaneStore}. */
export interface ControlPlaneStoreOptions {
  /** Seals connection secrets and OAuth signing keys at rest, and opens them. */
  readonly secretBox: SecretBox;
  /** What one account may hold; the defaults of account-limits.ts when absent. */
  readonly limits?: AccountLimits;
}

/** Every control-plane repository over one database. */
export interface ControlPlaneStore {
  readonly accounts: AccountRepository;
  /** Closing an account: everything that acts as it ends, in one transaction. */
  readonly closures: AccountClosureRepository;
  readonly keys: ApiKeyRepository;
  readonly connections: ConnectionRepository;
  readonly analytics: AnalyticRepository;
  /** Versions callers pin: deprecations, pins and pinned calls (migration 024). */
  readonly analyticVersions: AnalyticVersionRepository;
  readonly agentTools: AgentToolRepository;
  readonly failedCalls: FailedCallRepository;
  readonly changes: ChangeLogRepository;
  readonly idempotency: IdempotencyRepository;
  /** Embed secrets, the versions embed tokens pin, the account's CORS setting. */
  readonly embed: EmbedRepository;
  /** Marketplace listings. */
  readonly listings: ListingRepository;
  readonly oauthClients: OAuthClientRepository;
  /** The OAuth access tokens' signing keys (private keys sealed with the secret box). */
  readonly signingKeys: OAuthSigningKeyRepository;
  /** The console's sign-in sessions and account passwords. */
  readonly sessions: SessionRepository;
  /** What the secret box sealed, across tables: the key check at start, the re-seal after a rotation. */
  readonly sealedSecrets: SealedSecretsRepository;
  /** Webhook endpoints (secrets sealed), the event outbox and its deliveries; alert settings. */
  readonly webhooks: WebhookRepository;
  /** Asynchronous query jobs (query/jobs.ts). */
  readonly jobs: JobRepository;
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
    closures: createAccountClosureRepository(sql),
    keys: createApiKeyRepository(sql, options.limits),
    connections: createConnectionRepository(sql, options.secretBox, options.limits),
    analytics: createAnalyticRepository(sql, options.limits),
    analyticVersions: createAnalyticVersionRepository(sql),
    agentTools: createAgentToolRepository(sql),
    failedCalls: createFailedCallRepository(sql),
    changes: createChangeLogRepository(sql),
    idempotency: createIdempotencyRepository(sql),
    listings: createListingRepository(sql),
    embed: createEmbedRepository(sql, options.secretBox),
    oauthClients: createOAuthClientRepository(sql, options.limits),
    signingKeys: createOAuthSigningKeyRepository(sql, options.secretBox),
    sealedSecrets: createSealedSecretsRepository(sql, options.secretBox),
    sessions: createSessionRepository(sql),
    webhooks: createWebhookRepository(sql, options.secretBox),
    jobs: createJobRepository(sql),
    transaction: (fn) => sql.transaction((tx) => fn(createControlPlaneStore(tx, options))),
  };
}
