// The store catalog's bookkeeping of superseded entries: after an invalidation, the reload tells
// whether the dropped entry's version is gone (a new version, or the analytic deleted), and only
// then is `onSuperseded` called, once, with the entry that was dropped.
import { describe, expect, it } from 'vitest';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import type { Analytic } from '../store/analytic-repository.js';
import type { Connection } from '../store/connection-repository.js';
import type { CatalogEntry } from './catalog.js';
import { createStoreCatalog } from './store-catalog.js';

/** A store holding one analytic `sales` whose version, id and param schema the test changes. */
function world() {
  const state = { id: 'ana_1', version: 1, exists: true, params: { n: { type: 'integer' } } as object };
  const superseded: CatalogEntry[] = [];
  const analytic = (): Analytic =>
    ({
      id: state.id,
      accountId: 'acc_owner',
      name: 'sales',
      version: state.version,
      currentVersion: state.version,
      definition: {
        name: 'sales',
        connection: 'wh',
        sql: 'SELECT :n AS n',
        params: state.params,
      },
      visibility: 'public',
      sharedWith: [],
    }) as unknown as Analytic;
  const catalog = createStoreCatalog({
    analytics: { get: async (name) => (name === 'sales' && state.exists ? analytic() : null) },
    connections: {
      findByName: async () => ({ id: 'con_1', type: 'fake', name: 'wh' }) as unknown as Connection,
    },
    plugins: { get: () => ({ dialect: { placeholders: 'numbered' } }) } as unknown as PluginRegistry,
    onSuperseded: (old) => superseded.push(old),
  });
  return { state, catalog, superseded };
}

describe('createStoreCatalog: superseded entries', () => {
  it('reports the old entry once when the reload finds a new version', async () => {
    const { state, catalog, superseded } = world();
    expect((await catalog.resolve('sales'))?.version).toBe(1);
    state.version = 2;
    catalog.invalidate('sales');
    expect(superseded).toEqual([]);
    expect((await catalog.resolve('sales'))?.version).toBe(2);
    expect(superseded.map((e) => [e.analyticId, e.version])).toEqual([['ana_1', 1]]);
    // The change feed's echo of the same change: the reload finds the same version, nothing goes.
    catalog.invalidate('sales');
    await catalog.resolve('sales');
    expect(superseded).toHaveLength(1);
  });

  it('reports nothing when the reload finds the same version', async () => {
    const { catalog, superseded } = world();
    await catalog.resolve('sales');
    catalog.invalidate('sales');
    await catalog.resolve('sales');
    expect(superseded).toEqual([]);
  });

  it('reports the oldest entry when several invalidations come before the reload', async () => {
    const { state, catalog, superseded } = world();
    await catalog.resolve('sales');
    state.version = 2;
    catalog.invalidate('sales');
    state.version = 3;
    catalog.invalidate('sales');
    expect((await catalog.resolve('sales'))?.version).toBe(3);
    expect(superseded.map((e) => e.version)).toEqual([1]);
  });

  it('reports a deleted analytic, and one whose name now belongs to another analytic', async () => {
    const deleted = world();
    await deleted.catalog.resolve('sales');
    deleted.state.exists = false;
    deleted.catalog.invalidate('sales');
    expect(await deleted.catalog.resolve('sales')).toBeUndefined();
    expect(deleted.superseded.map((e) => e.analyticId)).toEqual(['ana_1']);

    const renamed = world();
    await renamed.catalog.resolve('sales');
    renamed.state.id = 'ana_2';
    renamed.catalog.invalidate('sales');
    expect((await renamed.catalog.resolve('sales'))?.analyticId).toBe('ana_2');
    expect(renamed.superseded.map((e) => e.analyticId)).toEqual(['ana_1']);
  });

  it('reports nothing for a name that was never loaded or was absent', async () => {
    const { state, catalog, superseded } = world();
    catalog.invalidate('sales');
    await catalog.resolve('sales');
    state.exists = false;
    catalog.invalidate('other');
    await catalog.resolve('other');
    catalog.invalidate('other');
    await catalog.resolve('other');
    expect(superseded).toEqual([]);
  });
});

describe('createStoreCatalog: stored definitions that no longer validate', () => {
  it('answers 503 SOURCE_UNAVAILABLE naming the analytic, not a 500, until its owner deploys it again', async () => {
    const { state, catalog } = world();
    // Stored before owner patterns ran on RE2, which has no backreferences.
    state.params = { n: { type: 'string', pattern: '(a)\\1' } };
    const refused = await catalog.resolve('sales').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({
      code: 'SOURCE_UNAVAILABLE',
      message: expect.stringMatching(/"sales" cannot run until its owner deploys it again/),
    });
    expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
  });
});

describe('createStoreCatalog: pinned versions', () => {
  it('caches a pinned version apart, drops it with its name, and never reports it superseded', async () => {
    const loads: (number | undefined)[] = [];
    const state = { current: 2, deprecated: undefined as { deprecatedAt: Date; sunsetAt: Date } | undefined };
    const superseded: CatalogEntry[] = [];
    const catalog = createStoreCatalog({
      analytics: {
        get: async (_name, options = {}) => {
          loads.push(options.version);
          const version = options.version ?? state.current;
          if (version > state.current) return null;
          return {
            id: 'ana_1',
            accountId: 'acc_owner',
            name: 'sales',
            version,
            currentVersion: state.current,
            definition: { name: 'sales', connection: 'wh', sql: `SELECT ${version} AS v` },
            visibility: 'public',
            sharedWith: [],
            pricing: { price: version },
            deprecation: version < state.current ? state.deprecated : undefined,
          } as unknown as Analytic;
        },
      },
      connections: {
        findByName: async () => ({ id: 'con_1', type: 'fake', name: 'wh' }) as unknown as Connection,
      },
      plugins: { get: () => ({ dialect: { placeholders: 'numbered' } }) } as unknown as PluginRegistry,
      onSuperseded: (old) => superseded.push(old),
    });
    const pinned = await catalog.resolve('sales', 1);
    expect(pinned).toMatchObject({ version: 1, currentVersion: 2, pricing: { price: 1 } });
    expect(pinned?.deprecation).toBeUndefined();
    expect(catalog.peek('sales', 1)).toBe(pinned);
    expect(catalog.peek('sales')).toBeUndefined();
    expect((await catalog.resolve('sales'))?.version).toBe(2);
    expect(await catalog.resolve('sales', 7)).toBeUndefined();
    expect(loads).toEqual([1, undefined, 7]);
    // Cached: no more loads.
    await catalog.resolve('sales', 1);
    await catalog.resolve('sales', 7);
    expect(loads).toHaveLength(3);

    // The owner deprecates version 1 (the change feed invalidates the name): the pinned entry
    // reloads with its deprecation in ms; nothing is superseded.
    const sunsetAt = new Date(Date.now() + 86_400_000);
    state.deprecated = { deprecatedAt: new Date(1_000), sunsetAt };
    catalog.invalidate('sales');
    expect(catalog.peek('sales', 1)).toBeUndefined();
    expect((await catalog.resolve('sales', 1))?.deprecation).toEqual({
      deprecatedAt: 1_000,
      sunsetAt: sunsetAt.getTime(),
    });
    // A new version supersedes the current entry only; the pinned one just reloads.
    state.current = 3;
    catalog.invalidate('sales');
    expect((await catalog.resolve('sales', 1))?.currentVersion).toBe(3);
    expect((await catalog.resolve('sales'))?.version).toBe(3);
    expect(superseded.map((e) => e.version)).toEqual([2]);
  });
});
