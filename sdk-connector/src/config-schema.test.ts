import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConnectorConfig, redactConfig, secretField, secretFieldsOf } from './config-schema.js';
import { ConnectorError } from './connector-error.js';
import type { ConnectorPlugin } from './connector-plugin.js';

const configSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65_535).default(5432),
  user: z.string(),
  // A schema whose own error echoes the input: the runtime must still not leak it.
  password: secretField(
    z.string().min(12, { error: (issue) => `password ${String(issue.input)} is too short` }),
  ),
  ssl: z
    .object({
      ca: z.string().optional(),
      key: secretField(z.string()).optional(),
    })
    .optional(),
  token: secretField(z.string()).nullable().optional(),
});

type Config = z.infer<typeof configSchema>;

const plugin: ConnectorPlugin<Config> = {
  type: 'test',
  configSchema,
  dialect: { placeholders: 'numbered' },
  createDriver: () => {
    throw new Error('not used');
  },
};

describe('secretField / secretFieldsOf', () => {
  it('lists top-level and nested secret paths, through optional and nullable wrappers', () => {
    expect(secretFieldsOf(configSchema).sort()).toEqual(['password', 'ssl.key', 'token']);
  });

  it('shows secrets as writeOnly in JSON Schema', () => {
    const json = z.toJSONSchema(configSchema, { io: 'input' }) as {
      properties: Record<string, { writeOnly?: boolean; secret?: boolean }>;
    };
    expect(json.properties.password).toMatchObject({ writeOnly: true, secret: true });
    expect(json.properties.host?.writeOnly).toBeUndefined();
  });
});

describe('parseConnectorConfig', () => {
  it('returns the parsed config with defaults applied', () => {
    const config = parseConnectorConfig(plugin, { host: 'db', user: 'u', password: 'correct-horse-battery' });
    expect(config).toEqual({ host: 'db', port: 5432, user: 'u', password: 'correct-horse-battery' });
  });

  it('lists every problem with its path, and never echoes a secret', () => {
    let error: unknown;
    try {
      parseConnectorConfig(plugin, { host: '', port: 70_000, password: 'hunter2-pw', ssl: { key: 42 } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConnectorError);
    const failure = error as ConnectorError;
    expect(failure.code).toBe('CONFIG_INVALID');
    expect(failure.retryable).toBe(false);
    expect(failure.details.map((d) => d.param).sort()).toEqual([
      'host',
      'password',
      'port',
      'ssl.key',
      'user',
    ]);
    for (const path of ['host', 'port', 'user', 'password', 'ssl.key']) {
      expect(failure.message).toContain(`${path}:`);
    }
    const everything = `${failure.message} ${JSON.stringify(failure.details)}`;
    expect(everything).not.toContain('hunter2-pw');
    expect(everything).toContain('password *** is too short');
  });

  it('rejects a non-object config with one clear problem', () => {
    expect(() => parseConnectorConfig(plugin, 'postgres://u:p@h/db')).toThrow(
      /invalid test connection config/,
    );
  });
});

describe('redactConfig', () => {
  it('replaces every secret with *** and leaves the rest (and the input) alone', () => {
    const config = parseConnectorConfig(plugin, {
      host: 'db',
      user: 'u',
      password: 'correct-horse-battery',
      ssl: { ca: 'CA', key: 'PRIVATE' },
    });
    const redacted = redactConfig(plugin, config);
    expect(redacted).toEqual({
      host: 'db',
      port: 5432,
      user: 'u',
      password: '***',
      ssl: { ca: 'CA', key: '***' },
    });
    expect(config.password).toBe('correct-horse-battery');
    expect(config.ssl?.key).toBe('PRIVATE');
  });

  it('keeps an absent or null secret absent or null', () => {
    const config = parseConnectorConfig(plugin, {
      host: 'db',
      user: 'u',
      password: 'correct-horse-battery',
      token: null,
    });
    const redacted = redactConfig(plugin, config);
    expect(redacted.token).toBeNull();
    expect('ssl' in redacted).toBe(false);
  });
});
