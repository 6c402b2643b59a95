// The BigQuery config schema: keys, ADC opt-in, endpoint and token_uri rules, redaction, every problem listed.
import { generateKeyPairSync } from 'node:crypto';
import { ConnectorError, parseConnectorConfig, redactConfig, secretFieldsOf } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { GOOGLE_TOKEN_URI, isAllowedTokenUri, isLoopbackHost } from './bigquery-config.js';
import { bigqueryPlugin } from './bigquery-plugin.js';

const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const keyFile = {
  type: 'service_account',
  project_id: 'my-project',
  private_key_id: 'abc123',
  private_key: privateKey,
  client_email: 'reader@my-project.iam.gserviceaccount.com',
  client_id: '1',
  token_uri: GOOGLE_TOKEN_URI,
};

function parse(raw: unknown) {
  return parseConnectorConfig(bigqueryPlugin, raw);
}

function problems(raw: unknown): ConnectorError {
  try {
    parse(raw);
  } catch (error) {
    if (error instanceof ConnectorError) return error;
    throw error;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('bigqueryConfigSchema', () => {
  it('takes a service-account key as JSON text or as an object', () => {
    for (const credentials of [JSON.stringify(keyFile), keyFile]) {
      expect(parse({ projectId: 'my-project', location: 'EU', dataset: 'sales', credentials })).toEqual({
        projectId: 'my-project',
        location: 'EU',
        dataset: 'sales',
        credentials: {
          clientEmail: keyFile.client_email,
          privateKey,
          privateKeyId: 'abc123',
          tokenUri: GOOGLE_TOKEN_URI,
        },
      });
    }
  });

  it('uses Google token endpoint when a key names none, and accepts Private Service Connect ones', () => {
    const { token_uri: _, ...withoutUri } = keyFile;
    expect(parse({ projectId: 'my-project', credentials: withoutUri }).credentials?.tokenUri).toBe(
      GOOGLE_TOKEN_URI,
    );
    const psc = 'https://oauth2-myendpoint.p.googleapis.com/token';
    expect(
      parse({ projectId: 'my-project', credentials: { ...keyFile, token_uri: psc } }).credentials?.tokenUri,
    ).toBe(psc);
  });

  it('uses application-default credentials only when asked explicitly', () => {
    expect(parse({ projectId: 'my-project', applicationDefaultCredentials: true })).toEqual({
      projectId: 'my-project',
      applicationDefaultCredentials: true,
    });
    expect(problems({ projectId: 'my-project' }).message).toContain(
      'credentials: give credentials (a service-account key) or set applicationDefaultCredentials: true',
    );
    expect(
      problems({ projectId: 'my-project', credentials: keyFile, applicationDefaultCredentials: true })
        .message,
    ).toContain('credentials: give either credentials or applicationDefaultCredentials, not both');
  });

  it("declares application-default credentials as the gateway's own identity, a key as the owner's", () => {
    // The gateway refuses owner connections with host access unless its operator opted in.
    const adc = parse({ projectId: 'my-project', applicationDefaultCredentials: true });
    expect(bigqueryPlugin.hostAccess?.(adc)).toEqual(['credentials']);
    const keyed = parse({ projectId: 'my-project', credentials: keyFile });
    expect(bigqueryPlugin.hostAccess?.(keyed)).toEqual([]);
  });

  it('marks the key secret and redacts it whole', () => {
    expect(secretFieldsOf(bigqueryConfigSchemaOf())).toEqual(['credentials']);
    const config = parse({ projectId: 'my-project', credentials: keyFile });
    expect(redactConfig(bigqueryPlugin, config)).toEqual({ projectId: 'my-project', credentials: '***' });
  });

  it('lists every problem and never echoes key material', () => {
    const error = problems({
      projectId: 'Not A Project',
      location: 'us central',
      credentials: { ...keyFile, private_key: `${privateKey.slice(0, 200)}broken`, client_email: 'nobody' },
      apiEndpoint: 'http://bigquery.example.com',
      maximumBytesBilled: 0,
      pageSize: 0,
      surprise: true,
    });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.details.map((d) => d.param)).toEqual([
      'projectId',
      'location',
      'credentials.client_email',
      'credentials.private_key',
      'apiEndpoint',
      'maximumBytesBilled',
      'pageSize',
      undefined,
    ]);
    expect(error.message).not.toContain(privateKey.slice(40, 100));
    expect(problems({ projectId: 'my-project', credentials: '{not json' }).message).toContain(
      'credentials: must be the JSON text of a service-account key file',
    );
  });

  it("keeps application-default credentials on Google's own API endpoint", () => {
    expect(
      problems({
        projectId: 'my-project',
        applicationDefaultCredentials: true,
        apiEndpoint: 'http://127.0.0.1:9050',
      }).details[0],
    ).toMatchObject({
      param: 'apiEndpoint',
      message: expect.stringContaining('applicationDefaultCredentials'),
    });
  });

  it('normalises the API endpoint to an origin and refuses clear text off loopback', () => {
    for (const [endpoint, origin] of [
      ['https://bigquery.googleapis.com', 'https://bigquery.googleapis.com'],
      ['https://bq.private.example.com/', 'https://bq.private.example.com'],
      ['http://127.0.0.1:9050', 'http://127.0.0.1:9050'],
      ['http://localhost:9050/', 'http://localhost:9050'],
      ['http://[::1]:9050', 'http://[::1]:9050'],
    ]) {
      expect(
        parse({ projectId: 'my-project', credentials: keyFile, apiEndpoint: endpoint }).apiEndpoint,
      ).toBe(origin);
    }
    for (const endpoint of [
      'http://10.0.0.5:9050',
      'https://user:pw@bigquery.googleapis.com',
      'https://bigquery.googleapis.com/bigquery/v2',
      'bigquery.googleapis.com',
      'ftp://127.0.0.1',
    ]) {
      expect(
        problems({ projectId: 'my-project', credentials: keyFile, apiEndpoint: endpoint }).details[0]?.param,
      ).toBe('apiEndpoint');
    }
  });

  it('keeps the cost guard exact as text', () => {
    for (const value of [1_000_000, '1000000']) {
      expect(
        parse({ projectId: 'my-project', applicationDefaultCredentials: true, maximumBytesBilled: value })
          .maximumBytesBilled,
      ).toBe('1000000');
    }
    expect(
      problems({ projectId: 'my-project', applicationDefaultCredentials: true, maximumBytesBilled: '1e9' })
        .message,
    ).toContain('maximumBytesBilled: must be a positive whole number of bytes');
  });

  it('refuses a token_uri that would send assertions somewhere else', () => {
    for (const tokenUri of [
      'https://evil.example.com/token',
      'http://oauth2.googleapis.com/token',
      'http://127.0.0.1:8080/token',
      'https://10.0.0.1/token',
    ]) {
      expect(
        problems({ projectId: 'my-project', credentials: { ...keyFile, token_uri: tokenUri } }).details,
      ).toEqual([
        {
          param: 'credentials.token_uri',
          message:
            'must be https on a googleapis.com host (a loopback URL only together with a loopback apiEndpoint)',
        },
      ]);
    }
    // A local fake or emulator: both endpoints on loopback.
    expect(
      parse({
        projectId: 'my-project',
        apiEndpoint: 'http://127.0.0.1:9050',
        credentials: { ...keyFile, token_uri: 'http://127.0.0.1:9050/token' },
      }).credentials?.tokenUri,
    ).toBe('http://127.0.0.1:9050/token');
  });
});

describe('endpoint rules', () => {
  it('knows loopback hosts', () => {
    expect(['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'].map(isLoopbackHost)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(
      ['10.0.0.1', '169.254.169.254', 'metadata.google.internal', '128.0.0.1'].map(isLoopbackHost),
    ).toEqual([false, false, false, false]);
  });

  it('allows googleapis.com token endpoints over https only', () => {
    expect(isAllowedTokenUri(GOOGLE_TOKEN_URI, undefined)).toBe(true);
    expect(isAllowedTokenUri('https://oauth2.googleapis.com.evil.com/token', undefined)).toBe(false);
    expect(isAllowedTokenUri('https://notgoogleapis.com/token', undefined)).toBe(false);
    expect(isAllowedTokenUri('http://localhost:1/token', 'http://localhost:2')).toBe(true);
    expect(isAllowedTokenUri('http://localhost:1/token', 'https://bigquery.googleapis.com')).toBe(false);
  });
});

function bigqueryConfigSchemaOf() {
  return bigqueryPlugin.configSchema;
}
