// The clients' conformance cases (clients/conformance/cases/*.json, described in
// clients/conformance/README.md): loaded once here for the TypeScript runner and the scenario
// proxy, which checks each case's `traffic` expectations against what a client really sent.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../gateway-process.js';

/** What a client sends and sees in one case; see clients/conformance/README.md. */
export type Scenario = 'pass' | 'slow' | 'short-token' | 'reject-first-token' | 'lose-first-query';

export interface ClientSettings {
  readonly retries?: number;
  readonly timeout_seconds?: number;
}

export interface ErrorExpectation {
  readonly family: string;
  readonly code?: string;
  readonly status?: number;
  readonly request_id?: boolean;
  readonly retry_after?: 'positive';
  readonly detail_params?: readonly string[];
  /** Each named detail (by its `field` or `param`) has this `value`. */
  readonly detail_values?: Readonly<Record<string, number>>;
  /** The error as text (the message a log shows) names its code and its request id. */
  readonly text_names_code_and_request_id?: boolean;
}

export interface StepExpectation {
  readonly result?: unknown;
  readonly contains?: unknown;
  readonly absent_field?: string;
  readonly error?: ErrorExpectation;
  readonly usage_since?: { readonly saved: string; readonly calls: number; readonly credits: number };
}

export interface Step {
  readonly op:
    | 'query'
    | 'analytics.get'
    | 'keys.create'
    | 'keys.list'
    | 'keys.revoke'
    | 'usage'
    | 'sleep'
    | 'marketplace.search'
    | 'marketplace.searchAll'
    | 'marketplace.get'
    | 'marketplace.tryToken'
    | 'connections.create'
    | 'analytics.deploy'
    | 'listings.publish'
    | 'statements.get'
    | 'budget.get'
    | 'budget.set'
    | 'tools.list'
    | 'tools.add'
    | 'tools.remove'
    | 'mcp.get'
    | 'mcp.set'
    | 'account.get'
    | 'account.setPassword'
    | 'plans.list'
    | 'billing.get'
    | 'billing.checkout'
    | 'billing.portal'
    | 'payouts.onboarding'
    | 'payouts.account'
    | 'payouts.list'
    | 'oauthClients.create'
    | 'oauthClients.list'
    | 'oauthClients.revoke'
    | 'embedTokens.create'
    | 'embedSecrets.create'
    | 'embedSecrets.list'
    | 'embedSecrets.rotate'
    | 'embedSecrets.revoke'
    | 'cors.get'
    | 'cors.set'
    | 'connectors.list'
    | 'connections.list'
    | 'connections.get'
    | 'connections.test'
    | 'connections.update'
    | 'connections.delete'
    | 'analytics.dryRun'
    | 'analytics.create'
    | 'analytics.update'
    | 'analytics.describe'
    | 'calls.list'
    | 'calls.listAll'
    | 'analytics.versions'
    | 'analytics.deprecate'
    | 'analytics.undeprecate'
    | 'analytics.list'
    | 'analytics.purgeCache'
    | 'analytics.delete'
    | 'listings.get'
    | 'listings.unpublish'
    | 'signUp';
  // biome-ignore lint/suspicious/noExplicitAny: case inputs are arbitrary JSON, read per operation.
  readonly input?: any;
  readonly client?: ClientSettings;
  readonly credential?: string;
  readonly save?: string;
  readonly max_seconds?: number;
  readonly expect?: StepExpectation;
}

export interface TrafficExpectation {
  readonly requests?: readonly string[];
  readonly idempotency_key?: readonly number[];
  readonly same_idempotency_key?: readonly (readonly [number, number])[];
  readonly waited_retry_after?: readonly (readonly [number, number])[];
  readonly same_bearer?: readonly (readonly [number, number])[];
  readonly different_bearer?: readonly (readonly [number, number])[];
}

export interface ConformanceCase {
  /** The file name without `.json`, e.g. `08-rate-limit-then-success`. */
  readonly name: string;
  readonly description: string;
  readonly credential: string;
  readonly scenario?: Scenario;
  readonly client?: ClientSettings;
  readonly steps: readonly Step[];
  readonly traffic?: TrafficExpectation;
}

export const CONFORMANCE_DIR = join(REPO_ROOT, 'clients', 'conformance');
const CASES_DIR = join(CONFORMANCE_DIR, 'cases');

/** Every case, in file-name order (the order every runner uses). */
export function loadConformanceCases(): ConformanceCase[] {
  return readdirSync(CASES_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const body = JSON.parse(readFileSync(join(CASES_DIR, file), 'utf8')) as Omit<ConformanceCase, 'name'>;
      return { name: file.slice(0, -'.json'.length), ...body };
    });
}
