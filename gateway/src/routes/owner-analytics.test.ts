// The owner's analytics lifecycle over HTTP: create (version 1), update (new versions, old ones
// readable), idempotent deploy, visibility across accounts, delete, and invalid definitions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type SignedUp, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
let carol: SignedUp;

const V1 = {
  connection: 'wh',
  sql: 'SELECT region, count(*) AS orders FROM sales WHERE year = :year GROUP BY region ORDER BY region',
  params: { year: { type: 'integer', required: true, min: 2000, max: 2100 } },
  insights: { shape: 'keyed', key: 'region' },
};
const V2 = {
  ...V1,
  sql: 'SELECT region, count(*) AS orders, sum(amount) AS revenue FROM sales WHERE year = :year GROUP BY region ORDER BY region',
};

beforeAll(async () => {
  tg = await createTestGateway();
  [alice, bob, carol] = await Promise.all([tg.signUp('Alice'), tg.signUp('Bob'), tg.signUp('Carol')]);
  for (const who of [alice, bob]) {
    const res = await tg.call('POST', '/v1/owner/connections', {
      key: who.key,
      body: { name: 'wh', type: 'duckdb', config: { path: `${tg.dataDir}/demo.duckdb` } },
    });
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(async () => {
  await tg?.close();
});

const run = (key: string, name = 'owner-sales') => tg.call('GET', `/v1/analytics/${name}?year=2024`, { key });

describe('owner analytics lifecycle', () => {
  it('creates, versions, deploys, shares and deletes an analytic', async () => {
    const created = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { name: 'owner-sales', ...V1 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.analytic).toMatchObject({
      name: 'owner-sales',
      version: 1,
      current_version: 1,
      visibility: 'private',
    });
    const first = await run(alice.key);
    expect(first.status, first.text).toBe(200);
    expect(first.json.meta.version).toBe(1);
    expect(first.json.columns.map((c: { name: string }) => c.name)).toEqual(['region', 'orders']);

    // PATCH: a whole new definition is version 2, served at once.
    const patched = await tg.call('PATCH', '/v1/owner/analytics/owner-sales', { key: alice.key, body: V2 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.analytic).toMatchObject({ version: 2, current_version: 2 });
    const second = await run(alice.key);
    expect(second.json.meta.version).toBe(2);
    expect(second.json.columns.map((c: { name: string }) => c.name)).toEqual(['region', 'orders', 'revenue']);

    // The old version stays readable.
    const old = await tg.call('GET', '/v1/owner/analytics/owner-sales?version=1', { key: alice.key });
    expect(old.status).toBe(200);
    expect(old.json.analytic).toMatchObject({ version: 1, current_version: 2 });
    expect(old.json.analytic.definition.sql).toBe(V1.sql);
    const current = await tg.call('GET', '/v1/owner/analytics/owner-sales', { key: alice.key });
    expect(current.json.analytic.definition.sql).toBe(V2.sql);
    const history = await tg.call('GET', '/v1/owner/analytics/owner-sales/versions', { key: alice.key });
    expect(history.json.versions.map((v: { version: number }) => v.version).sort()).toEqual([1, 2]);
    const missing = await tg.call('GET', '/v1/owner/analytics/owner-sales?version=9', { key: alice.key });
    expect(missing.status).toBe(404);

    // PUT deploy: the same definition changes nothing; a changed one is a new version.
    const same = await tg.call('PUT', '/v1/owner/analytics/owner-sales', { key: alice.key, body: V2 });
    expect(same.status, same.text).toBe(200);
    expect(same.json).toMatchObject({ outcome: 'unchanged', analytic: { version: 2 } });
    const again = await tg.call('PUT', '/v1/owner/analytics/owner-sales', { key: alice.key, body: V2 });
    expect(again.json).toMatchObject({ outcome: 'unchanged', analytic: { version: 2 } });
    const changed = await tg.call('PUT', '/v1/owner/analytics/owner-sales', {
      key: alice.key,
      body: { ...V2, title: 'Orders and revenue by region' },
    });
    expect(changed.json).toMatchObject({ outcome: 'updated', analytic: { version: 3 } });
    expect((await run(alice.key)).json.meta.version).toBe(3);
    const fresh = await tg.call('PUT', '/v1/owner/analytics/owner-fresh', { key: alice.key, body: V1 });
    expect(fresh.json).toMatchObject({ outcome: 'created', analytic: { name: 'owner-fresh', version: 1 } });

    // Visibility: private → owner only; shared → the allow-list; public → everyone.
    expect((await run(bob.key)).status).toBe(404);
    const shared = await tg.call('PATCH', '/v1/owner/analytics/owner-sales', {
      key: alice.key,
      body: { ...V2, visibility: 'shared', shared_with: [bob.accountId] },
    });
    expect(shared.status, shared.text).toBe(200);
    expect((await run(bob.key)).status).toBe(200);
    const carolShared = await run(carol.key);
    expect(carolShared.status).toBe(404);
    expect(carolShared.json.error.code).toBe('SOURCE_NOT_FOUND');
    const pub = await tg.call('PATCH', '/v1/owner/analytics/owner-sales', {
      key: alice.key,
      body: { ...V2, visibility: 'public' },
    });
    expect(pub.json.analytic.version).toBe(5);
    const carolPublic = await run(carol.key);
    expect(carolPublic.status).toBe(200);
    expect(carolPublic.json.meta.version).toBe(5);
    // Bob may call it but not manage it.
    const bobPatch = await tg.call('PATCH', '/v1/owner/analytics/owner-sales', { key: bob.key, body: V1 });
    expect(bobPatch.status).toBe(404);
    const bobDelete = await tg.call('DELETE', '/v1/owner/analytics/owner-sales', { key: bob.key });
    expect(bobDelete.status).toBe(404);

    // Delete stops it answering, but the name stays Alice's: integrations that call
    // "owner-sales" must never reach another owner's SQL (or price).
    const deleted = await tg.call('DELETE', '/v1/owner/analytics/owner-sales', { key: alice.key });
    expect(deleted.status).toBe(204);
    expect((await run(alice.key)).status).toBe(404);
    const list = await tg.call('GET', '/v1/owner/analytics', { key: alice.key });
    expect(list.json.analytics.map((a: { name: string }) => a.name)).toEqual(['owner-fresh']);
    const takeover = await tg.call('POST', '/v1/owner/analytics', {
      key: bob.key,
      body: { name: 'owner-sales', ...V1, price: 100, visibility: 'public' },
    });
    expect(takeover.status, takeover.text).toBe(409);
    expect(takeover.json.error).toMatchObject({
      code: 'CONFLICT',
      message: 'The analytic name "owner-sales" is taken.',
    });
    const deployTakeover = await tg.call('PUT', '/v1/owner/analytics/owner-sales', {
      key: bob.key,
      body: V1,
    });
    expect(deployTakeover.status, deployTakeover.text).toBe(409);
    expect(deployTakeover.json.error.message).toBe('The analytic name "owner-sales" is taken.');
    expect((await run(bob.key)).status).toBe(404);
    // Its owner may bring it back.
    const back = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { name: 'owner-sales', ...V1, visibility: 'public' },
    });
    expect(back.status, back.text).toBe(201);
    expect(back.json.analytic.version).toBe(1);
    const bobRun = await run(bob.key);
    expect(bobRun.status, bobRun.text).toBe(200);
    expect(bobRun.json.columns.map((c: { name: string }) => c.name)).toEqual(['region', 'orders']);
  });

  it('answers "taken" alike for a public, a private and a deleted name', async () => {
    const create = (key: string, name: string, visibility: string) =>
      tg.call('POST', '/v1/owner/analytics', { key, body: { name, ...V1, visibility } });
    expect((await create(alice.key, 'taken-public', 'public')).status).toBe(201);
    expect((await create(alice.key, 'taken-private', 'private')).status).toBe(201);
    expect((await create(alice.key, 'taken-deleted', 'public')).status).toBe(201);
    expect((await tg.call('DELETE', '/v1/owner/analytics/taken-deleted', { key: alice.key })).status).toBe(
      204,
    );
    const answers = [];
    for (const name of ['taken-public', 'taken-private', 'taken-deleted']) {
      for (const method of ['POST', 'PUT']) {
        const res =
          method === 'POST'
            ? await create(bob.key, name, 'public')
            : await tg.call('PUT', `/v1/owner/analytics/${name}`, { key: bob.key, body: V1 });
        answers.push({
          status: res.status,
          code: res.json?.error?.code,
          message: res.json?.error?.message?.replace(name, 'NAME'),
        });
      }
    }
    expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(
      new Set([
        JSON.stringify({ status: 409, code: 'CONFLICT', message: 'The analytic name "NAME" is taken.' }),
      ]),
    );
  });
});

describe('invalid definitions', () => {
  it('lists every problem at once: undeclared :param, bad params schema, unknown connection', async () => {
    const res = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: {
        name: 'owner-broken',
        connection: 'no-such-connection',
        sql: 'SELECT * FROM sales WHERE year = :year AND region = :region',
        params: { year: { type: 'integr' } },
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('INVALID_REQUEST');
    const details: { field: string; message: string }[] = res.json.error.details;
    const fields = details.map((d) => d.field);
    expect(fields).toContain('connection');
    expect(fields.some((f) => f.startsWith('params'))).toBe(true);
    expect(details.some((d) => d.field === 'sql' && d.message.includes(':region'))).toBe(true);
  });

  it('lists an undeclared :param on an otherwise valid definition', async () => {
    const res = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: {
        name: 'owner-undeclared',
        connection: 'wh',
        sql: 'SELECT :a AS a, :b AS b',
        params: { a: { type: 'integer' } },
      },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details).toEqual([{ field: 'sql', message: expect.stringContaining(':b') }]);
  });

  it('refuses a shared analytic without an allow-list and a bad name', async () => {
    const res = await tg.call('POST', '/v1/owner/analytics', {
      key: alice.key,
      body: { name: 'Bad Name', connection: 'wh', sql: 'SELECT 1 AS one', visibility: 'shared' },
    });
    expect(res.status).toBe(400);
    const fields = res.json.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain('name');
    expect(fields).toContain('shared_with');
  });

  it('refuses renaming through PATCH', async () => {
    const res = await tg.call('PATCH', '/v1/owner/analytics/owner-fresh', {
      key: alice.key,
      body: { ...V1, name: 'owner-renamed' },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.details[0].field).toBe('name');
  });
});
