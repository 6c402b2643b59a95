// Issue 29, finding 9: `HEAD /v1/analytics/{name}` ran the analytic and charged for it, then sent
// no body. A HEAD never runs a query: it is 405 METHOD_NOT_ALLOWED with `Allow: GET`, and the
// caller's ledger and quota stay as they were.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerOf, quotaCounter } from '../support/metering-fixture.js';
import { pgAvailable, serviceUp } from '../support/test-services.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

const up = serviceUp(await pgAvailable());
let w: AttackWorld;

describe.runIf(up)('HEAD of an analytic', () => {
  beforeAll(async () => {
    w = await createAttackWorld({ label: 'head' });
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  }, 60_000);

  it('is refused with 405 and Allow: GET, charging and running nothing', async () => {
    const path = `/v1/analytics/${w.names.listed}?upto=3`;
    const ledger = await ledgerOf(w.schema.schema, w.attacker.id);
    const quota = await quotaCounter(w.schema.schema, w.attacker.id);
    const heads = [];
    for (let i = 0; i < 3; i++) heads.push(await w.call('HEAD', path, { key: w.attacker.key }));
    expect(await ledgerOf(w.schema.schema, w.attacker.id)).toEqual(ledger);
    expect(await quotaCounter(w.schema.schema, w.attacker.id)).toBe(quota);
    for (const head of heads) {
      expect(head.status).toBe(405);
      expect(head.headers.get('allow')).toBe('GET');
      expect(head.text).toBe('');
    }
    // GET is still served and charged once.
    const get = await w.call('GET', path, { key: w.attacker.key });
    expect(get.status, get.text).toBe(200);
    expect(get.body.results).toHaveLength(3);
    expect(await ledgerOf(w.schema.schema, w.attacker.id)).toHaveLength(ledger.length + 1);
  });
});
