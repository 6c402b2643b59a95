import { parseConnectorConfig, redactConfig, secretFieldsOf } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import {
  parsePostgresUrl,
  postgresConfigSchema,
  postgresStartupOptions,
  resolvePostgresSettings,
} from './postgres-config.js';
import { postgresPlugin } from './postgres-plugin.js';

describe('postgres config', () => {
  it('fills defaults for discrete fields', () => {
    const settings = resolvePostgresSettings(
      postgresConfigSchema.parse({ host: 'db.internal', database: 'sales', user: 'reader' }),
    );
    expect(settings).toMatchObject({
      host: 'db.internal',
      port: 5432,
      database: 'sales',
      user: 'reader',
      password: '',
      ssl: false,
      applicationName: 'quarry',
      connectTimeoutMs: 5000,
      statementTimeoutMs: 30_000,
      portalRowLimit: true,
    });
  });

  it('marks the password and the connection string as secrets, and redacts them', () => {
    expect(secretFieldsOf(postgresConfigSchema).sort()).toEqual(['connectionString', 'password']);
    const config = parseConnectorConfig(postgresPlugin, {
      host: 'h',
      database: 'd',
      user: 'u',
      password: 'hunter2-secret',
    });
    expect(JSON.stringify(redactConfig(postgresPlugin, config))).not.toContain('hunter2-secret');
  });

  it('refuses unknown fields, missing fields and bad URLs without echoing the secret', () => {
    expect(() =>
      parseConnectorConfig(postgresPlugin, { host: 'h', database: 'd', user: 'u', pasword: 'x' }),
    ).toThrow(/CONFIG|invalid/i);
    expect(() => parseConnectorConfig(postgresPlugin, { host: 'h' })).toThrow();
    try {
      parseConnectorConfig(postgresPlugin, { connectionString: 'mysql://u:topsecretpw@h/d' });
      expect.unreachable('a mysql URL must be refused');
    } catch (error) {
      expect((error as Error).message).not.toContain('topsecretpw');
      expect((error as { code?: string }).code).toBe('CONFIG_INVALID');
    }
  });

  it('takes everything from a URL, explicit fields winning', () => {
    const settings = resolvePostgresSettings(
      postgresConfigSchema.parse({
        connectionString:
          'postgresql://ana%40corp:p%3Ass@[::1]:6543/warehouse?sslmode=require&application_name=fromurl',
        applicationName: 'explicit',
      }),
    );
    expect(settings).toMatchObject({
      host: '::1',
      port: 6543,
      database: 'warehouse',
      user: 'ana@corp',
      password: 'p:ss',
      ssl: { rejectUnauthorized: false },
      applicationName: 'explicit',
    });
  });

  it('parses sslmode and socket hosts like libpq', () => {
    expect(parsePostgresUrl('postgres://h/d?sslmode=disable')?.ssl).toBe(false);
    expect(parsePostgresUrl('postgres://h/d?sslmode=verify-full')?.ssl).toBe(true);
    expect(parsePostgresUrl('postgres://h/d')?.ssl).toBeUndefined();
    expect(parsePostgresUrl('postgres:///d?host=/var/run/postgresql')?.host).toBe('/var/run/postgresql');
    expect(parsePostgresUrl('postgres:///d')).toBeUndefined();
    expect(parsePostgresUrl('not a url')).toBeUndefined();
  });

  it('starts sessions read-only, with the timeout and a quoted, escaped search_path', () => {
    const options = postgresStartupOptions(1500, 'my "odd" schema');
    expect(options).toContain('-c default_transaction_read_only=on');
    expect(options).toContain('-c statement_timeout=1500');
    expect(options).toContain('-c search_path="my\\ ""odd""\\ schema"');
  });
});
