// Config validation: exactly one authentication method, PEM keys, safe access URLs, unknown
// fields refused, every problem listed, secrets marked and never echoed.
import { generateKeyPairSync } from 'node:crypto';
import { isConnectorError, parseConnectorConfig, redactConfig, secretFieldsOf } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { snowflakeConfigSchema } from './snowflake-config.js';
import { snowflakeConnectionOptions } from './snowflake-connection-options.js';
import { snowflakePlugin } from './snowflake-plugin.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const base = { account: 'myorg-myaccount', username: 'QUARRY_READER' };

function problems(raw: unknown): string[] {
  try {
    parseConnectorConfig(snowflakePlugin, raw);
  } catch (error) {
    if (isConnectorError(error, 'CONFIG_INVALID'))
      return error.details.map((d) => `${d.param}: ${d.message}`);
    throw error;
  }
  return [];
}

describe('snowflakeConfigSchema', () => {
  it('accepts password and key-pair configs with the session context', () => {
    expect(
      problems({ ...base, password: 'pw', warehouse: 'WH', database: 'DB', schema: 'S', role: 'R' }),
    ).toEqual([]);
    expect(problems({ ...base, privateKey, privateKeyPassphrase: 'pass' })).toEqual([]);
    expect(problems({ ...base, account: 'xy12345.eu-west-1.aws', password: 'pw' })).toEqual([]);
  });

  it('marks the password, the private key and its passphrase as secrets', () => {
    expect(secretFieldsOf(snowflakeConfigSchema).sort()).toEqual([
      'password',
      'privateKey',
      'privateKeyPassphrase',
    ]);
    const redacted = redactConfig(snowflakePlugin, snowflakeConfigSchema.parse({ ...base, privateKey }));
    expect(redacted.privateKey).toBe('***');
  });

  it('wants exactly one way to log in, and a passphrase only with a key', () => {
    expect(problems(base)).toEqual([
      'password: give exactly one of password or privateKey (key-pair authentication)',
    ]);
    expect(problems({ ...base, password: 'pw', privateKey })).toHaveLength(1);
    expect(problems({ ...base, password: 'pw', privateKeyPassphrase: 'x' })).toEqual([
      'privateKeyPassphrase: privateKeyPassphrase is only used with privateKey',
    ]);
  });

  it('refuses a private key that is not PEM without echoing it', () => {
    const listed = problems({ ...base, privateKey: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-secret-bytes' });
    expect(listed).toEqual(['privateKey: must be a PEM private key (-----BEGIN … PRIVATE KEY-----)']);
    expect(listed.join()).not.toContain('secret-bytes');
  });

  it('refuses non-https access URLs except on loopback, and URLs with credentials or a path', () => {
    expect(
      problems({ ...base, password: 'pw', accessUrl: 'https://acct.privatelink.snowflakecomputing.com/' }),
    ).toEqual([]);
    expect(problems({ ...base, password: 'pw', accessUrl: 'http://127.0.0.1:8080' })).toEqual([]);
    for (const accessUrl of [
      'http://acct.snowflakecomputing.com',
      'https://u:p@acct.snowflakecomputing.com',
      'https://acct.snowflakecomputing.com/session',
      'ftp://127.0.0.1',
      'not a url',
    ]) {
      expect(problems({ ...base, password: 'pw', accessUrl }), accessUrl).toHaveLength(1);
    }
    const parsed = snowflakeConfigSchema.parse({
      ...base,
      password: 'pw',
      accessUrl: 'https://h.example.com/',
    });
    expect(parsed.accessUrl).toBe('https://h.example.com');
  });

  it('lists every problem and refuses unknown fields', () => {
    const listed = problems({ account: 'bad account!', username: '', password: 'pw', host: 'x' });
    expect(listed).toHaveLength(3);
    expect(listed.filter((p) => p.startsWith('account:') || p.startsWith('username:'))).toHaveLength(2);
    expect(listed.some((p) => p.includes('"host"'))).toBe(true);
  });
});

describe('snowflakeConnectionOptions', () => {
  it('uses key-pair authentication for a private key and keeps Quarry’s driver settings', () => {
    const options = snowflakeConnectionOptions(
      snowflakeConfigSchema.parse({ ...base, privateKey, privateKeyPassphrase: 'pass', role: 'R' }),
    );
    expect(options).toMatchObject({
      account: 'myorg-myaccount',
      username: 'QUARRY_READER',
      authenticator: 'SNOWFLAKE_JWT',
      privateKey,
      privateKeyPass: 'pass',
      role: 'R',
      clientConfigFile: '',
      representNullAsStringNull: false,
      sfRetryMaxLoginRetries: 0,
      rowMode: 'array',
      fetchAsString: ['Number', 'JSON'],
    });
    expect(options.password).toBeUndefined();
  });
});
