// Connector plugins, loaded by module specifier from configuration. The gateway never imports a
// driver: an operator registers a new warehouse type by naming its package, and a module that
// does not satisfy the SDK's plugin interface is refused at start with a clear message (server.ts
// prints it and exits with code 2, like a configuration error).
import { type ConnectorPlugin, secretFieldsOf } from '@quarry/sdk-connector';
import { z } from 'zod';

export interface PluginRegistry {
  get(type: string): ConnectorPlugin | undefined;
  types(): readonly string[];
  /** Public description of each type: config JSON schema and its secret fields. */
  describe(): readonly ConnectorTypeInfo[];
}

export interface ConnectorTypeInfo {
  readonly type: string;
  readonly display_name: string;
  readonly config_schema: unknown;
  readonly secret_fields: readonly string[];
}

/** A connector module that cannot be loaded or is not a plugin; the message says which and why. */
export class PluginLoadError extends Error {
  override readonly name = 'PluginLoadError';
}

function problemsOf(candidate: unknown): string[] {
  const problems: string[] = [];
  if (candidate === null || typeof candidate !== 'object') return ['it is not an object'];
  const p = candidate as Record<string, unknown>;
  if (typeof p.type !== 'string' || !/^[a-z][a-z0-9_-]{0,31}$/.test(p.type)) {
    problems.push('`type` must be a lowercase name like "postgres"');
  }
  const schema = p.configSchema as { safeParse?: unknown } | undefined;
  if (!schema || typeof schema.safeParse !== 'function') problems.push('`configSchema` must be a zod schema');
  const dialect = p.dialect as { placeholders?: unknown } | undefined;
  if (!dialect || !['numbered', 'positional', 'named', 'literal'].includes(String(dialect.placeholders))) {
    problems.push('`dialect.placeholders` must be one of numbered, positional, named, literal');
  }
  if (typeof p.createDriver !== 'function') problems.push('`createDriver` must be a function');
  // The owner API's guard against connections using the gateway's own files or credentials
  // relies on it: a non-function would silently mean "none".
  if (p.hostAccess !== undefined && typeof p.hostAccess !== 'function') {
    problems.push('`hostAccess`, when given, must be a function');
  }
  return problems;
}

/** Checks that a module export is a ConnectorPlugin; throws PluginLoadError listing what is wrong. */
export function assertPlugin(candidate: unknown, specifier: string): ConnectorPlugin {
  const problems = problemsOf(candidate);
  if (problems.length > 0) {
    throw new PluginLoadError(
      `Connector module "${specifier}" does not export a valid Quarry connector plugin: ${problems.join('; ')}`,
    );
  }
  return candidate as ConnectorPlugin;
}

/** Builds a registry from plugins already in hand (tests, embedding). */
export function createPluginRegistry(plugins: readonly ConnectorPlugin[]): PluginRegistry {
  const byType = new Map<string, ConnectorPlugin>();
  for (const plugin of plugins) {
    if (byType.has(plugin.type))
      throw new PluginLoadError(`Two connector plugins claim the type "${plugin.type}"`);
    byType.set(plugin.type, plugin);
  }
  return {
    get: (type) => byType.get(type),
    types: () => [...byType.keys()],
    describe: () =>
      [...byType.values()].map((plugin) => ({
        type: plugin.type,
        display_name: plugin.displayName ?? plugin.type,
        config_schema: z.toJSONSchema(plugin.configSchema, { unrepresentable: 'any', io: 'input' }),
        secret_fields: secretFieldsOf(plugin.configSchema),
      })),
  };
}

/** The names a module exports, for a message: `a, b, c` or `nothing`. */
function exportNames(mod: Record<string, unknown>): string {
  const names = Object.keys(mod).sort();
  return names.length === 0 ? 'nothing' : names.join(', ');
}

/**
 * Imports each specifier and takes its `plugin` export (or default export). Throws
 * PluginLoadError naming the module when it cannot be imported, exports neither (listing what it
 * does export), or exports something that is not a plugin.
 */
/**
 * The built-in connectors, each imported by name here so a bundler sees them (`npm start` runs a
 * bundle of the sources: scripts/start-bundle.mjs); any other module is imported by its specifier.
 */
const BUILTIN_MODULES: Readonly<Record<string, () => Promise<unknown>>> = {
  '@quarry/connector-postgres': () => import('@quarry/connector-postgres'),
  '@quarry/connector-mysql': () => import('@quarry/connector-mysql'),
  '@quarry/connector-duckdb': () => import('@quarry/connector-duckdb'),
  '@quarry/connector-bigquery': () => import('@quarry/connector-bigquery'),
  '@quarry/connector-snowflake': () => import('@quarry/connector-snowflake'),
  '@quarry/connector-trino': () => import('@quarry/connector-trino'),
};

export async function loadPlugins(specifiers: readonly string[]): Promise<PluginRegistry> {
  const plugins: ConnectorPlugin[] = [];
  for (const specifier of specifiers) {
    let mod: Record<string, unknown>;
    try {
      const builtin = Object.hasOwn(BUILTIN_MODULES, specifier) ? BUILTIN_MODULES[specifier] : undefined;
      mod = (await (builtin === undefined ? import(specifier) : builtin())) as Record<string, unknown>;
    } catch (error) {
      throw new PluginLoadError(`Cannot load connector module "${specifier}": ${(error as Error).message}`, {
        cause: error,
      });
    }
    const candidate = mod.plugin ?? mod.default;
    if (candidate === undefined) {
      throw new PluginLoadError(
        `Connector module "${specifier}" has neither a \`plugin\` nor a default export (it exports ${exportNames(mod)}); ` +
          'export its ConnectorPlugin as `plugin`.',
      );
    }
    plugins.push(assertPlugin(candidate, specifier));
  }
  return createPluginRegistry(plugins);
}
