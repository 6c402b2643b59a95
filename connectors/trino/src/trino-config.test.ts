import { parseConnectorConfig, redactConfig, secretFieldsOf } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, resolveTrinoSettings, trinoConfigSchema } from './trino-config.js';
import { trinoPlugin } from './trino-plugin.js';

function problems(raw: unknown): string {
  try {
    parseConnectorConfig(trinoPlugin, raw);
  } catch (error) {
    expect((error as { code?: string }).code).toBe('CONFIG_INVALID');
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('trino config', () => {
  it('fills defaults and picks the auth kind', () => {
    const settings = resolveTrinoSettings(
      trinoConfigSchema.parse({ server: 'https://trino.example.com/', user: 'reader', catalog: 'hive' }),
    );
    expect(settings).toEqual({
      server: 'https://trino.example.com',
      user: 'reader',
      auth: { kind: 'none' },
      catalog: 'hive',
      schema: undefined,
      source: 'quarry',
      connectTimeoutMs: 10_000,
    });
    const basic = resolveTrinoSettings(
      trinoConfigSchema.parse({ server: 'https://t.example.com:8443/trino', user: 'u', password: 'pw-1' }),
    );
    expect(basic.auth).toEqual({ kind: 'basic', password: 'pw-1' });
    expect(basic.server).toBe('https://t.example.com:8443/trino');
    const jwt = resolveTrinoSettings(
      trinoConfigSchema.parse({ server: 'https://t.example.com', user: 'u', accessToken: 'a.b.c' }),
    );
    expect(jwt.auth).toEqual({ kind: 'jwt', token: 'a.b.c' });
  });

  it('marks the password and the access token as secrets, and redacts them', () => {
    expect(secretFieldsOf(trinoConfigSchema).sort()).toEqual(['accessToken', 'password']);
    const config = parseConnectorConfig(trinoPlugin, {
      server: 'https://t.example.com',
      user: 'u',
      password: 'hunter2-secret',
    });
    expect(JSON.stringify(redactConfig(trinoPlugin, config))).not.toContain('hunter2-secret');
  });

  it('refuses credentials over http except to loopback', () => {
    expect(problems({ server: 'http://trino.example.com', user: 'u', password: 'topsecret-pw' })).toMatch(
      /server: must use https/,
    );
    expect(problems({ server: 'http://10.0.0.5:8080', user: 'u', accessToken: 'tok-secret' })).toMatch(
      /must use https/,
    );
    for (const server of ['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080']) {
      expect(() =>
        parseConnectorConfig(trinoPlugin, { server, user: 'u', password: 'pw-for-local' }),
      ).not.toThrow();
    }
    // Without a credential, http is allowed (a trusted network without authentication).
    expect(() =>
      parseConnectorConfig(trinoPlugin, { server: 'http://trino.internal:8080', user: 'u' }),
    ).not.toThrow();
  });

  it('lists every problem at once, never echoing a secret', () => {
    const message = problems({
      server: 'ftp://u:urlsecret@host',
      user: 'bad\nuser',
      password: 'pw-secret-1',
      accessToken: 'token-secret-2',
      schema: 'sales',
      extra: true,
    });
    expect(message).toMatch(/server: must be an http/);
    expect(message).toMatch(/server: must not carry credentials/);
    expect(message).toMatch(/user: must be printable ASCII/);
    expect(message).toMatch(/not both/);
    expect(message).toMatch(/schema: needs catalog/);
    expect(message).toMatch(/extra/);
    for (const secret of ['pw-secret-1', 'token-secret-2']) expect(message).not.toContain(secret);
  });

  it('knows the loopback hosts', () => {
    expect(['localhost', '127.0.0.1', '127.1.2.3', '[::1]', 'db.localhost'].every(isLoopbackHost)).toBe(true);
    expect(['10.0.0.1', '128.0.0.1', 'localhost.example.com', '[::2]'].some(isLoopbackHost)).toBe(false);
  });
});
