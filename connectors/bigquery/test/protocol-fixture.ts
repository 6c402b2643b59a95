// Test code shared by the protocol suites: a fake BigQuery with a service account it trusts,
// connectors opened on it (closed together), and helpers to run queries and to read the requests
// the fake recorded.
import type { BigQuery } from '@google-cloud/bigquery';
import {
  type Connector,
  type ConnectorError,
  checkParamSchema,
  createConnector,
  createDestinationGuard,
  isConnectorError,
  OPERATOR_TRUSTED,
  type ParamValues,
  parseConnectorConfig,
  parseTemplate,
  type QueryResult,
  validateParams,
} from '@quarry/sdk-connector';
import { bigqueryHosts, createBigqueryClient } from '../src/bigquery-driver.js';
import { createBigqueryHttp } from '../src/bigquery-http.js';
import { bigqueryPlugin } from '../src/bigquery-plugin.js';
import {
  type FakeBigquery,
  type FakeBigqueryOptions,
  type RecordedRequest,
  startFakeBigquery,
} from './fake-bigquery-server.js';
import { createTestServiceAccount, type TestServiceAccount } from './test-service-account.js';

export const PROJECT = 'quarry-test';
export const DATASET = 'shop';
/** GoogleSQL that runs far past any test's time limit (a 10^12-row cross join). */
export const SLOW_SQL =
  'SELECT COUNT(*) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS a CROSS JOIN UNNEST(GENERATE_ARRAY(1, 1000000)) AS b';

/** A fake and a service account whose key file points at its token endpoint. */
export interface TrustedFake {
  readonly fake: FakeBigquery;
  readonly account: TestServiceAccount;
}

/** Starts a fake (project PROJECT, dataset DATASET) trusting a new service account. */
export async function startTrustedFake(options: Partial<FakeBigqueryOptions> = {}): Promise<TrustedFake> {
  const fake = await startFakeBigquery({ projectId: PROJECT, datasets: [DATASET], ...options });
  const account = createTestServiceAccount(fake.tokenUri);
  fake.addServiceAccount(account.email, account.publicKeyPem);
  return { fake, account };
}

/** Connectors a suite opened, closed together after each test. */
export class OpenConnectors {
  private readonly opened: Connector[] = [];

  /** A connector on `target` with its account's key, dataset DATASET, and `extra` config. */
  async open(target: TrustedFake, extra: Record<string, unknown> = {}): Promise<Connector> {
    return this.track(
      await createConnector(bigqueryPlugin, {
        projectId: PROJECT,
        dataset: DATASET,
        apiEndpoint: target.fake.url,
        credentials: target.account.keyFile,
        ...extra,
      }),
    );
  }

  track(connector: Connector): Connector {
    this.opened.push(connector);
    return connector;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.opened.splice(0).map((connector) => connector.close()));
  }
}

/**
 * Runs `use` with a bare driver client for `rawConfig` (as a session gets it, under the
 * operator's policy), then closes its sockets.
 */
export async function withDriverClient<T>(
  rawConfig: Record<string, unknown>,
  use: (client: BigQuery) => Promise<T>,
): Promise<T> {
  const config = parseConnectorConfig(bigqueryPlugin, rawConfig);
  const http = createBigqueryHttp(createDestinationGuard(OPERATOR_TRUSTED), bigqueryHosts(config));
  try {
    return await use(createBigqueryClient(config, http));
  } finally {
    http.destroy();
  }
}

/** Validated params for `input` (throws when the schema refuses it). */
export function params(schema: Record<string, unknown>, input: Record<string, unknown>): ParamValues {
  const checked = validateParams(checkParamSchema(schema), input);
  if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
  return checked.values;
}

/** Runs a `:name` template through `connector`. */
export function query(
  connector: Connector,
  sql: string,
  values: ParamValues = {},
  limits: { maxRows?: number; timeoutMs?: number; maxBytesBilled?: number; signal?: AbortSignal } = {},
): Promise<QueryResult> {
  return connector.query({ template: parseTemplate(sql, bigqueryPlugin.dialect), params: values, ...limits });
}

/** The ConnectorError `promise` rejects with; fails on success or on any other error. */
export async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    if (isConnectorError(error)) return error;
    throw error;
  }
  throw new Error('expected a ConnectorError');
}

/** Query job inserts (not session dry runs) `fake` received since request `from`. */
export function jobInserts(fake: FakeBigquery, from = 0): RecordedRequest[] {
  return fake.requests
    .slice(from)
    .filter(
      (r) =>
        r.method === 'POST' &&
        r.path.endsWith('/jobs') &&
        (r.body as { configuration?: { dryRun?: boolean } }).configuration?.dryRun !== true,
    );
}

/** The getQueryResults requests `fake` received for a job. */
export function resultPolls(fake: FakeBigquery, jobId: string): RecordedRequest[] {
  return fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/queries/${jobId}`));
}

/** The job id an insert request carried. */
export function jobIdOf(insert: RecordedRequest | undefined): string {
  const body = insert?.body as { jobReference?: { jobId?: string } } | undefined;
  const jobId = body?.jobReference?.jobId;
  if (jobId === undefined) throw new Error('no job insert was recorded');
  return jobId;
}

/** Resolves once `fake` runs a job whose SQL contains `marker`. */
export async function untilRunning(fake: FakeBigquery, marker: string): Promise<void> {
  while (fake.runningQueries(marker) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}
