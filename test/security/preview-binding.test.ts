// Issue 29, finding 6: a try-token previews the one analytic it was minted for, and only while
// that analytic is listed with previews on. Every preview call checks both, whatever path its
// body took (a body the account already sent is decided from a memo, and must still be refused).
// The owner's own test-run tokens keep working on its unlisted analytics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { deployAnalytic, expectStatus } from '../support/metering-fixture.js';
import { pgAvailable, serviceUp } from '../support/test-services.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

const up = serviceUp(await pgAvailable());
let w: AttackWorld;
let other: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function mint(key: string, source: string): Promise<string> {
  const minted = await w.call('POST', '/v1/marketplace/try-token', { key, json: { source } });
  expect(minted.status, minted.text).toBe(201);
  return minted.body.token as string;
}

const preview = (token: string, source: string) =>
  w.call('POST', '/v1/query', { headers: { authorization: `Bearer ${token}` }, json: { source } });

async function list(name: string, json: Record<string, unknown> = {}): Promise<void> {
  const res = await w.call('PUT', `/v1/owner/analytics/${name}/listing`, {
    key: w.owner.key,
    json: { title: name, category: 'Testing', ...json },
  });
  expectStatus(res, 200, 'list');
}

describe.runIf(up)('try-token previews are bound to a listed analytic on every call', () => {
  beforeAll(async () => {
    w = await createAttackWorld({ label: 'preview', env: { QUARRY_PREVIEW_ROWS: '10' } });
    other = `${w.names.listed}-other`;
    await deployAnalytic(w.http, w.gateway, w.owner.key, {
      name: other,
      connection: 'wh',
      sql: 'SELECT g AS n FROM generate_series(1, 30) AS g',
      visibility: 'public',
    });
    await list(other);
    // The change feed's news of the deploys has arrived: the catalog keeps its entries from here.
    await sleep(1500);
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  }, 60_000);

  it('refuses a token for one analytic sent with a body the account previewed for another, since unpublished', async () => {
    const forOther = await mint(w.attacker.key, other);
    const first = await preview(forOther, other);
    expect(first.status, first.text).toBe(200);
    expectStatus(
      await w.call('DELETE', `/v1/owner/analytics/${other}/listing`, { key: w.owner.key }),
      200,
      'unpublish',
    );
    const forListed = await mint(w.attacker.key, w.names.listed);
    const wrong = await preview(forListed, other);
    expectErrorEnvelope(wrong, 403, 'FORBIDDEN');
    expect(wrong.body.results).toBeUndefined();
  });

  it('refuses a token minted before its analytic was unpublished', async () => {
    const token = await mint(w.attacker.key, w.names.listed);
    const before = await preview(token, w.names.listed);
    expect(before.status, before.text).toBe(200);
    expectStatus(
      await w.call('DELETE', `/v1/owner/analytics/${w.names.listed}/listing`, { key: w.owner.key }),
      200,
      'unpublish',
    );
    // The change feed tells the gateway within a second.
    await sleep(1500);
    expectErrorEnvelope(await preview(token, w.names.listed), 403, 'FORBIDDEN');
    await list(w.names.listed);
  });

  it('refuses a token minted before its owner turned previews off', async () => {
    await list(w.names.listed);
    await sleep(1500);
    const token = await mint(w.attacker.key, w.names.listed);
    expect((await preview(token, w.names.listed)).status).toBe(200);
    await list(w.names.listed, { previews: false });
    await sleep(1500);
    const refused = await preview(token, w.names.listed);
    expectErrorEnvelope(refused, 403, 'FORBIDDEN');
    expect(refused.body.error.message).toMatch(/previews/);
    await list(w.names.listed, { previews: true });
    await sleep(1500);
    expect((await preview(token, w.names.listed)).status).toBe(200);
  });

  it("keeps the owner's test runs of its own unlisted analytic", async () => {
    const token = await mint(w.owner.key, w.names.private);
    const run = await preview(token, w.names.private);
    expect(run.status, run.text).toBe(200);
    expect(run.body.meta).toMatchObject({ preview: true, credits: 0 });
  });
});
