// QUARRY_MAX_ANALYTIC_TIMEOUT_MS (docs/deploy.md section 5): the longest query an owner may
// deploy. A longer `limits.timeout_ms` is refused at deploy; an analytic stored with a longer one
// before the operator lowered the limit is cut to it when it runs, so no query outlives the
// shutdown grace and the proxy's timeouts that are set from the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAnalyticDefinition } from '../catalog/analytic-definition.js';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

// The example analytics the test gateway loads take up to 5 s.
const MAX_MS = 5_000;
let tg: TestGateway;

beforeAll(async () => {
  tg = await createTestGateway({ QUARRY_MAX_ANALYTIC_TIMEOUT_MS: String(MAX_MS) });
});
afterAll(async () => {
  await tg?.close();
});

// Tens of seconds of DuckDB work: far past the cap.
const SLOW_SQL = 'SELECT count(*) AS n FROM range(200000000000) t(x) WHERE x % 7 = 3';

describe('the longest analytic timeout', () => {
  it('refuses to deploy a timeout_ms above it, and takes one at it', async () => {
    const deploy = (timeout: number) =>
      tg.call('PUT', '/v1/owner/analytics/cap-deploy', {
        key: tg.ownerKey,
        body: { connection: 'demo', sql: 'SELECT 1 AS one', limits: { timeout_ms: timeout } },
      });
    const refused = await deploy(MAX_MS + 1);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error.code).toBe('INVALID_REQUEST');
    expect(refused.json.error.details).toContainEqual({
      field: 'limits.timeout_ms',
      message: `${MAX_MS + 1} ms is above this gateway's longest, ${MAX_MS} ms (QUARRY_MAX_ANALYTIC_TIMEOUT_MS)`,
    });
    expect((await deploy(MAX_MS)).status).toBe(200);
  });

  it('cuts an analytic stored with a longer timeout to it when it runs', async () => {
    const parsed = parseAnalyticDefinition({
      name: 'cap-stored',
      connection: 'demo',
      sql: SLOW_SQL,
      limits: { timeout_ms: 30_000 },
      visibility: 'public',
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    // As deployed before the operator lowered the limit: straight into the store.
    await tg.gateway.services.store.analytics.create({
      accountId: tg.ownerId,
      name: 'cap-stored',
      definition: JSON.parse(JSON.stringify(parsed.definition)) as Record<string, unknown>,
      visibility: 'public',
    });
    const started = performance.now();
    const res = await tg.call('POST', '/v1/query', {
      key: tg.demoKey,
      body: { source: 'cap-stored', params: {} },
    });
    const elapsed = performance.now() - started;
    expect(res.status, res.text).toBe(504);
    expect(res.json.error.code).toBe('QUERY_TIMEOUT');
    expect(elapsed).toBeGreaterThan(MAX_MS - 500);
    expect(elapsed).toBeLessThan(MAX_MS + 10_000);
  }, 60_000);
});
