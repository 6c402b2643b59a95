// The BigQuery connector plugin: queries run as BigQuery jobs through the official driver
// (@google-cloud/bigquery), read-only by statement type, with typed named params.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type BigqueryConfig, bigqueryConfigSchema, DEFAULT_API_ENDPOINT } from './bigquery-config.js';
import { bigqueryDialect } from './bigquery-dialect.js';
import { mapBigqueryError } from './bigquery-errors.js';

/** Connects Quarry to Google BigQuery (`type: bigquery`). */
export const bigqueryPlugin: ConnectorPlugin<BigqueryConfig> = {
  type: 'bigquery',
  displayName: 'Google BigQuery',
  configSchema: bigqueryConfigSchema,
  dialect: bigqueryDialect,
  // A session is a client and an access token, no server connection: cheap to keep for a while.
  // `max` bounds the jobs one connection runs at once (BigQuery's own limit is per project).
  defaultPool: { max: 8, idleTimeoutMs: 300_000 },
  // The driver, and @google-cloud/bigquery with it (about 18 MiB resident), is imported on the
  // first BigQuery connection: a gateway with none never loads it.
  createDriver: async (config, context) =>
    (await import('./bigquery-driver.js')).createBigqueryDriver(config, context),
  mapError: mapBigqueryError,
  // Application-default credentials are the gateway's own identity (its service account, its
  // metadata server): only with the operator's opt-in. A service-account key is the owner's.
  hostAccess: (config) => (config.applicationDefaultCredentials === true ? ['credentials'] : []),
  destinations: (config) => [
    { kind: 'url', url: config.apiEndpoint ?? DEFAULT_API_ENDPOINT },
    ...(config.credentials === undefined ? [] : [{ kind: 'url' as const, url: config.credentials.tokenUri }]),
    ...(config.applicationDefaultCredentials === true
      ? [{ kind: 'identity' as const, what: 'BigQuery application-default credentials' }]
      : []),
  ],
};
