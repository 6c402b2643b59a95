// Connection config helpers: mark secret fields in a plugin's zod schema, validate a raw config
// once (listing every problem, never echoing a secret), and redact secrets for logs and listings.
// Secrets are found through `z.toJSONSchema`, so whatever the schema's wrappers (optional,
// default, nullable, nested objects), the same view that API docs get decides what is secret.
import { z } from 'zod';
import { ConnectorError, type ConnectorErrorDetail, redactSecrets } from './connector-error.js';
import type { ConnectorPlugin } from './connector-plugin.js';

/** What a secret field shows as in redacted copies. */
const REDACTED = '***';

/**
 * Marks a config field as secret (a password, a private key, a token): it is reported as
 * `writeOnly` and `secret: true` in JSON Schema, redacted by {@link redactConfig}, and its value
 * never appears in a CONFIG_INVALID message.
 *
 * @example
 * const configSchema = z.object({ host: z.string(), password: secretField(z.string()).optional() });
 */
export function secretField<T extends z.ZodType>(schema: T): T {
  return schema.meta({ secret: true, writeOnly: true }) as T;
}

type JsonSchemaNode = {
  readonly secret?: unknown;
  readonly properties?: Readonly<Record<string, JsonSchemaNode>>;
  readonly anyOf?: readonly JsonSchemaNode[];
  readonly oneOf?: readonly JsonSchemaNode[];
  readonly allOf?: readonly JsonSchemaNode[];
  readonly $ref?: string;
  readonly $defs?: Readonly<Record<string, JsonSchemaNode>>;
};

function collectSecretPaths(
  node: JsonSchemaNode | undefined,
  prefix: string,
  defs: Readonly<Record<string, JsonSchemaNode>>,
  out: Set<string>,
  depth: number,
): void {
  if (node === undefined || typeof node !== 'object' || depth > 32) return;
  if (node.secret === true && prefix !== '') {
    out.add(prefix);
    return;
  }
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/$defs/')) {
    collectSecretPaths(defs[node.$ref.slice(8)], prefix, defs, out, depth + 1);
  }
  for (const branch of [node.anyOf, node.oneOf, node.allOf]) {
    if (branch) for (const sub of branch) collectSecretPaths(sub, prefix, defs, out, depth + 1);
  }
  if (node.properties) {
    for (const [key, sub] of Object.entries(node.properties)) {
      collectSecretPaths(sub, prefix === '' ? key : `${prefix}.${key}`, defs, out, depth + 1);
    }
  }
}

/**
 * Dot-separated paths of the fields marked with {@link secretField}, at the top level and in
 * nested objects, e.g. `['password', 'ssl.key']`.
 */
export function secretFieldsOf(schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const out = new Set<string>();
  collectSecretPaths(json, '', json.$defs ?? {}, out, 0);
  return [...out];
}

function getPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The string values found at the schema's secret paths in `config` (for redacting free text). */
export function secretValuesOf(schema: z.ZodType, config: unknown): string[] {
  const values: string[] = [];
  for (const path of secretFieldsOf(schema)) {
    const v = getPath(config, path.split('.'));
    if (typeof v === 'string' && v.length > 0) values.push(v);
    else if (typeof v === 'number' || typeof v === 'bigint') values.push(String(v));
  }
  return values;
}

/**
 * Validates a raw connection config against the plugin's schema, once, at creation.
 *
 * @throws ConnectorError `CONFIG_INVALID` whose message and `details` list every problem as
 *   `path: message`; no secret value is ever echoed.
 */
export function parseConnectorConfig<C>(plugin: ConnectorPlugin<C>, raw: unknown): C {
  const result = plugin.configSchema.safeParse(raw);
  if (result.success) return result.data;
  const secrets = secretValuesOf(plugin.configSchema, raw);
  const details: ConnectorErrorDetail[] = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const message = redactSecrets(issue.message, secrets);
    return path === '' ? { message } : { param: path, message };
  });
  const list = details
    .map((d) => (d.param === undefined ? d.message : `${d.param}: ${d.message}`))
    .join('; ');
  return throwInvalid(plugin.type, list, details);
}

function throwInvalid(type: string, list: string, details: readonly ConnectorErrorDetail[]): never {
  throw new ConnectorError('CONFIG_INVALID', `invalid ${type} connection config: ${list}`, { details });
}

function redactAt(value: unknown, path: readonly string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const [head, ...rest] = path;
  if (head === undefined || !(head in value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const current = copy[head];
  if (rest.length === 0) {
    if (current !== undefined && current !== null) copy[head] = REDACTED;
  } else {
    copy[head] = redactAt(current, rest);
  }
  return copy;
}

/**
 * A copy of `config` with every secret field's value replaced by `'***'`, for logs and API
 * listings. Absent or null secrets stay absent or null, so a reader can tell "not set".
 */
export function redactConfig<C>(plugin: ConnectorPlugin<C>, config: C): Record<string, unknown> {
  let out: unknown =
    config !== null && typeof config === 'object' ? { ...(config as Record<string, unknown>) } : {};
  for (const path of secretFieldsOf(plugin.configSchema)) out = redactAt(out, path.split('.'));
  return out as Record<string, unknown>;
}
