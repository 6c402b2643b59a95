// The embedded demo: one demo account that owns the DuckDB demo warehouse (connection "demo"),
// the example analytics and their marketplace listings, and whose key is written to
// $QUARRY_DATA_DIR/demo-key (0600), so every owner command of the README works with that key
// as written. Idempotent: a restart reuses all of it, and a demo key given by QUARRY_DEMO_KEY is
// registered instead of a generated one. A data directory made by an earlier version (the
// examples belonged to a hidden account, the key to a consumer account) gets a key of the demo
// account in its demo-key file.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayConfig } from '../config.js';
import type { Logger } from '../observability/logger.js';
import { API_KEY_PREFIX_LENGTH, digestKey, generateApiKey, parseApiKey } from '../security/api-key.js';
import type { AccountService } from '../services/account-service.js';
import type { AnalyticsService } from '../services/analytics-service.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import { loadAnalyticsDir } from './analytics-dir.js';

/** The demo account: it owns the demo connection, the example analytics and the demo key. */
export const DEMO_ACCOUNT_EMAIL = 'examples@demo.quarry.dev';
export const DEMO_KEY_FILE = 'demo-key';
export const DEMO_WAREHOUSE_FILE = 'demo.duckdb';

export interface DemoInfo {
  /** The demo account: owner of the demo connection, the example analytics and the key. */
  readonly accountId: string;
  readonly key: string;
  readonly keyFile: string;
}

export interface DemoDeps {
  readonly config: GatewayConfig;
  readonly store: ControlPlaneStore;
  readonly analytics: AnalyticsService;
  readonly accounts: AccountService;
  readonly logger: Logger;
}

async function ensureAccount(store: ControlPlaneStore, email: string, name: string, plan: string) {
  const existing = await store.accounts.findByEmail(email);
  if (existing) return existing;
  return store.accounts.create({ email, name, plan });
}

async function ensureDemoKey(deps: DemoDeps, accountId: string): Promise<string> {
  const { config, store } = deps;
  const file = join(config.dataDir, DEMO_KEY_FILE);
  const candidates: string[] = [];
  if (config.demoKey !== undefined) {
    if (!parseApiKey(config.demoKey).ok)
      throw new Error('QUARRY_DEMO_KEY is not a valid Quarry key (qry_live_…)');
    candidates.push(config.demoKey);
  } else if (existsSync(file)) {
    candidates.push((await readFile(file, 'utf8')).trim());
  }
  for (const secret of candidates) {
    const parsed = parseApiKey(secret);
    if (!parsed.ok) continue;
    const found = await store.keys.findByDigest(parsed.digest);
    if (found?.account.id === accountId && found.key.revokedAt === null) return secret;
    if (found === null && config.demoKey === secret) {
      await store.keys.create({
        accountId,
        name: 'demo',
        prefix: secret.slice(0, API_KEY_PREFIX_LENGTH),
        digest: digestKey(secret),
        scopes: ['query', 'keys', 'owner', 'account'],
      });
      return secret;
    }
  }
  const generated = generateApiKey('live');
  await store.keys.create({
    accountId,
    name: 'demo',
    prefix: generated.prefix,
    digest: generated.digest,
    scopes: ['query', 'keys', 'owner', 'account'],
  });
  await writeFile(file, `${generated.secret}\n`, { mode: 0o600 });
  return generated.secret;
}

/** Lists the public example analytics on the marketplace, so the demo's marketplace is not empty. */
async function publishExamples(
  store: ControlPlaneStore,
  ownerId: string,
  names: readonly string[],
): Promise<void> {
  for (const name of names) {
    const analytic = await store.analytics.get(name);
    if (!analytic || analytic.accountId !== ownerId || analytic.visibility !== 'public') continue;
    if (await store.listings.getForOwner(ownerId, analytic.id)) continue;
    const d = analytic.definition as {
      title?: string;
      description?: string;
      category?: string;
      tags?: string[];
      price?: number;
      example_params?: Record<string, unknown>;
    };
    await store.listings.publish(ownerId, analytic.id, {
      title: d.title ?? name,
      category: d.category ?? 'general',
      price: d.price ?? 0,
      ...(d.description === undefined ? {} : { description: d.description }),
      ...(d.tags === undefined ? {} : { tags: d.tags }),
      ...(d.example_params === undefined ? {} : { exampleParams: d.example_params }),
    });
  }
}

/** What {@link prepareDemoWarehouse} did, for the log. */
export interface DemoWarehouseResult {
  readonly path: string;
  readonly rows: number;
  /** `kept` (already there), `template` (copied from the install-time template) or `generated`. */
  readonly how: 'kept' | 'template' | 'generated';
}

/**
 * Makes sure the demo DuckDB warehouse is in the data directory: a current demo file (of any
 * size: `npm run seed -w @quarry/examples -- --rows N` makes smaller ones) is kept; a missing or
 * outdated one is copied from the template `npm ci` / `npm run build` made, or generated when
 * there is none. A file that is not a demo warehouse is never replaced (this rejects). DuckDB
 * is loaded only when the file has to be generated or read.
 */
export async function prepareDemoWarehouse(dataDir: string): Promise<DemoWarehouseResult> {
  const path = join(dataDir, DEMO_WAREHOUSE_FILE);
  // Imported here: the examples package is the demo's, loaded only in demo mode.
  const { seedDemoWarehouse } = await import('@quarry/examples');
  const { rows, how } = await seedDemoWarehouse(path, { keepAnySize: true });
  return { path, rows, how };
}

export async function bootstrapDemo(deps: DemoDeps): Promise<DemoInfo> {
  const { config, store, logger } = deps;
  // A generous plan, so the quota does not stop a newcomer exploring.
  const owner = await ensureAccount(store, DEMO_ACCOUNT_EMAIL, 'Quarry demo', 'enterprise');
  // The file itself is prepared beside the start (prepareDemoWarehouse, a start-up task).
  const warehouse = join(config.dataDir, DEMO_WAREHOUSE_FILE);
  if (!(await store.connections.findByName(owner.id, 'demo'))) {
    await store.connections.create({
      accountId: owner.id,
      name: 'demo',
      type: 'duckdb',
      config: { path: warehouse },
    });
  }
  const dir = config.analyticsDir;
  if (dir !== undefined && existsSync(dir)) {
    const loaded = await loadAnalyticsDir(dir, owner.id, deps.analytics);
    logger.info(
      { dir, analytics: loaded.map((l) => `${l.name}@${l.version} ${l.outcome}`) },
      'example analytics loaded',
    );
    await publishExamples(
      store,
      owner.id,
      loaded.map((l) => l.name),
    );
  } else {
    logger.warn({ dir }, 'no analytics directory found');
  }
  const key = await ensureDemoKey(deps, owner.id);
  return { accountId: owner.id, key, keyFile: join(config.dataDir, DEMO_KEY_FILE) };
}
