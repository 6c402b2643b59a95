// A property of owners' payouts over random months, on embedded PGlite and the real PostgreSQL:
// callers on SMB and Pay as you Go spend random credits on random owners' analytics, owners
// onboard (or not) at random months, caller payments are refunded in random proportions, the
// minimum payout is random, transfers succeed or are refused at random, and every month is closed
// twice. For every owner, to the µUSD:
//   Σ transferred + balance carried = Σ owner shares − Σ shares taken back,
// nothing is ever transferred twice, and what is paid out never exceeds what was earned.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import type { SqlClient } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { createMoneyStore, type MoneyStore } from './money-store.js';

const backends = await storeBackends('payouts store', 'quarry_payouts');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');
/** Each run closes months of its own years (closing is global to the store). */
let yearSeq = 0;

const PAYERS = [
  { plan: 'smb', creditValue: 196_000 },
  { plan: 'payg', creditValue: 500_000 },
] as const;

interface Month {
  readonly calls: readonly { payer: number; owner: number; credits: number }[];
  /** Owners who finish onboarding before this month closes. */
  readonly onboard: readonly number[];
  /** Refunds recorded after this month closes: a payer's payment for it, numerator/denominator. */
  readonly refunds: readonly { payer: number; numerator: number; denominator: number }[];
  /** Per pending payout, in order: whether its transfer is refused. */
  readonly refusals: readonly boolean[];
}

const monthArb: fc.Arbitrary<Month> = fc.record({
  calls: fc.array(
    fc.record({
      payer: fc.integer({ min: 0, max: 1 }),
      owner: fc.integer({ min: 0, max: 2 }),
      credits: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 100 })),
    }),
    { maxLength: 8 },
  ),
  onboard: fc.subarray([0, 1, 2]),
  refunds: fc.array(
    fc.record({
      payer: fc.integer({ min: 0, max: 1 }),
      numerator: fc.integer({ min: 1, max: 4 }),
      denominator: fc.integer({ min: 1, max: 4 }),
    }),
    { maxLength: 2 },
  ),
  refusals: fc.array(fc.boolean(), { maxLength: 3 }),
});

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`payouts on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore & MoneyStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = { ...createControlPlaneStore(sql, { secretBox }), ...createMoneyStore(sql) };
    });
    afterAll(() => backend.teardown());

    it('Σ transfers + balance = Σ shares − Σ taken back, for every owner, and no transfer twice', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(monthArb, { minLength: 1, maxLength: 4 }),
          fc.constantFrom(0, 100, 1_000, 5_000),
          async (months, minimumCents) => {
            const year = 4000 + yearSeq++;
            const payers = await Promise.all(
              PAYERS.map((p) =>
                store.accounts.create({ email: `${p.plan}-${unique()}@x.test`, name: p.plan }),
              ),
            );
            const owners = await Promise.all(
              [0, 1, 2].map(() =>
                store.accounts.create({ email: `owner-${unique()}@x.test`, name: 'owner' }),
              ),
            );
            const analytics = await Promise.all(
              owners.map((o) =>
                store.analytics.create({
                  accountId: o.id,
                  name: `an-${unique()}`,
                  definition: { sql: 'SELECT 1', params: {} },
                  visibility: 'public',
                }),
              ),
            );
            const policy = { provider: 'stripe', minimumCents } as const;
            const transferred = new Map<string, number>();
            for (const [m, month] of months.entries()) {
              const period = `${year}-${String(m + 1).padStart(2, '0')}`;
              for (const call of month.calls) {
                const payer = PAYERS[call.payer]!;
                const analytic = analytics[call.owner]!;
                const requestId = `req_${unique()}${unique()}`;
                const reserved = await store.usage.reserve({
                  requestId,
                  accountId: payers[call.payer]!.id,
                  keyId: null,
                  period,
                  plan: payer.plan,
                  limit: null,
                  budget: null,
                  creditValueMicroUsd: payer.creditValue,
                  analyticId: analytic.id,
                  analyticName: analytic.name,
                  version: analytic.version,
                  ownerId: owners[call.owner]!.id,
                  origin: 'paid',
                  credits: call.credits,
                });
                expect(reserved.ok).toBe(true);
                await store.usage.commit(requestId, { latencyMs: 1, status: 'ok' });
              }
              for (const o of month.onboard) {
                const account = await store.payouts.linkAccount(
                  owners[o]!.id,
                  'stripe',
                  `acct_${owners[o]!.id}`,
                );
                await store.payouts.updateAccount(account.connectedAccountId, {
                  detailsSubmitted: true,
                  payoutsEnabled: true,
                  requirements: [],
                });
              }
              // Closed twice: the second changes nothing.
              expect((await store.statements.closePeriod(period, policy)).alreadyClosed).toBe(false);
              expect((await store.statements.closePeriod(period, policy)).alreadyClosed).toBe(true);
              const pending = await store.payouts.payoutsOf(period, ['pending']);
              for (const [i, payout] of pending.entries()) {
                expect(payout.payoutCents).toBeGreaterThanOrEqual(Math.max(1, minimumCents));
                if (month.refusals[i] === true) {
                  await store.payouts.settlePayout(period, payout.ownerId, { failure: 'refused' });
                } else {
                  const transferId = `tr_${payout.ownerId}_${period}`;
                  expect(transferred.has(transferId)).toBe(false);
                  transferred.set(transferId, payout.payoutCents);
                  await store.payouts.settlePayout(period, payout.ownerId, { transferId });
                  // Settling again (a resumed close) transfers nothing more.
                  await store.payouts.settlePayout(period, payout.ownerId, {
                    transferId: `${transferId}_again`,
                  });
                }
              }
              for (const [r, refund] of month.refunds.entries()) {
                await store.payouts.recordAdjustments({
                  provider: 'stripe',
                  kind: 'refund',
                  reference: `re_${period}_${r}_${unique()}`,
                  payerId: payers[refund.payer]!.id,
                  usagePeriod: period,
                  share: {
                    numerator: Math.min(refund.numerator, refund.denominator),
                    denominator: refund.denominator,
                  },
                });
              }
            }
            // One more close nets the last refunds.
            const last = `${year}-${String(months.length + 1).padStart(2, '0')}`;
            await store.statements.closePeriod(last, policy);
            for (const p of await store.payouts.payoutsOf(last, ['pending'])) {
              transferred.set(`tr_${p.ownerId}_${last}`, p.payoutCents);
              await store.payouts.settlePayout(last, p.ownerId, { transferId: `tr_${p.ownerId}_${last}` });
            }

            for (const owner of owners) {
              const [row] = await sql.query<{ earned: string; taken: string }>(
                `SELECT (SELECT coalesce(sum(owner_musd), 0) FROM usage_events WHERE owner_id = $1)::bigint AS earned,
                        (SELECT coalesce(sum(owner_musd), 0) FROM owner_adjustments WHERE owner_id = $1)::bigint AS taken`,
                [owner.id],
              );
              const payouts = await store.payouts.payoutsFor(owner.id, 1_000);
              const paid = payouts.filter((p) => p.status === 'paid');
              const paidMicroUsd = paid.reduce((sum, p) => sum + p.payoutCents * 10_000, 0);
              // Each paid row is one transfer of its cents, made once.
              for (const p of paid) {
                expect(p.transferId).toBe(`tr_${owner.id}_${p.period}`);
                expect(transferred.get(p.transferId!)).toBe(p.payoutCents);
              }
              const balance = await store.payouts.balanceOf(owner.id);
              expect(paidMicroUsd + balance).toBe(Number(row!.earned) - Number(row!.taken));
              expect(paidMicroUsd).toBeLessThanOrEqual(Number(row!.earned));
            }
          },
        ),
        { numRuns: backend.name === 'pglite' ? 25 : 15 },
      );
    }, 120_000);
  });
}
