// The owner's connection config: defaults, rejection of bad input, and the password as a secret.
import { redactConfig, secretFieldsOf } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { mysqlConfigSchema } from './mysql-config.js';
import { mysqlConnectionOptions, mysqlPlugin } from './mysql-plugin.js';

describe('mysqlConfigSchema', () => {
  it('defaults the port to 3306', () => {
    const config = mysqlConfigSchema.parse({ host: 'db', database: 'sales', user: 'reader' });
    expect(config.port).toBe(3306);
  });

  it('rejects a missing host, a bad port and unknown fields', () => {
    expect(mysqlConfigSchema.safeParse({ database: 'd', user: 'u' }).success).toBe(false);
    expect(mysqlConfigSchema.safeParse({ host: 'h', database: 'd', user: 'u', port: 70_000 }).success).toBe(
      false,
    );
    expect(
      mysqlConfigSchema.safeParse({ host: 'h', database: 'd', user: 'u', multipleStatements: true }).success,
    ).toBe(false);
  });

  it('marks the password and the TLS key as secrets', () => {
    expect(secretFieldsOf(mysqlConfigSchema).sort()).toEqual(['password', 'ssl.key']);
    const config = mysqlConfigSchema.parse({ host: 'h', database: 'd', user: 'u', password: 'hunter22' });
    expect(JSON.stringify(redactConfig(mysqlPlugin, config))).not.toContain('hunter22');
  });
});

describe('mysqlConnectionOptions', () => {
  it('sets the driver options that keep values exact and statements single', () => {
    const options = mysqlConnectionOptions(
      mysqlConfigSchema.parse({ host: 'h', database: 'd', user: 'u', ssl: true, connectTimeoutMs: 2000 }),
    );
    expect(options).toMatchObject({
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      timezone: 'Z',
      multipleStatements: false,
      rowsAsArray: true,
      connectTimeout: 2000,
      ssl: { rejectUnauthorized: true, verifyIdentity: true },
    });
  });
});
