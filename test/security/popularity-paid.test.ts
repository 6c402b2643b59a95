// Issue 29, finding 4: the marketplace's popularity was every served call, so an owner calling
// its own analytic (free for it) or anyone previewing it (free) climbed the ranking. It now counts
// paid calls and distinct paying callers only, and ranks by paying callers, then paid calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployAnalytic, expectStatus, setPlan } from '../support/metering-fixture.js';
import { pgAvailable, serviceUp } from '../support/test-services.js';
import { type AttackWorld, createAttackWorld, type WorldAccount } from './support/world.js';

const up = serviceUp(await pgAvailable());
let w: AttackWorld;
let payers: WorldAccount[];
let rival: string;

const popularity = async (name: string) => {
  const res = expectStatus(await w.call('GET', `/v1/marketplace/listings/${name}`), 200, 'listing');
  return { calls: res.body.calls_30d, callers: res.body.callers_30d };
};
const call = async (key: string, source: string) =>
  expectStatus(
    await w.call('POST', '/v1/query', { key, json: { source, params: { upto: 1 } } }),
    200,
    'call',
  );

describe.runIf(up)('marketplace popularity', () => {
  beforeAll(async () => {
    w = await createAttackWorld({ label: 'popular', env: { QUARRY_SIGNUPS_PER_HOUR: '20' } });
    payers = [];
    for (const label of ['payer-a', 'payer-b']) {
      const payer = await w.signUp(label);
      // Before its key is first used: no instance has cached its old plan.
      await setPlan(w.schema.schema, payer.id, 'smb');
      payers.push(payer);
    }
    rival = `${w.names.listed}-rival`;
    await deployAnalytic(w.http, w.gateway, w.owner.key, {
      name: rival,
      connection: 'wh',
      sql: 'SELECT g AS n FROM generate_series(1, :upto) AS g',
      params: { upto: { type: 'integer', min: 1, max: 30, default: 30 } },
      visibility: 'public',
    });
    expectStatus(
      await w.call('PUT', `/v1/owner/analytics/${rival}/listing`, {
        key: w.owner.key,
        json: { title: 'Rival', category: 'Testing' },
      }),
      200,
      'list the rival',
    );
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  }, 60_000);

  it("does not count an owner's own calls or previews", async () => {
    for (let i = 0; i < 5; i++) await call(w.owner.key, w.names.listed);
    const minted = await w.call('POST', '/v1/marketplace/try-token', {
      key: w.attacker.key,
      json: { source: w.names.listed },
    });
    expect(minted.status, minted.text).toBe(201);
    const preview = await w.call('POST', '/v1/query', {
      headers: { authorization: `Bearer ${minted.body.token}` },
      json: { source: w.names.listed },
    });
    expect(preview.status, preview.text).toBe(200);
    expect(await popularity(w.names.listed)).toEqual({ calls: 0, callers: 0 });
  });

  it('ranks by distinct paying callers, then paid calls', async () => {
    const [a, b] = payers as [WorldAccount, WorldAccount];
    // One payer calls `listed` three times; two payers call the rival once each.
    for (let i = 0; i < 3; i++) await call(a.key, w.names.listed);
    await call(a.key, rival);
    await call(b.key, rival);
    expect(await popularity(w.names.listed)).toEqual({ calls: 3, callers: 1 });
    expect(await popularity(rival)).toEqual({ calls: 2, callers: 2 });
    const page = expectStatus(await w.call('GET', '/v1/marketplace/listings?sort=popular'), 200, 'search');
    const names = page.body.items.map((i: { name: string }) => i.name);
    expect(names.indexOf(rival)).toBeLessThan(names.indexOf(w.names.listed));
  });
});
