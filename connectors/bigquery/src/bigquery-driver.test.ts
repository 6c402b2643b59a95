// The driver clients sessions get: requests go where the config says (never where an environment
// variable points), and a key means an explicit auth client, so no credential discovery runs.
import { generateKeyPairSync } from 'node:crypto';
import { createDestinationGuard, OPERATOR_TRUSTED, parseConnectorConfig } from '@quarry/sdk-connector';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createBigqueryClient } from './bigquery-driver.js';
import { createBigqueryHttp } from './bigquery-http.js';
import { bigqueryPlugin } from './bigquery-plugin.js';

const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const credentials = { client_email: 'reader@p.iam.gserviceaccount.com', private_key: privateKey };
const emulatorHost = process.env.BIGQUERY_EMULATOR_HOST;
// No request is sent here: the clients are only looked at.
const http = createBigqueryHttp(createDestinationGuard(OPERATOR_TRUSTED), []);

afterAll(() => http.destroy());

afterEach(() => {
  if (emulatorHost === undefined) delete process.env.BIGQUERY_EMULATOR_HOST;
  else process.env.BIGQUERY_EMULATOR_HOST = emulatorHost;
});

describe('createBigqueryClient', () => {
  it('sends requests to the configured endpoint even when BIGQUERY_EMULATOR_HOST says otherwise', () => {
    process.env.BIGQUERY_EMULATOR_HOST = 'http://elsewhere.example:9050';
    const config = parseConnectorConfig(bigqueryPlugin, { projectId: 'my-project', credentials });
    expect(createBigqueryClient(config, http).baseUrl).toBe('https://bigquery.googleapis.com/bigquery/v2');
    const local = parseConnectorConfig(bigqueryPlugin, {
      projectId: 'my-project',
      credentials,
      apiEndpoint: 'http://127.0.0.1:9050',
    });
    expect(createBigqueryClient(local, http).baseUrl).toBe('http://127.0.0.1:9050/bigquery/v2');
  });

  it('hands the driver an explicit token client for a key, and nothing for application-default credentials', async () => {
    const withKey = createBigqueryClient(
      parseConnectorConfig(bigqueryPlugin, { projectId: 'my-project', credentials }),
      http,
    );
    // Cached by GoogleAuth: getClient() returns it without looking for any other credential.
    const client = await withKey.authClient.getClient();
    expect(client).toBeInstanceOf(OAuth2Client);
    expect(typeof (client as OAuth2Client).refreshHandler).toBe('function');
    const adc = createBigqueryClient(
      parseConnectorConfig(bigqueryPlugin, { projectId: 'my-project', applicationDefaultCredentials: true }),
      http,
    );
    expect(adc.authClient.cachedCredential).toBeNull();
  });
});
