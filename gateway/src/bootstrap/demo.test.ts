// The embedded demo's account owns the demo: with the key written to $QUARRY_DATA_DIR/demo-key,
// every owner command of the README works (connections, analytics, their listings, cache purges,
// statements), and its statement shows another account's calls. A data directory from before,
// whose demo-key belonged to a consumer account, gets a key of the demo account on restart.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../security/api-key.js';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';
import { bootstrapDemo, DEMO_ACCOUNT_EMAIL, DEMO_KEY_FILE } from './demo.js';

let tg: TestGateway;
let key: string;

beforeAll(async () => {
  tg = await createTestGateway();
  key = (await readFile(join(tg.dataDir, DEMO_KEY_FILE), 'utf8')).trim();
});
afterAll(async () => {
  await tg?.close();
});

describe('the demo account', () => {
  it('is the account of the demo key, and owns the demo connection', async () => {
    const account = await tg.call('GET', '/v1/account', { key });
    expect(account.status, account.text).toBe(200);
    expect(account.json.account.email).toBe(DEMO_ACCOUNT_EMAIL);
    const connections = await tg.call('GET', '/v1/owner/connections', { key });
    expect(connections.status, connections.text).toBe(200);
    expect(connections.json.connections.map((c: { name: string }) => c.name)).toEqual(['demo']);
  });

  it('owns the example analytics, lists them, and can purge their cache', async () => {
    const list = await tg.call('GET', '/v1/owner/analytics', { key });
    expect(list.status, list.text).toBe(200);
    const names = list.json.analytics.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(['sales-by-region', 'top-products', 'yearly-growth']));
    const purge = await tg.call('DELETE', '/v1/owner/analytics/sales-by-region/cache', { key });
    expect(purge.status, purge.text).toBe(204);
    const listing = await tg.call('GET', '/v1/owner/analytics/sales-by-region/listing', { key });
    expect(listing.status, listing.text).toBe(200);
  });

  it("shows a second account's calls on its statement", async () => {
    const caller = await tg.signUp('Second account');
    const call = await tg.call('POST', '/v1/query', {
      key: caller.key,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(call.status, call.text).toBe(200);
    const statement = await tg.call('GET', '/v1/owner/statements', { key });
    expect(statement.status, statement.text).toBe(200);
    const row = statement.json.analytics.find((a: { name: string }) => a.name === 'sales-by-region');
    expect(row?.calls).toBeGreaterThanOrEqual(1);
  });

  it('takes over a data directory whose demo-key belonged to another account', async () => {
    const services = tg.gateway.services;
    const other = await services.store.accounts.create({
      email: `old-demo-${Date.now()}@example.com`,
      name: 'x',
    });
    const old = generateApiKey('live');
    await services.store.keys.create({
      accountId: other.id,
      name: 'demo',
      prefix: old.prefix,
      digest: old.digest,
      scopes: ['query'],
    });
    await writeFile(join(tg.dataDir, DEMO_KEY_FILE), `${old.secret}\n`);
    const demo = await bootstrapDemo({
      config: services.config,
      store: services.store,
      analytics: services.analytics,
      accounts: services.accounts,
      logger: tg.gateway.services.logger,
    });
    expect(demo.key).not.toBe(old.secret);
    expect((await readFile(join(tg.dataDir, DEMO_KEY_FILE), 'utf8')).trim()).toBe(demo.key);
    const analytics = await tg.call('GET', '/v1/owner/analytics', { key: demo.key });
    expect(analytics.status, analytics.text).toBe(200);
    expect(analytics.json.analytics.length).toBeGreaterThanOrEqual(7);
  });
});
