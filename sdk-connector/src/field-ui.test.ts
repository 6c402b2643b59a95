import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { secretField, secretFieldsOf } from './config-schema.js';
import { fieldsWithoutUi, fieldUi, fieldUiOf } from './field-ui.js';

const configSchema = z.object({
  host: fieldUi(z.string().min(1), { label: 'Host', placeholder: 'db.example.com', order: 1 }),
  port: fieldUi(z.number().int(), { label: 'Port', order: 2 }).default(5432),
  password: fieldUi(z.string(), { label: 'Password', secret: true, order: 3 }).optional(),
  key: fieldUi(secretField(z.string()), { label: 'Key', input: 'textarea' }).optional(),
  ssl: fieldUi(z.union([z.boolean(), z.object({ ca: z.string() })]), {
    label: 'TLS',
    input: 'select',
    options: [
      { value: true, label: 'On' },
      { value: false, label: 'Off' },
    ],
    advanced: true,
  }).optional(),
  raw: z.string().optional(),
});

describe('fieldUi', () => {
  it('puts the hints in JSON Schema as `ui`, through optional and default wrappers', () => {
    const json = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as {
      properties: Record<string, { ui?: unknown; default?: unknown }>;
    };
    expect(json.properties.host?.ui).toEqual({ label: 'Host', placeholder: 'db.example.com', order: 1 });
    expect(json.properties.port).toMatchObject({ default: 5432, ui: { label: 'Port', order: 2 } });
    expect(json.properties.ssl?.ui).toMatchObject({ label: 'TLS', input: 'select', advanced: true });
    expect(json.properties.raw?.ui).toBeUndefined();
  });

  it('marks `secret: true` fields as secret, and keeps an earlier secretField mark', () => {
    expect(secretFieldsOf(configSchema).sort()).toEqual(['key', 'password']);
    expect(fieldUiOf(configSchema.shape.key.unwrap())).toMatchObject({ label: 'Key', input: 'textarea' });
  });

  it('does not change what the schema accepts', () => {
    expect(configSchema.parse({ host: 'db' })).toEqual({ host: 'db', port: 5432 });
    expect(configSchema.safeParse({ host: '' }).success).toBe(false);
  });

  it('lists the fields a form would show by their raw name', () => {
    expect(fieldsWithoutUi(configSchema)).toEqual(['raw']);
  });

  it('refuses malformed hints when the plugin is written', () => {
    expect(() => fieldUi(z.string(), { label: ' ' })).toThrow(/a label is required/);
    expect(() => fieldUi(z.string(), { label: 'X', input: 'select' })).toThrow(/needs options/);
    expect(() => fieldUi(z.string(), { label: 'X', input: 'slider' as never })).toThrow(/unknown input kind/);
  });
});
