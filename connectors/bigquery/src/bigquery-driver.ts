// Opens BigQuery sessions: each gets its own driver client and auth client (so each holds its own
// access token), and is checked with a dry-run `SELECT 1` before use, which proves in one request
// that the endpoint answers, the credentials work and they may run query jobs in the project.
// Every request of every client (API and token endpoint) goes through the connection's pinned
// HTTP (bigquery-http.ts, bigquery-transport.ts): to the configured hosts only, at an address the
// destination guard checked.
import { BigQuery } from '@google-cloud/bigquery';
import {
  type ConnectorDriver,
  ConnectorError,
  type ConnectorSession,
  type DriverContext,
  isConnectorError,
} from '@quarry/sdk-connector';
import { createServiceAccountClient } from './bigquery-auth.js';
import { type BigqueryConfig, DEFAULT_API_ENDPOINT } from './bigquery-config.js';
import { mapBigqueryError } from './bigquery-errors.js';
import { type BigqueryHttp, createBigqueryHttp } from './bigquery-http.js';
import { createBigquerySession } from './bigquery-session.js';
import { sendThrough } from './bigquery-transport.js';

export { DEFAULT_API_ENDPOINT } from './bigquery-config.js';

const DEFAULT_PAGE_SIZE = 10_000;
/** How the gateway's own identity is named in refusals. */
const ADC = 'BigQuery application-default credentials';
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Longest pause between retries of one request. */
const MAX_RETRY_DELAY_MS = 1_000;

/** The host names a connection's requests may go to: its API endpoint's and its key's token_uri's. */
export function bigqueryHosts(config: BigqueryConfig): string[] {
  const hosts = [new URL(config.apiEndpoint ?? DEFAULT_API_ENDPOINT).hostname];
  if (config.credentials !== undefined) hosts.push(new URL(config.credentials.tokenUri).hostname);
  return [...new Set(hosts)];
}

/**
 * A driver client for one session whose every request goes through `http` (the connection's
 * guarded agents). Exported for tests.
 */
export function createBigqueryClient(config: BigqueryConfig, http: BigqueryHttp): BigQuery {
  const apiEndpoint = config.apiEndpoint ?? DEFAULT_API_ENDPOINT;
  const maxRetries = config.maxRetries ?? DEFAULT_MAX_RETRIES;
  const client = new BigQuery({
    projectId: config.projectId,
    apiEndpoint,
    userAgent: 'quarry',
    ...(config.location === undefined ? {} : { location: config.location }),
    // With a key, an explicit client: the driver never looks for application-default
    // credentials, so it never probes the metadata server.
    ...(config.credentials === undefined
      ? {}
      : {
          authClient: createServiceAccountClient(config.credentials, {
            timeoutMs: config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
            http,
          }),
        }),
  });
  // The driver lets the BIGQUERY_EMULATOR_HOST environment variable replace the endpoint; a
  // connection's requests (and its tokens) go where its config says, and nowhere else.
  client.baseUrl = `${apiEndpoint}/bigquery/v2`;
  sendThrough(client, http, { maxRetries, maxRetryDelayMs: MAX_RETRY_DELAY_MS });
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
  // One set of guarded agents per connection: every new socket is checked again (keep-alive
  // sockets stay on the address they were checked at).
  const http = createBigqueryHttp(guard, bigqueryHosts(config));
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
      // Refused here with a clear message before any request; the agents check every socket.
      await guard.checkUrl(apiEndpoint);
      if (tokenUri !== undefined) await guard.checkUrl(tokenUri);
      const client = createBigqueryClient(config, http);
      try {
        await withinTime(checkSession(client, config), connectTimeoutMs);
      } catch (error) {
        throw isConnectorError(error) ? error : mapBigqueryError(error);
      }
      return createBigquerySession(client, settings);
    },
    async destroy() {
      http.destroy();
    },
  };
}
