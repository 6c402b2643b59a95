// Opens BigQuery sessions: each gets its own driver client and auth client (so each holds its own
// access token), and is checked with a dry-run `SELECT 1` before use, which proves in one request
// that the endpoint answers, the credentials work and they may run query jobs in the project.
import { BigQuery } from '@google-cloud/bigquery';
import {
  type ConnectorDriver,
  ConnectorError,
  type ConnectorSession,
  createGuardedAgents,
  type DriverContext,
  type GuardedAgents,
  isConnectorError,
} from '@quarry/sdk-connector';
import { createServiceAccountClient } from './bigquery-auth.js';
import { type BigqueryConfig, DEFAULT_API_ENDPOINT } from './bigquery-config.js';
import { mapBigqueryError } from './bigquery-errors.js';
import { createBigquerySession } from './bigquery-session.js';

export { DEFAULT_API_ENDPOINT } from './bigquery-config.js';

const DEFAULT_PAGE_SIZE = 10_000;
/** How the gateway's own identity is named in refusals. */
const ADC = 'BigQuery application-default credentials';
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Longest pause between retries of one request, in seconds (retry-request's unit). */
const MAX_RETRY_DELAY_SECONDS = 1;

/** A driver client for one session; token requests go through `agents` when given. Exported for tests. */
export function createBigqueryClient(config: BigqueryConfig, agents?: GuardedAgents): BigQuery {
  const apiEndpoint = config.apiEndpoint ?? DEFAULT_API_ENDPOINT;
  const maxRetries = config.maxRetries ?? DEFAULT_MAX_RETRIES;
  const client = new BigQuery({
    projectId: config.projectId,
    apiEndpoint,
    userAgent: 'quarry',
    retryOptions: {
      autoRetry: maxRetries > 0,
      maxRetries,
      maxRetryDelay: MAX_RETRY_DELAY_SECONDS,
    },
    ...(config.location === undefined ? {} : { location: config.location }),
    // With a key, an explicit client: the driver never looks for application-default
    // credentials, so it never probes the metadata server.
    ...(config.credentials === undefined
      ? {}
      : {
          authClient: createServiceAccountClient(config.credentials, {
            timeoutMs: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
            ...(agents === undefined ? {} : { agents }),
          }),
        }),
  });
  // The driver lets the BIGQUERY_EMULATOR_HOST environment variable replace the endpoint; a
  // connection's requests (and its tokens) go where its config says, and nowhere else.
  client.baseUrl = `${apiEndpoint}/bigquery/v2`;
  return client;
}

/** Rejects with CONNECT_FAILED when `promise` has not settled within `ms`. */
function withinTime<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ConnectorError('CONNECT_FAILED', `BigQuery did not answer within ${ms} ms`, {
            driverCode: 'CONNECT_TIMEOUT',
          }),
        ),
      ms,
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The dry-run check a new session must pass: any failure means the session cannot work. */
async function checkSession(client: BigQuery, config: BigqueryConfig): Promise<void> {
  try {
    await client.createQueryJob({
      query: 'SELECT 1',
      useLegacySql: false,
      dryRun: true,
      ...(config.location === undefined ? {} : { location: config.location }),
    });
  } catch (error) {
    const mapped = mapBigqueryError(error);
    if (mapped.code === 'CONNECT_FAILED') throw mapped;
    throw new ConnectorError('CONNECT_FAILED', `BigQuery refused to run queries: ${mapped.message}`, {
      cause: error,
      ...(mapped.driverCode === undefined ? {} : { driverCode: mapped.driverCode }),
    });
  }
}

/** Creates the driver for one validated BigQuery config. */
export function createBigqueryDriver(config: BigqueryConfig, context: DriverContext): ConnectorDriver {
  const guard = context.destinations;
  // Checked before the driver could look for them (it probes the metadata server to find them).
  if (config.applicationDefaultCredentials === true) guard.checkIdentity(ADC);
  const apiEndpoint = config.apiEndpoint ?? DEFAULT_API_ENDPOINT;
  const tokenUri = config.credentials?.tokenUri;
  // The token endpoint is reached through our own transporter call: pinned and confined to it.
  const tokenAgents =
    tokenUri === undefined ? undefined : createGuardedAgents(guard, { hosts: [new URL(tokenUri).hostname] });
  const settings = {
    projectId: config.projectId,
    location: config.location,
    dataset: config.dataset,
    maximumBytesBilled: config.maximumBytesBilled,
    pageSize: config.pageSize ?? DEFAULT_PAGE_SIZE,
  };
  const connectTimeoutMs = config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return {
    async createSession(): Promise<ConnectorSession> {
      // Each session checks the endpoints again. The API requests themselves go through the
      // driver's own HTTP stack (teeny-request), which takes no agent: they resolve the name
      // again (see the README's note on DNS rebinding).
      await guard.checkUrl(apiEndpoint);
      if (tokenUri !== undefined) await guard.checkUrl(tokenUri);
      const client = createBigqueryClient(config, tokenAgents);
      try {
        await withinTime(checkSession(client, config), connectTimeoutMs);
      } catch (error) {
        throw isConnectorError(error) ? error : mapBigqueryError(error);
      }
      return createBigquerySession(client, settings);
    },
  };
}
