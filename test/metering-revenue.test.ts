// Owner revenue over real HTTP (issue 4, item 4), as a property: for random analytics prices
// (0–50 credits, deployed through the owner API) and random sequences of calls, some of which
// fail (bad params → 400, a warehouse error → 502), every served call leaves exactly one event
// whose owner share is exactly 800 millicredits a credit and whose shares sum to the credits (the
// caller is on the Free plan: its credits are worth 0 USD, so no money moves); failed calls leave
// nothing; and the owner's statement (GET /v1/owner/statements) equals the ledger.
// Each run uses a fresh owner and caller, so its statement and ledger are its own.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  currentPeriod,
  deployAnalytic,
  expectStatus,
  ledgerOf,
  signUp,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());

const suffix = uniqueSuffix();
const http = createHttpClient();
let store: ControlPlaneSchema;
let gateway: GatewayProcess;

type Outcome = 'ok' | 'bad-params' | 'warehouse-error';

/** The params that make a call of `SELECT 1 / :d` succeed, be refused, or fail in the warehouse. */
const PARAMS: Record<Outcome, Record<string, unknown>> = {
  ok: { d: 1 },
  'bad-params': { d: 'one' },
  'warehouse-error': { d: 0 }, // division by zero, raised by Postgres
};

interface Amounts {
  calls: number;
  millicredits: number;
  owner_share_millicredits: number;
  platform_share_millicredits: number;
  value_micro_usd: number;
}

const zero = (): Amounts => ({
  calls: 0,
  millicredits: 0,
  owner_share_millicredits: 0,
  platform_share_millicredits: 0,
  value_micro_usd: 0,
});
const amountsOf = (a: Amounts): Amounts => ({
  calls: a.calls,
  millicredits: a.millicredits,
  owner_share_millicredits: a.owner_share_millicredits,
  platform_share_millicredits: a.platform_share_millicredits,
  value_micro_usd: a.value_micro_usd,
});

describe.runIf(up)('owner revenue: statements equal the ledger (property over HTTP)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_meter_rev_${suffix}`);
    gateway = await startGateway({
      env: postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
  }, 60_000);

  it('for random prices and calls: owner share = 0.8 credit a credit, shares sum, statement = ledger', async () => {
    let run = 0;
    const seenPrices = new Set<number>();
    let servedInAll = 0;
    let failedInAll = 0;
    await fc.assert(
      fc.asyncProperty(
        // The edges (free, and prices whose 80% is fractional) weighted in, the rest uniform.
        fc.array(fc.oneof(fc.constantFrom(1, 49, 50), fc.integer({ min: 1, max: 50 })), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.array(
          fc.record({
            analytic: fc.nat({ max: 2 }),
            outcome: fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'bad-params', 'warehouse-error'),
          }),
          { minLength: 10, maxLength: 20 },
        ),
        async (prices, calls) => {
          run += 1;
          const tag = `${suffix}r${run}`;
          const owner = await signUp(http, gateway, 'owner', tag);
          const caller = await signUp(http, gateway, 'caller', tag);
          await connectTestPostgres(http, gateway, owner.key, 'pg');
          const names = prices.map((_, i) => `priced-${tag}-${i}`);
          for (const [i, price] of prices.entries()) {
            seenPrices.add(price);
            await deployAnalytic(http, gateway, owner.key, {
              name: names[i],
              connection: 'pg',
              sql: 'SELECT 1 / :d AS q',
              params: { d: { type: 'integer', required: true } },
              visibility: 'public',
              price,
            });
          }

          const served = new Map<string, { name: string; price: number }>();
          for (const call of calls) {
            const index = call.analytic % prices.length;
            const name = names[index] as string;
            const price = prices[index] as number;
            const response = await http.request(gateway.url, 'POST', '/v1/query', {
              key: caller.key,
              json: { source: name, params: PARAMS[call.outcome] },
            });
            if (call.outcome === 'ok') {
              expect(response.status, response.text).toBe(200);
              expect(response.body.meta.credits).toBe(price);
              served.set(response.headers.get('x-request-id') as string, { name, price });
            } else {
              failedInAll += 1;
              if (call.outcome === 'bad-params') expectErrorEnvelope(response, 400, 'INVALID_PARAMS');
              else expectErrorEnvelope(response, 502, 'UPSTREAM_ERROR');
            }
          }
          servedInAll += served.size;

          // The ledger: one final event per served call, none for the failed ones.
          const ledger = await ledgerOf(store.schema, caller.id);
          expect(ledger.map((e) => e.request_id).sort()).toEqual([...served.keys()].sort());
          const expected = new Map<string, Amounts>();
          for (const event of ledger) {
            const call = served.get(event.request_id)!;
            expect(event).toMatchObject({
              status: 'ok',
              origin: 'free',
              plan: 'free',
              owner_id: owner.id,
              analytic_name: call.name,
              millicredits: call.price * 1000,
              owner_millicredits: call.price * 800,
              platform_millicredits: call.price * 200,
              value_musd: 0,
              owner_musd: 0,
              platform_musd: 0,
            });
            const sums = expected.get(call.name) ?? zero();
            sums.calls += 1;
            sums.millicredits += event.millicredits;
            sums.owner_share_millicredits += event.owner_millicredits;
            sums.platform_share_millicredits += event.platform_millicredits;
            sums.value_micro_usd += event.value_musd;
            expected.set(call.name, sums);
          }

          // The owner's statement, over HTTP, equals the ledger analytic by analytic and in total.
          const statement = expectStatus(
            await http.request(gateway.url, 'GET', `/v1/owner/statements?period=${currentPeriod()}`, {
              key: owner.key,
            }),
            200,
            'statement',
          ).body;
          const listed = new Map<string, Amounts>(
            (statement.analytics as (Amounts & { name: string })[])
              .filter((a) => a.calls > 0)
              .map(({ name, ...amounts }) => [name, amountsOf(amounts)]),
          );
          expect(listed).toEqual(expected);
          const totals = [...expected.values()].reduce((t, a) => {
            t.calls += a.calls;
            t.millicredits += a.millicredits;
            t.owner_share_millicredits += a.owner_share_millicredits;
            t.platform_share_millicredits += a.platform_share_millicredits;
            return t;
          }, zero());
          expect(amountsOf(statement.totals)).toEqual(totals);
          expect(statement.totals.owner_share_usd).toBe(0);
        },
      ),
      { numRuns: 10 },
    );
    console.log(
      `[revenue] ${run} runs: ${servedInAll} served and ${failedInAll} failed calls, prices ${[...seenPrices].sort((a, b) => a - b).join(',')}`,
    );
    expect(servedInAll).toBeGreaterThan(0);
    expect(failedInAll).toBeGreaterThan(0);
  }, 120_000);
});
