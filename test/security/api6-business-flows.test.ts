// OWASP API6:2023 Unrestricted Access to Sensitive Business Flows. The flows worth automating
// against a data marketplace: minting accounts (each with free credits), farming free previews,
// pricing an analytic to mint credits, and taking over a popular analytic's name. Each is bounded:
// sign-ups per client address (a forged X-Forwarded-For changes nothing without a trusted proxy),
// previews per account a day whatever the keys, preview answers capped, prices capped, names kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { connectTestPostgres } from '../support/metering-fixture.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;

beforeAll(async () => {
  w = await createAttackWorld({
    label: 'flows',
    // The world's own three sign-ups fit; QUARRY_TRUST_PROXY stays off.
    env: { QUARRY_SIGNUPS_PER_HOUR: '5', QUARRY_PREVIEWS_PER_DAY: '3', QUARRY_PREVIEW_ROWS: '10' },
  });
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

describe('API6 sensitive business flows', () => {
  it('allows 5 sign-ups an hour per address, however X-Forwarded-For is forged', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await w.call('POST', '/v1/accounts', {
        json: { email: `farm-${i}@security.quarry.test`, name: `Farm ${i}` },
        headers: { 'x-forwarded-for': `198.51.100.${i + 1}` },
      });
      statuses.push(res.status);
      if (res.status !== 201) expectErrorEnvelope(res, 429, 'RATE_LIMIT_EXCEEDED');
    }
    // Three went to the world's owner, attacker and friend.
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
  });

  it('caps preview answers, and allows an account its daily previews whatever its keys', async () => {
    const second = await w.call('POST', '/v1/keys', { key: w.attacker.key, json: { name: 'second' } });
    const keys = [w.attacker.key, second.body.key.secret as string];
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const minted = await w.call('POST', '/v1/marketplace/try-token', {
        key: keys[i % 2],
        json: { source: w.names.listed },
      });
      expect(minted.status, minted.text).toBe(201);
      answers.push(
        await w.call('POST', '/v1/query', {
          headers: { authorization: `Bearer ${minted.body.token}` },
          json: { source: w.names.listed },
        }),
      );
    }
    for (const res of answers.slice(0, 3)) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.results).toHaveLength(10);
      expect(res.body.meta).toMatchObject({ preview: true, credits: 0 });
    }
    expectErrorEnvelope(answers[3]!, 429, 'RATE_LIMIT_EXCEEDED');
    expect(answers[3]!.body.error.retry_after).toBeGreaterThan(0);
  });

  it('refuses a price above QUARRY_MAX_PRICE, so no analytic mints credits', async () => {
    const res = await w.call('PUT', '/v1/owner/analytics/sec-pricey', {
      key: w.owner.key,
      json: { connection: 'wh', sql: 'SELECT 1 AS one', price: 1_000_000, visibility: 'public' },
    });
    expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    expect(JSON.stringify(res.body.error.details)).toMatch(/price/);
  });

  it("keeps a deleted analytic's name its owner's, so integrations cannot be hijacked", async () => {
    const name = 'sec-popular';
    const deploy = (key: string, connection: string, sql: string) =>
      w.call('PUT', `/v1/owner/analytics/${name}`, { key, json: { connection, sql, visibility: 'public' } });
    expect((await deploy(w.owner.key, 'wh', 'SELECT 1 AS one')).status).toBe(200);
    expect((await w.call('DELETE', `/v1/owner/analytics/${name}`, { key: w.owner.key })).status).toBeLessThan(
      300,
    );
    await connectTestPostgres(w.http, w.gateway, w.attacker.key, 'mine');
    const takeover = await deploy(w.attacker.key, 'mine', "SELECT 'hijacked' AS one");
    expectErrorEnvelope(takeover, 409, 'CONFLICT');
    const call = await w.call('POST', '/v1/query', { key: w.friend.key, json: { source: name } });
    expectErrorEnvelope(call, 404, 'SOURCE_NOT_FOUND');
  });
});
