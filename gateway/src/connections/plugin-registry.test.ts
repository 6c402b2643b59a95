// Loading connector plugins by module specifier: the real connectors load and declare whether
// they use the gateway host's own files or credentials; a module that cannot be imported, exports
// no plugin (the message lists what it does export) or exports something that is not a plugin is
// refused with a PluginLoadError naming it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fieldsWithoutUi } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlugins, PluginLoadError } from './plugin-registry.js';

let dir: string;

/** Writes an ES module into the temp dir and returns its file URL (a specifier operators may use). */
async function moduleWith(name: string, source: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, source);
  return pathToFileURL(file).href;
}

async function loadError(specifiers: readonly string[]): Promise<PluginLoadError> {
  try {
    await loadPlugins(specifiers);
  } catch (error) {
    if (error instanceof PluginLoadError) return error;
    throw error;
  }
  throw new Error('expected a PluginLoadError');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-plugin-registry-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('loadPlugins', () => {
  it("loads the real connectors, which declare what of the gateway host's own they use", async () => {
    const registry = await loadPlugins([
      '@quarry/connector-postgres',
      '@quarry/connector-duckdb',
      '@quarry/connector-bigquery',
      'quarry-connector-sqlite',
    ]);
    expect(registry.types()).toEqual(['postgres', 'duckdb', 'bigquery', 'sqlite']);
    expect(registry.get('postgres')?.hostAccess).toBeUndefined();
    expect(registry.get('duckdb')?.hostAccess?.({ path: '/srv/w.duckdb' })).toEqual(['files']);
    expect(registry.get('sqlite')?.hostAccess?.({ path: '/srv/shop.sqlite' })).toEqual(['files']);
    const bigquery = registry.get('bigquery');
    expect(bigquery?.hostAccess?.({ projectId: 'p', applicationDefaultCredentials: true })).toEqual([
      'credentials',
    ]);
    expect(bigquery?.hostAccess?.({ projectId: 'p', credentials: {} })).toEqual([]);
  });

  it('every shipped connector labels every config field for forms, and the description carries the hints', async () => {
    const registry = await loadPlugins([
      '@quarry/connector-postgres',
      '@quarry/connector-mysql',
      '@quarry/connector-duckdb',
      '@quarry/connector-bigquery',
      '@quarry/connector-snowflake',
      '@quarry/connector-trino',
      'quarry-connector-sqlite',
    ]);
    for (const type of registry.types()) {
      expect({ type, missing: fieldsWithoutUi(registry.get(type)!.configSchema) }).toEqual({
        type,
        missing: [],
      });
    }
    const postgres = registry.describe().find((c) => c.type === 'postgres');
    const variants = (
      postgres!.config_schema as {
        anyOf: {
          ui: { label: string };
          properties: Record<string, { ui?: { label: string; secret?: boolean } }>;
        }[];
      }
    ).anyOf;
    expect(variants.map((v) => v.ui.label).sort()).toEqual(['A connection URL', 'Host, database and user']);
    const discrete = variants.find((v) => v.ui.label === 'Host, database and user');
    expect(discrete?.properties.password?.ui).toMatchObject({ label: 'Password', secret: true });
    expect(postgres?.secret_fields).toContain('password');
  });

  it('says when a module has neither a `plugin` nor a default export, listing what it exports', async () => {
    const some = await moduleWith(
      'some.mjs',
      'export const sqlitePlugin = {};\nexport function helper() {}\n',
    );
    expect((await loadError([some])).message).toBe(
      `Connector module "${some}" has neither a \`plugin\` nor a default export ` +
        '(it exports helper, sqlitePlugin); export its ConnectorPlugin as `plugin`.',
    );
    const none = await moduleWith('none.mjs', 'const unused = 1;\n');
    expect((await loadError([none])).message).toContain('(it exports nothing)');
  });

  it('lists what is wrong with an export that is not a plugin', async () => {
    const bad = await moduleWith(
      'bad.mjs',
      "export default { type: 'acme', dialect: { placeholders: 'numbered' }, hostAccess: true };\n",
    );
    const error = await loadError([bad]);
    expect(error.message).toBe(
      `Connector module "${bad}" does not export a valid Quarry connector plugin: ` +
        '`configSchema` must be a zod schema; `createDriver` must be a function; ' +
        '`hostAccess`, when given, must be a function',
    );
  });

  it('names a module that cannot be imported, keeping the import error as the cause', async () => {
    const error = await loadError(['@quarry/connector-postgres', 'quarry-connector-nope']);
    expect(error.message).toMatch(/^Cannot load connector module "quarry-connector-nope": /);
    expect(error.cause).toBeInstanceOf(Error);
  });
});
