// The catalog over the control-plane store: an analytic's current version (or a pinned one), its
// connection and its template parsed for that connection's dialect, cached in process. The change feed drops
// entries when an analytic or connection changes on any instance; a TTL bounds staleness even
// if a change were missed. When a dropped entry's reload finds another version (or no analytic),
// `onSuperseded` hears of the old one once, so what was kept for it (cached answers) can go.
// Pinned entries (`name@3`) are cached under their own key and dropped with their name; a version
// never changes, so they are never "superseded" (a deprecation is reloaded, not a new version).
import { parseTemplate } from '@quarry/sdk-connector';
import { LRUCache } from 'lru-cache';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError } from '../errors/api-error.js';
import type { AnalyticRepository } from '../store/analytic-repository.js';
import type { ConnectionRepository } from '../store/connection-repository.js';
import { parseAnalyticDefinition } from './analytic-definition.js';
import type { Catalog, CatalogEntry } from './catalog.js';

export interface StoreCatalogOptions {
  readonly analytics: Pick<AnalyticRepository, 'get'>;
  readonly connections: Pick<ConnectionRepository, 'findByName'>;
  readonly plugins: PluginRegistry;
  /** Upper bound on how long an entry is trusted (default 60 s). */
  readonly ttlMs?: number;
  readonly maxEntries?: number;
  /**
   * Called once per entry invalidated by name whose next load is another analytic version, or
   * none (deleted). Not called when the reload finds the same version.
   */
  readonly onSuperseded?: (old: CatalogEntry) => void;
}

/** Invalidated entries awaiting their reload; past this many the oldest are forgotten. */
const MAX_RETIRED = 10_000;

/** Sentinel for "no such analytic", cached like a hit so unknown names do not hammer the store. */
const ABSENT = Symbol('absent');

export function createStoreCatalog(options: StoreCatalogOptions): Catalog {
  // name → the keys of its pinned entries in the cache (`name@3`), so an invalidation drops them.
  const pinnedKeys = new Map<string, Set<string>>();
  const forgetPinned = (key: string) => {
    const at = key.indexOf('@');
    if (at < 0) return;
    const name = key.slice(0, at);
    const keys = pinnedKeys.get(name);
    keys?.delete(key);
    if (keys?.size === 0) pinnedKeys.delete(name);
  };
  const cache = new LRUCache<string, CatalogEntry | typeof ABSENT>({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? 60_000,
    dispose: (_value, key, reason) => {
      if (reason !== 'set') forgetPinned(key);
    },
  });
  const keyOf = (name: string, version: number | undefined) =>
    version === undefined ? name : `${name}@${version}`;
  const inflight = new Map<string, Promise<CatalogEntry | undefined>>();
  // Bumped by invalidate(): a load that started before an invalidation must not be cached.
  let generation = 0;
  // name → the entry an invalidation dropped, until a load tells whether it was superseded.
  const retired = new Map<string, CatalogEntry>();

  function settle(name: string, current: CatalogEntry | undefined): void {
    const old = retired.get(name);
    if (old === undefined) return;
    retired.delete(name);
    if (current === undefined || current.analyticId !== old.analyticId || current.version !== old.version)
      options.onSuperseded?.(old);
  }

  /** Seconds a caller is told to wait for a stored definition to be redeployed. */
  const STALE_DEFINITION_RETRY_S = 300;

  async function load(name: string, version: number | undefined): Promise<CatalogEntry | undefined> {
    const analytic = await options.analytics.get(name, version === undefined ? {} : { version });
    if (!analytic) return undefined;
    const parsed = parseAnalyticDefinition(analytic.definition);
    if (!parsed.ok) {
      // Stored under rules that have since tightened (an owner pattern RE2 cannot run, a bound
      // lowered): not a bug of the gateway's, and nothing a caller can fix. It is unavailable
      // until its owner deploys a definition that passes; the deploy says what to change.
      throw new ApiError(
        'SOURCE_UNAVAILABLE',
        `The analytic "${name}" cannot run until its owner deploys it again (its stored definition no longer passes validation).`,
        { retryAfter: STALE_DEFINITION_RETRY_S },
      );
    }
    const definition = parsed.definition;
    const connection = await options.connections.findByName(analytic.accountId, definition.connection);
    if (!connection) {
      // Its owner deleted the connection (`?force=true` unlists the analytics on it): nothing a
      // retry can change, so a 404 naming it, never a 503 with `retry_after`.
      throw new ApiError(
        'NOT_FOUND',
        `The analytic "${name}" cannot run: its connection "${definition.connection}" was deleted. Its owner must connect it again or deploy the analytic on another connection.`,
      );
    }
    const plugin = options.plugins.get(connection.type);
    if (!plugin) {
      throw new ApiError('SOURCE_UNAVAILABLE', `The connector type behind "${name}" is not installed.`, {
        retryAfter: 60,
      });
    }
    return {
      analyticId: analytic.id,
      name: analytic.name,
      version: analytic.version,
      currentVersion: analytic.currentVersion,
      deprecation:
        analytic.deprecation === undefined
          ? undefined
          : {
              deprecatedAt: analytic.deprecation.deprecatedAt.getTime(),
              sunsetAt: analytic.deprecation.sunsetAt.getTime(),
            },
      ownerId: analytic.accountId,
      visibility: analytic.visibility,
      sharedWith: analytic.sharedWith,
      definition,
      connectionId: connection.id,
      connectionType: connection.type,
      template: parseTemplate(definition.sql, plugin.dialect),
      pricing: analytic.pricing,
    };
  }

  return {
    async resolve(name, version) {
      const key = keyOf(name, version);
      const cached = cache.get(key);
      if (cached !== undefined) return cached === ABSENT ? undefined : cached;
      let pending = inflight.get(key);
      if (!pending) {
        const started = generation;
        pending = load(name, version).finally(() => inflight.delete(key));
        inflight.set(key, pending);
        pending.then(
          (entry) => {
            if (generation !== started) return;
            cache.set(key, entry ?? ABSENT);
            if (version === undefined) settle(name, entry);
            else {
              const keys = pinnedKeys.get(name) ?? new Set<string>();
              keys.add(key);
              pinnedKeys.set(name, keys);
            }
          },
          () => {},
        );
      }
      return pending;
    },
    peek(name, version) {
      const cached = cache.get(version === undefined ? name : keyOf(name, version));
      return cached === ABSENT ? undefined : cached;
    },
    invalidate(name) {
      generation += 1;
      if (name === undefined) {
        cache.clear();
        pinnedKeys.clear();
        return;
      }
      inflight.delete(name);
      const pinned = pinnedKeys.get(name);
      if (pinned !== undefined) {
        pinnedKeys.delete(name);
        for (const key of pinned) {
          inflight.delete(key);
          cache.delete(key);
        }
      }
      const dropped = cache.get(name);
      // The first of several invalidations keeps the oldest entry: that is the one superseded.
      if (dropped !== undefined && dropped !== ABSENT && !retired.has(name)) {
        if (retired.size >= MAX_RETIRED) retired.delete(retired.keys().next().value as string);
        retired.set(name, dropped);
      }
      cache.delete(name);
    },
  };
}
