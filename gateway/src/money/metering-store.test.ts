// One spec for metering, owner statements, idempotency keys and marketplace listings, run
// against embedded PGlite and the real PostgreSQL at QUARRY_TEST_PG_URL (a fresh schema per
// run, dropped afterwards), like control-plane-store.test.ts. Billing must be exact under
// concurrency, so the quota tests race hundreds of reservations over a real connection pool.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import { createSecretBox } from '../security/secret-box.js';
import type { Analytic } from '../store/analytic-repository.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { createMoneyStore, type MoneyStore } from './money-store.js';
import { priceCall } from './revenue-split.js';
import { type LedgerDrift, ledgerDriftSql } from './testing/ledger-drift.js';
import {
  createUsageRepository,
  type Reservation,
  type ReserveRequest,
  type ReserveResult,
  type UsageOrigin,
  type UsageRepository,
} from './usage-repository.js';

const backends = await storeBackends('metering store', 'quarry_metering');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');
const PERIOD = '2031-05';
/** A period no other test uses, for tests that close one (closing is global). */
let periodSeq = 0;
const freshPeriod = () => `${3000 + periodSeq++}-07`;
const floor80 = (amount: number) => Number((BigInt(amount) * 80n) / 100n);
/** SMB: 49 USD for 250 credits. */
const SMB_CREDIT = 196_000;

/** A reservation's result with its counter in whole credits (`used`), as these tests count. */
type Counted =
  | Error
  | { ok: true; used: number; remaining: number | null; replayed: boolean }
  | { ok: false; reason: string; used: number };
const inCredits = (r: ReserveResult | Error): Counted =>
  r instanceof Error
    ? r
    : r.ok
      ? { ok: true, used: r.usedMillicredits / 1_000, remaining: r.remaining, replayed: r.replayed }
      : { ok: false, reason: r.reason, used: r.usedMillicredits / 1_000 };
/** `usage` with reserve and reserveMany answering in {@link Counted} terms. */
const counting = (usage: UsageRepository) => ({
  ...usage,
  reserve: async (input: Reservation) => inCredits(await usage.reserve(input)) as Exclude<Counted, Error>,
  reserveMany: async (inputs: readonly ReserveRequest[]) => (await usage.reserveMany(inputs)).map(inCredits),
});

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`metering store on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore & MoneyStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = { ...createControlPlaneStore(sql, { secretBox }), ...createMoneyStore(sql) };
    });
    afterAll(() => backend.teardown());

    const newAccount = (label = 'acct') =>
      store.accounts.create({ email: `${label}-${unique()}@example.com`, name: label });
    const newAnalytic = async (ownerId: string, visibility: 'public' | 'private' = 'public') =>
      store.analytics.create({
        accountId: ownerId,
        name: `an-${unique()}`,
        definition: { sql: 'SELECT 1', params: { year: { type: 'integer' } } },
        visibility,
      });
    /** A caller, an owner and one of the owner's analytics. */
    const world = async () => {
      const caller = await newAccount('caller');
      const owner = await newAccount('owner');
      const analytic = await newAnalytic(owner.id);
      return { caller, owner, analytic };
    };
    const reservation = (
      accountId: string,
      analytic: Analytic,
      overrides: Partial<Reservation> = {},
    ): Reservation => ({
      requestId: `req_${randomBytes(12).toString('hex')}`,
      accountId,
      keyId: null,
      period: PERIOD,
      plan: 'smb',
      limit: 3,
      budget: null,
      creditValueMicroUsd: SMB_CREDIT,
      analyticId: analytic.id,
      analyticName: analytic.name,
      version: analytic.version,
      ownerId: analytic.accountId,
      origin: 'paid',
      credits: 1,
      ...overrides,
    });
    const eventsOf = (accountId: string) =>
      sql.query<{
        request_id: string;
        status: string;
        origin: UsageOrigin;
        credits: number;
        owner_share: number;
        platform_share: number;
        completed_at: Date | null;
        latency_ms: number | null;
      }>(
        `SELECT request_id, status, origin, millicredits / 1000 AS credits, owner_millicredits AS owner_share,
                platform_millicredits AS platform_share, completed_at, latency_ms
           FROM usage_events WHERE account_id = $1 ORDER BY reserved_at, request_id`,
        [accountId],
      );
    const backdate = (requestId: string, ms: number) =>
      sql.query(
        `UPDATE usage_events SET reserved_at = reserved_at - $2::double precision * interval '1 millisecond'
          WHERE request_id = $1`,
        [requestId, ms],
      );

    describe('reserve', () => {
      it('admits calls up to the limit, then refuses without recording anything', async () => {
        const { caller, analytic } = await world();
        const results = [];
        for (let i = 0; i < 5; i++)
          results.push(await counting(store.usage).reserve(reservation(caller.id, analytic)));
        expect(results.map((r) => r.ok)).toEqual([true, true, true, false, false]);
        expect(results[0]).toEqual({ ok: true, used: 1, remaining: 2, replayed: false });
        expect(results[2]).toEqual({ ok: true, used: 3, remaining: 0, replayed: false });
        expect(results[3]).toEqual({ ok: false, reason: 'quota_exceeded', used: 3 });
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(3);
        const events = await eventsOf(caller.id);
        expect(events).toHaveLength(3);
        expect(events.every((e) => e.status === 'pending' && e.credits === 1)).toBe(true);
        expect(events[0]).toMatchObject({ owner_share: 800, platform_share: 200 });
        // Another period has its own counter.
        expect(
          (await counting(store.usage).reserve(reservation(caller.id, analytic, { period: '2031-06' }))).ok,
        ).toBe(true);
      });

      it('never caps Pay as you Go but still counts it; a zero limit admits nothing', async () => {
        const { caller, analytic } = await world();
        for (let i = 0; i < 7; i++) {
          const result = await counting(store.usage).reserve(
            reservation(caller.id, analytic, { limit: null }),
          );
          expect(result).toEqual({ ok: true, used: i + 1, remaining: null, replayed: false });
        }
        const broke = await newAccount();
        expect(await counting(store.usage).reserve(reservation(broke.id, analytic, { limit: 0 }))).toEqual({
          ok: false,
          reason: 'quota_exceeded',
          used: 0,
        });
        expect(await eventsOf(broke.id)).toEqual([]);
      });

      it('records marketplace calls free and outside the quota, whatever price was passed', async () => {
        const { caller, analytic } = await world();
        await counting(store.usage).reserve(reservation(caller.id, analytic, { limit: 1 }));
        const tries = [];
        for (let i = 0; i < 3; i++) {
          tries.push(
            await counting(store.usage).reserve(
              reservation(caller.id, analytic, {
                limit: 1,
                origin: 'marketplace',
                credits: 9,
              }),
            ),
          );
        }
        expect(tries.every((t) => t.ok && t.used === 1 && t.remaining === 0)).toBe(true);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(1);
        const market = (await eventsOf(caller.id)).filter((e) => e.origin === 'marketplace');
        expect(market).toHaveLength(3);
        expect(market.every((e) => e.credits === 0 && e.owner_share === 0 && e.platform_share === 0)).toBe(
          true,
        );
      });

      it('is idempotent per request id: a retry counts nothing and makes no second event', async () => {
        const { caller, analytic } = await world();
        const input = reservation(caller.id, analytic);
        expect(await counting(store.usage).reserve(input)).toMatchObject({
          ok: true,
          used: 1,
          replayed: false,
        });
        expect(await counting(store.usage).reserve(input)).toEqual({
          ok: true,
          used: 1,
          remaining: 2,
          replayed: true,
        });
        await store.usage.commit(input.requestId, { latencyMs: 3, status: 'ok' });
        expect(await counting(store.usage).reserve(input)).toMatchObject({
          ok: true,
          used: 1,
          replayed: true,
        });
        expect(await eventsOf(caller.id)).toHaveLength(1);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(1);
        const stranger = await newAccount();
        await expect(counting(store.usage).reserve({ ...input, accountId: stranger.id })).rejects.toSatisfy(
          (e) => isStoreError(e, 'CONFLICT'),
        );
      });

      it('records the payer’s plan, credits and money exactly, and refuses bad input (no event, no count)', async () => {
        const { caller, analytic } = await world();
        const smb = reservation(caller.id, analytic, { credits: 1, limit: 250 });
        await counting(store.usage).reserve(smb);
        const [event] = await sql.query<Record<string, unknown>>(
          `SELECT plan, origin, millicredits, owner_millicredits, platform_millicredits, value_musd, owner_musd,
                  platform_musd FROM usage_events WHERE request_id = $1`,
          [smb.requestId],
        );
        expect(event).toEqual({
          plan: 'smb',
          origin: 'paid',
          millicredits: 1_000,
          owner_millicredits: 800,
          platform_millicredits: 200,
          value_musd: 196_000,
          owner_musd: 156_800,
          platform_musd: 39_200,
        });
        // The store's own constraints refuse an owner share above 80%, or shares that do not add up.
        for (const [owner, platform] of [
          [196_000, 0],
          [156_800, 39_199],
        ]) {
          await expect(
            sql.query('UPDATE usage_events SET owner_musd = $2, platform_musd = $3 WHERE request_id = $1', [
              smb.requestId,
              owner,
              platform,
            ]),
          ).rejects.toThrow(/usage_events_/);
        }
        await store.usage.release(smb.requestId);
        await expect(
          counting(store.usage).reserve(reservation(caller.id, analytic, { credits: 1.5 })),
        ).rejects.toThrow(RangeError);
        await expect(
          counting(store.usage).reserve(reservation(caller.id, analytic, { period: '2031-13' })),
        ).rejects.toThrow(RangeError);
        expect(await eventsOf(caller.id)).toEqual([]);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(0);
      });

      it('counts credits, not calls: a 5-credit call needs 5 credits left', async () => {
        const { caller, analytic } = await world();
        const five = (limit: number) =>
          reservation(caller.id, analytic, {
            credits: 5,
            limit,
            plan: 'free',
            creditValueMicroUsd: 0,
            origin: 'free',
          });
        const results = [];
        for (let i = 0; i < 8; i++) results.push(await counting(store.usage).reserve(five(30)));
        expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true, true, false, false]);
        expect(results[5]).toEqual({ ok: true, used: 30, remaining: 0, replayed: false });
        expect(results[6]).toEqual({ ok: false, reason: 'quota_exceeded', used: 30 });
        // 3 credits left do not admit a 5-credit call, but admit a 3-credit one.
        const other = await newAccount();
        const at = (credits: number) => reservation(other.id, analytic, { credits, limit: 8 });
        expect((await counting(store.usage).reserve(at(5))).ok).toBe(true);
        expect(await store.usage.reserve(at(5))).toMatchObject({
          ok: false,
          usedMillicredits: 5_000,
          remaining: 3,
        });
        expect(await counting(store.usage).reserve(at(3))).toMatchObject({ ok: true, used: 8, remaining: 0 });
        const events = await eventsOf(caller.id);
        expect(events).toHaveLength(6);
        expect(events.every((e) => e.origin === 'free' && e.credits === 5 && e.owner_share === 4_000)).toBe(
          true,
        );
      });

      it('stops a budgeted account at its budget, read from the account under the counter lock', async () => {
        const { caller, analytic } = await world();
        const budget = { defaultMicroUsd: 100_000_000, maxMicroUsd: 1_000_000_000 };
        const payg = () =>
          reservation(caller.id, analytic, {
            plan: 'payg',
            limit: null,
            budget,
            creditValueMicroUsd: 500_000,
            credits: 2,
          });
        expect(await store.usage.setBudget(caller.id, 2_500_000)).toBe(true); // 2.50 USD: two 1-USD calls
        const results = [];
        for (let i = 0; i < 4; i++) results.push(await store.usage.reserve(payg()));
        expect(results.map((r) => r.ok)).toEqual([true, true, false, false]);
        expect(results[1]).toMatchObject({
          usedMicroUsd: 2_000_000,
          budgetMicroUsd: 2_500_000,
          remaining: 1,
        });
        // The operator's cap wins over a larger budget; raising the budget admits again at once.
        expect(await store.usage.setBudget(caller.id, 3_000_000)).toBe(true);
        expect((await store.usage.reserve(payg())).ok).toBe(true);
        expect(await store.usage.counters(caller.id, PERIOD)).toEqual({
          calls: 3,
          millicredits: 6_000,
          valueMicroUsd: 3_000_000,
        });
        const capped = await store.usage.reserve({
          ...payg(),
          budget: { defaultMicroUsd: 0, maxMicroUsd: 3_000_000 },
        });
        expect(capped).toMatchObject({ ok: false, reason: 'quota_exceeded', budgetMicroUsd: 3_000_000 });
      });
    });

    describe('reserveMany (group commit)', () => {
      /**
       * A second instance's repository over the same database, recording the functions it calls
       * and their arguments.
       */
      const instance = () => {
        const calls: string[] = [];
        const args: (readonly unknown[] | undefined)[] = [];
        const recording: SqlExecutor = {
          kind: sql.kind,
          query: (text, params) => {
            const fn = /FROM (quarry_(?:reserve|charge)_calls\w*)\(/.exec(text)?.[1];
            if (fn !== undefined) {
              calls.push(fn);
              args.push(params);
            }
            return sql.query(text, params);
          },
          exec: (script) => sql.exec(script),
          transaction: (fn) => sql.transaction(fn),
        };
        return { usage: counting(createUsageRepository(recording)), calls, args };
      };

      it('decides a batch in order: admitted up to the limit, the rest refused, nothing extra recorded', async () => {
        const { caller, analytic } = await world();
        const results = await counting(store.usage).reserveMany(
          Array.from({ length: 5 }, () => reservation(caller.id, analytic, { limit: 3 })),
        );
        expect(results).toEqual([
          { ok: true, used: 1, remaining: 2, replayed: false },
          { ok: true, used: 2, remaining: 1, replayed: false },
          { ok: true, used: 3, remaining: 0, replayed: false },
          { ok: false, reason: 'quota_exceeded', used: 3 },
          { ok: false, reason: 'quota_exceeded', used: 3 },
        ]);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(3);
        expect(await eventsOf(caller.id)).toHaveLength(3);
      });

      it('writes served calls final, and keeps a bad slot, a repeat and a stranger apart', async () => {
        const { caller, analytic } = await world();
        const stranger = await newAccount();
        const served = { ...reservation(caller.id, analytic), served: { latencyMs: 2.5 } };
        const pending = reservation(caller.id, analytic);
        const results = await counting(store.usage).reserveMany([
          served,
          reservation(caller.id, analytic, { period: '2031-13' }),
          pending,
          served, // the same request id again, later in the batch: a replay
          { ...pending, accountId: stranger.id }, // another account's use of an id: CONFLICT
        ]);
        expect(results[0]).toEqual({ ok: true, used: 1, remaining: 2, replayed: false });
        expect(results[1]).toBeInstanceOf(RangeError);
        expect(results[2]).toEqual({ ok: true, used: 2, remaining: 1, replayed: false });
        expect(results[3]).toMatchObject({ ok: true, used: 2, replayed: true });
        expect(isStoreError(results[4], 'CONFLICT')).toBe(true);
        const events = await eventsOf(caller.id);
        expect(events.map((e) => [e.request_id, e.status])).toEqual(
          expect.arrayContaining([
            [served.requestId, 'ok'],
            [pending.requestId, 'pending'],
          ]),
        );
        expect(events.find((e) => e.request_id === served.requestId)).toMatchObject({ latency_ms: 2.5 });
        expect(events.find((e) => e.request_id === served.requestId)?.completed_at).toBeInstanceOf(Date);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(2);
        expect(await eventsOf(stranger.id)).toEqual([]);
      });

      it('decides a batch far from the limit optimistically, with the same results', async () => {
        const { caller, analytic } = await world();
        const { usage, calls } = instance();
        const limit = 1_000;
        await usage.reserveMany([reservation(caller.id, analytic, { limit })]); // learns the headroom
        const results = await usage.reserveMany(
          Array.from({ length: 10 }, (_, i) =>
            i % 2 === 0
              ? reservation(caller.id, analytic, { limit })
              : { ...reservation(caller.id, analytic, { limit }), served: { latencyMs: 1 } },
          ),
        );
        expect(calls).toEqual(['quarry_reserve_calls', 'quarry_charge_calls']);
        expect(results.map((r) => (r instanceof Error ? r : r.ok && r.used))).toEqual([
          2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
        ]);
        expect(results.every((r) => !(r instanceof Error) && r.ok && r.remaining === limit - r.used)).toBe(
          true,
        );
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(11);
        expect(await eventsOf(caller.id)).toHaveLength(11);
      });

      it('falls back to exact decisions when another instance took the headroom it remembered', async () => {
        const { caller, analytic } = await world();
        const a = instance();
        const b = instance();
        const limit = 20;
        await a.usage.reserveMany([reservation(caller.id, analytic, { limit })]); // A: 19 left
        await b.usage.reserveMany(
          Array.from({ length: 15 }, () => reservation(caller.id, analytic, { limit })),
        );
        const results = await a.usage.reserveMany(
          Array.from({ length: 8 }, () => reservation(caller.id, analytic, { limit })),
        );
        expect(a.calls).toEqual(['quarry_reserve_calls', 'quarry_charge_calls', 'quarry_reserve_calls']);
        expect(results.filter((r) => !(r instanceof Error) && r.ok)).toHaveLength(4);
        expect(results.slice(4)).toEqual(Array(4).fill({ ok: false, reason: 'quota_exceeded', used: 20 }));
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(20);
        expect(await eventsOf(caller.id)).toHaveLength(20);
      });

      it('never over-admits while several instances race batches at the limit', async () => {
        const { caller, analytic } = await world();
        const instances = [instance(), instance(), instance()];
        const limit = 50;
        // Every instance first learns a large headroom, so the race starts optimistic.
        for (const { usage } of instances)
          await usage.reserveMany([reservation(caller.id, analytic, { limit })]);
        const batches = await Promise.all(
          instances.flatMap(({ usage }) =>
            Array.from({ length: 4 }, () =>
              usage.reserveMany(Array.from({ length: 9 }, () => reservation(caller.id, analytic, { limit }))),
            ),
          ),
        );
        const admitted = batches.flat().filter((r) => !(r instanceof Error) && r.ok).length;
        expect(admitted).toBe(limit - instances.length);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(limit);
        expect(await eventsOf(caller.id)).toHaveLength(limit);
      });

      it('charges a mixed batch in groups exactly as the exact path and 004 decide it, call by call and row by row', async () => {
        const { caller: a, owner, analytic: x } = await world();
        const b = await newAccount('b');
        const c = await newAccount('c'); // marketplace calls only, but a counter row from earlier
        const d = await newAccount('d'); // marketplace calls only, no counter row
        const y = await newAnalytic(owner.id);
        type Spec = [account: string, analytic: Analytic, overrides: Partial<ReserveRequest>];
        const hit = (latencyMs: number) => ({ served: { latencyMs } });
        const market = (more: Partial<ReserveRequest> = {}) => ({
          origin: 'marketplace' as const,
          credential: 'try_token' as const,
          ...more,
        });
        /** An api call of a to x, served (latency 1 ms) unless `served: undefined`. */
        const base = (more: Partial<ReserveRequest> = {}): Spec => [
          a.id,
          x,
          { limit: 100, keyId: 'key_1', credits: 1, ...hit(1), ...more },
        ];
        // `P2` marks the batch's second period. Each field of a call but its request id and
        // latency tells some call from the one before it by itself (the groups as the Map and
        // as the previous call find them); groups interleave; the api calls of one counter are
        // spread over many groups.
        const P2 = 'P2';
        const specs: Spec[] = [
          base(hit(1.23456)),
          [b.id, x, { limit: 100, keyId: 'key_1', credits: 1, ...hit(2) }], // only the account
          base(),
          base({ keyId: 'key_2' }), // only the key
          [c.id, x, market({ keyId: 'key_c', ...hit(3) })],
          base(hit(0.5)),
          base({ keyId: null }), // no key
          [d.id, y, market({ period: P2, credits: 9 })],
          base(),
          base({ limit: 50 }), // only the limit
          base(),
          base({ period: P2 }), // only the period
          base(hit(1.23456)),
          base({ analyticId: y.id }), // only the analytic id
          [d.id, y, market({ period: P2 })],
          base(),
          base({ analyticName: 'renamed' }), // only the analytic's name
          base(),
          base({ version: 2 }), // only the version
          [a.id, x, market({ keyId: 'key_1' })],
          base(),
          base({ ownerId: b.id }), // only the owner
          [c.id, x, market({ keyId: 'key_c', ...hit(3) })],
          base(),
          base({ plan: 'enterprise', creditValueMicroUsd: 99_500 }), // only the plan (and its credit's value)
          base(),
          base({ served: undefined }), // only served or not
          [a.id, x, market({ keyId: 'key_1', limit: 100, ...hit(4) })],
          base({ credits: 0 }), // only the origin (both free)
          [b.id, x, { limit: null, credits: 7 }],
          base({ period: P2, limit: null, served: undefined }),
        ];
        /** What the repository charges for a call (marketplace calls are free). */
        const moneyOf = (r: ReserveRequest) => priceCall(r.origin, r.credits, r.creditValueMicroUsd);
        /** The batch in its own two fresh periods, with fresh request ids; the same state before it. */
        const prepare = async () => {
          const tag = unique();
          const periods = [freshPeriod(), freshPeriod()] as const;
          const batch: ReserveRequest[] = specs.map(([account, analytic, overrides], i) =>
            reservation(account, analytic, {
              ...overrides,
              requestId: `req_${tag}_${String(i).padStart(2, '0')}`,
              period: overrides.period === P2 ? periods[1] : periods[0],
            }),
          );
          // Earlier calls: the counters of a (both periods), b and c exist and are not zero.
          const earlier = (
            [
              [a.id, periods[0]],
              [a.id, periods[1]],
              [b.id, periods[0]],
              [c.id, periods[0]],
            ] as const
          ).map(([account, period]) => reservation(account, x, { period, limit: 100 }));
          return { batch, periods, earlier };
        };
        /** Every column of the batch's events, its request ids and periods renamed by position. */
        const ledgerOf = async (batch: readonly ReserveRequest[], periods: readonly string[]) => {
          const rows = await sql.query<Record<string, unknown>>(
            'SELECT * FROM usage_events WHERE request_id = ANY ($1::text[]) ORDER BY request_id',
            [batch.map((r) => r.requestId)],
          );
          expect(rows).toHaveLength(batch.length);
          return rows.map(({ request_id, period, reserved_at, completed_at, ...rest }) => {
            expect(reserved_at).toBeInstanceOf(Date);
            if (completed_at !== null) expect(completed_at).toEqual(reserved_at);
            return {
              ...rest,
              request_id: (request_id as string).slice(-2),
              period: periods.indexOf(period as string),
              completed: completed_at !== null,
            };
          });
        };
        const countersOf = async (periods: readonly string[]) => {
          const out: number[] = [];
          for (const account of [a, b, c, d]) {
            for (const period of periods) out.push(await store.usage.counter(account.id, period));
          }
          return out;
        };

        // Grouped, through quarry_charge_calls (the instance first learns its headroom).
        const grouped = await prepare();
        const charging = instance();
        await charging.usage.reserveMany(grouped.earlier);
        const groupedResults = await charging.usage.reserveMany(grouped.batch);
        expect(charging.calls).toEqual(['quarry_reserve_calls', 'quarry_charge_calls']);
        // Sent grouped: one group per distinct combination of a call's fields but its request id
        // and latency, and through its group every call reads back exactly its own fields.
        const [g, e] = [
          (charging.args[1] as unknown[][]).slice(0, 19),
          (charging.args[1] as unknown[][]).slice(19, 22),
        ];
        const fieldsOf = (r: ReserveRequest) => {
          const m = moneyOf(r);
          // biome-ignore format: in the order of quarry_charge_calls' arguments
          return [r.accountId, r.keyId, r.period, r.plan, r.limit === null ? null : r.limit * 1_000, r.budget !== null,
                  r.analyticId, r.analyticName, r.version, r.ownerId, r.origin, m.millicredits, m.ownerMillicredits,
                  m.platformMillicredits, m.valueMicroUsd, m.ownerMicroUsd, m.platformMicroUsd, r.served !== undefined];
        };
        const keys = grouped.batch.map((r) => JSON.stringify(fieldsOf(r)));
        const distinct = [...new Set(keys)];
        expect(distinct).toHaveLength(19);
        expect(g.every((column) => column.length === distinct.length)).toBe(true);
        expect(g[18]).toEqual(distinct.map((key) => keys.filter((other) => other === key).length));
        expect(e[0]).toEqual(grouped.batch.map((r) => r.requestId));
        // biome-ignore format: one latency per call, rounded to the microsecond
        expect(e[2]).toEqual([1.235, 2, 1, 1, 3, 0.5, 1, null, 1, 1, 1, 1, 1.235, 1, null, 1, 1, 1, 1, null, 1, 1, 3, 1, 1, 1, null, 4, 1, null, null]);
        grouped.batch.forEach((r, i) => {
          const group = (e[1] as number[])[i] as number;
          expect(g.slice(0, 18).map((column) => column[group - 1])).toEqual(fieldsOf(r));
        });

        // Exact, through quarry_reserve_calls (an instance that knows no headroom goes exact).
        const exact = await prepare();
        await counting(store.usage).reserveMany(exact.earlier);
        const deciding = instance();
        const exactResults = await deciding.usage.reserveMany(exact.batch);
        expect(deciding.calls).toEqual(['quarry_reserve_calls']);

        // Every call's result: the account's counter in credits at the call's turn, the same on both
        // paths (a call of 0 credits, like a preview, leaves it as it was). A preview of an account
        // without a counter row reads 0.
        const usedOf = (results: readonly Counted[]) => results.map((r) => (r instanceof Error ? r : r.used));
        // biome-ignore format: one number per call
        const expected = [2, 2, 3, 4, 1, 5, 6, 0, 7, 8, 9, 2, 10, 11, 0, 12, 13, 14, 15, 15, 16, 17, 1, 18, 19, 20, 21, 21, 21, 9, 3];
        expect(usedOf(groupedResults)).toEqual(expected);
        expect(usedOf(exactResults)).toEqual(expected);
        const apiCalls = (results: readonly Counted[]) =>
          results.map((r, i) => ((specs[i] as Spec)[2].origin === 'marketplace' ? 'marketplace' : r));
        expect(apiCalls(groupedResults)).toEqual(apiCalls(exactResults));
        expect(groupedResults.every((r) => !(r instanceof Error) && r.ok && !r.replayed)).toBe(true);
        // Every row of the ledger, column by column; and the counters.
        const groupedLedger = await ledgerOf(grouped.batch, grouped.periods);
        expect(groupedLedger).toEqual(await ledgerOf(exact.batch, exact.periods));
        expect(await countersOf(grouped.periods)).toEqual(await countersOf(exact.periods));
        expect(await countersOf(grouped.periods)).toEqual([22, 3, 3, 0, 1, 0, 0, 0]);
      });
    });

    describe('commit and release', () => {
      it('commit finalises once; release never undoes it', async () => {
        const { caller, analytic } = await world();
        const input = reservation(caller.id, analytic);
        await counting(store.usage).reserve(input);
        expect(await store.usage.commit(input.requestId, { latencyMs: 12.5, status: 'ok' })).toBe(
          'committed',
        );
        const [first] = await eventsOf(caller.id);
        expect(first).toMatchObject({ status: 'ok', latency_ms: 12.5 });
        expect(first?.completed_at).toBeInstanceOf(Date);
        expect(await store.usage.commit(input.requestId, { latencyMs: 99, status: 'ok' })).toBe(
          'already_committed',
        );
        expect(await store.usage.release(input.requestId)).toBe('committed');
        expect(await eventsOf(caller.id)).toEqual([first]);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(1);
      });

      it('release frees the slot and drops the event; a second release or a late commit finds nothing', async () => {
        const { caller, analytic } = await world();
        const input = reservation(caller.id, analytic, { limit: 1 });
        await counting(store.usage).reserve(input);
        expect((await counting(store.usage).reserve(reservation(caller.id, analytic, { limit: 1 }))).ok).toBe(
          false,
        );
        expect(await store.usage.release(input.requestId)).toBe('released');
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(0);
        expect(await eventsOf(caller.id)).toEqual([]);
        expect(await store.usage.release(input.requestId)).toBe('missing');
        expect(await store.usage.commit(input.requestId, { latencyMs: 1, status: 'ok' })).toBe('missing');
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(0);
        // The freed slot is usable again.
        expect((await counting(store.usage).reserve(reservation(caller.id, analytic, { limit: 1 }))).ok).toBe(
          true,
        );
      });

      it('releasing a marketplace call leaves the quota counter alone', async () => {
        const { caller, analytic } = await world();
        await counting(store.usage).reserve(reservation(caller.id, analytic));
        const trial = reservation(caller.id, analytic, { origin: 'marketplace' });
        await counting(store.usage).reserve(trial);
        expect(await store.usage.release(trial.requestId)).toBe('released');
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(1);
      });

      it('racing commit and release of each call: every call ends one way, and counter = events', async () => {
        const { caller, analytic } = await world();
        const inputs = Array.from({ length: 20 }, () => reservation(caller.id, analytic, { limit: null }));
        for (const input of inputs) await counting(store.usage).reserve(input);
        const outcomes = await Promise.all(
          inputs.map((input) =>
            Promise.all([
              store.usage.commit(input.requestId, { latencyMs: 1, status: 'ok' }),
              store.usage.release(input.requestId),
            ]),
          ),
        );
        for (const [commit, release] of outcomes) {
          const committed = commit === 'committed' && release === 'committed';
          const released = commit === 'missing' && release === 'released';
          expect(committed || released).toBe(true);
        }
        const events = await eventsOf(caller.id);
        expect(events.length).toBe(outcomes.filter(([commit]) => commit === 'committed').length);
        expect(events.every((e) => e.status === 'ok')).toBe(true);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(events.length);
      });
    });

    describe('reapStale', () => {
      it('releases only reservations pending longer than the bound', async () => {
        const { caller, analytic } = await world();
        const [stale, fresh, served] = Array.from({ length: 3 }, () => reservation(caller.id, analytic));
        for (const input of [stale!, fresh!, served!]) await counting(store.usage).reserve(input);
        await store.usage.commit(served!.requestId, { latencyMs: 1, status: 'ok' });
        await backdate(stale!.requestId, 3_600_000);
        await backdate(served!.requestId, 3_600_000);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(3);
        expect(await store.usage.reapStale(600_000)).toBe(1);
        expect((await eventsOf(caller.id)).map((e) => e.request_id).sort()).toEqual(
          [fresh!.requestId, served!.requestId].sort(),
        );
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(2);
        expect(await store.usage.reapStale(600_000)).toBe(0);
        // A commit arriving after its reservation was reaped is told so.
        expect(await store.usage.commit(stale!.requestId, { latencyMs: 1, status: 'ok' })).toBe('missing');
      });
    });

    describe('reapStale and asynchronous jobs', () => {
      it('leaves the reservation of a job still queued or running to the jobs, however old', async () => {
        const { caller, analytic } = await world();
        const job = reservation(caller.id, analytic);
        await counting(store.usage).reserve(job);
        await backdate(job.requestId, 3_600_000);
        await sql.query(
          `INSERT INTO query_jobs (id, account_id, source, version, request_id, state, instance_id, timeout_ms)
           VALUES ($1, $2, 'a', 1, $3, 'running', 'inst_test', 1800000)`,
          [`job_${job.requestId}`, caller.id, job.requestId],
        );
        expect(await store.usage.reapStale(600_000)).toBe(0);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(1);
        // Once the job is over (its instance died and the sweep failed it), the reservation is fair game.
        await sql.query(`UPDATE query_jobs SET state = 'failed' WHERE request_id = $1`, [job.requestId]);
        expect(await store.usage.reapStale(600_000)).toBe(1);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(0);
      });
    });

    describe('concurrency', () => {
      const racers = backend.name === 'postgres' ? 300 : 60;
      const limit = backend.name === 'postgres' ? 30 : 10;

      it(`admits exactly ${limit} of ${racers} parallel reservations`, async () => {
        const pool = await backend.pool(sql, 20);
        const racingStore = { ...createControlPlaneStore(pool, { secretBox }), ...createMoneyStore(pool) };
        const { caller, analytic } = await world();
        const results = await Promise.all(
          Array.from({ length: racers }, () =>
            racingStore.usage.reserve(reservation(caller.id, analytic, { limit })),
          ),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(limit);
        expect(results.filter((r) => !r.ok && r.reason === 'quota_exceeded')).toHaveLength(racers - limit);
        const used = results.flatMap((r) => (r.ok ? [r.usedMillicredits / 1_000] : []));
        expect(used.sort((a, b) => a - b)).toEqual(Array.from({ length: limit }, (_, i) => i + 1));
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(limit);
        expect(await eventsOf(caller.id)).toHaveLength(limit);
      });

      it('keeps counter = events while reservations, releases and a reaper race', async () => {
        const pool = await backend.pool(sql, 20);
        const racingStore = { ...createControlPlaneStore(pool, { secretBox }), ...createMoneyStore(pool) };
        const { caller, analytic } = await world();
        const work = Array.from({ length: racers }, async (_, i) => {
          const input = reservation(caller.id, analytic, { limit });
          const result = await racingStore.usage.reserve(input);
          if (!result.ok) return;
          if (i % 3 === 0) await racingStore.usage.release(input.requestId);
          else if (i % 3 === 1)
            await racingStore.usage.commit(input.requestId, { latencyMs: 1, status: 'ok' });
        });
        await Promise.all([...work, racingStore.usage.reapStale(0), racingStore.usage.reapStale(0)]);
        const events = await eventsOf(caller.id);
        expect(events.length).toBeLessThanOrEqual(limit);
        expect(await store.usage.counter(caller.id, PERIOD)).toBe(events.length);
      });

      it('closing a period while calls race it never lets a served call miss the frozen statement', async () => {
        const pool = await backend.pool(sql, 20);
        const racingStore = { ...createControlPlaneStore(pool, { secretBox }), ...createMoneyStore(pool) };
        const { caller, owner, analytic } = await world();
        const period = freshPeriod();
        const served: string[] = [];
        let refused = 0;
        const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        // Calls arrive over ~200 ms, some overlapping, so the close lands among them.
        const calls = Array.from({ length: 50 }, async (_, i) => {
          await sleep(i * 4 + (i % 3));
          const input = reservation(caller.id, analytic, { period, limit: null, credits: 3 });
          const result = await racingStore.usage.reserve(input);
          if (!result.ok) {
            expect(result.reason).toBe('period_closed');
            refused += 1;
            return;
          }
          expect(await racingStore.usage.commit(input.requestId, { latencyMs: 1, status: 'ok' })).toBe(
            'committed',
          );
          served.push(input.requestId);
        });
        const closing = (async () => {
          await sleep(60);
          for (;;) {
            try {
              return await racingStore.statements.closePeriod(period);
            } catch (error) {
              if (!isStoreError(error, 'CONFLICT')) throw error;
              await sleep(1);
            }
          }
        })();
        await Promise.all([...calls, closing]);
        const statement = await store.statements.ownerStatement(owner.id, period);
        expect(statement.closedAt).toBeInstanceOf(Date);
        expect(served.length + refused).toBe(50);
        expect(statement.totals.calls).toBe(served.length);
        expect(statement.totals.millicredits).toBe(3_000 * served.length);
        expect(statement.totals.ownerMicroUsd).toBe(3 * floor80(SMB_CREDIT) * served.length);
        expect((await eventsOf(caller.id)).filter((e) => e.status === 'ok')).toHaveLength(served.length);
      });
    });

    describe('usage report', () => {
      it('sums served api calls by analytic and by day; pending and marketplace calls stay out', async () => {
        const { caller, owner, analytic } = await world();
        const other = await newAnalytic(owner.id);
        const serve = async (input: Reservation) => {
          await counting(store.usage).reserve(input);
          await store.usage.commit(input.requestId, { latencyMs: 2, status: 'ok' });
        };
        const period = new Date().toISOString().slice(0, 7);
        await serve(reservation(caller.id, analytic, { period, credits: 5, limit: null }));
        await serve(reservation(caller.id, analytic, { period, credits: 7, limit: null }));
        await serve(reservation(caller.id, other, { period, credits: 1, limit: null }));
        await serve(
          reservation(caller.id, other, {
            period,
            origin: 'marketplace',
            limit: null,
          }),
        );
        await counting(store.usage).reserve(
          reservation(caller.id, other, { period, credits: 100, limit: null }),
        );
        const report = await store.usage.usageFor(caller.id, period);
        const v = (credits: number) => credits * SMB_CREDIT;
        expect(report.totals).toMatchObject({
          calls: 3,
          millicredits: 13_000,
          valueMicroUsd: v(13),
          byOrigin: { paid: 3, free: 0, marketplace: 1, owner: 0 },
        });
        expect(report.byAnalytic).toEqual(
          [
            { name: analytic.name, calls: 2, millicredits: 12_000, valueMicroUsd: v(12) },
            { name: other.name, calls: 1, millicredits: 1_000, valueMicroUsd: v(1) },
          ].sort((a, b) => (a.name < b.name ? -1 : 1)),
        );
        expect(report.byDay).toEqual([
          {
            date: new Date().toISOString().slice(0, 10),
            calls: 3,
            millicredits: 13_000,
            valueMicroUsd: v(13),
          },
        ]);
        const empty = await store.usage.usageFor(caller.id, '2001-01');
        expect(empty).toMatchObject({
          period: '2001-01',
          totals: { calls: 0, millicredits: 0, byOrigin: { paid: 0, free: 0, marketplace: 0, owner: 0 } },
          byAnalytic: [],
          byDay: [],
        });
      });
    });

    describe('owner statements', () => {
      const serve = async (input: Reservation) => {
        await counting(store.usage).reserve(input);
        await store.usage.commit(input.requestId, { latencyMs: 2, status: 'ok' });
      };

      it('give each analytic its calls, credits and the exact 80/20 split', async () => {
        const { caller, owner, analytic } = await world();
        const second = await newAnalytic(owner.id);
        const rival = await newAnalytic((await newAccount('rival')).id);
        const period = freshPeriod();
        const at = (a: Analytic, credits: number, origin: UsageOrigin = 'paid') =>
          reservation(caller.id, a, { period, credits, limit: null, origin });
        await serve(at(analytic, 7));
        await serve(at(analytic, 3));
        await serve(at(second, 1));
        await serve(at(second, 0, 'marketplace'));
        await serve(at(rival, 50));
        await counting(store.usage).reserve(at(second, 1000));
        const statement = await store.statements.ownerStatement(owner.id, period);
        expect(statement.closedAt).toBeNull();
        const v = (credits: number) => credits * SMB_CREDIT;
        expect(statement.analytics).toEqual(
          [
            {
              name: analytic.name,
              calls: 2,
              callsByOrigin: { paid: 2, free: 0, marketplace: 0, owner: 0 },
              millicredits: 10_000,
              ownerMillicredits: 8_000,
              platformMillicredits: 2_000,
              valueMicroUsd: v(10),
              ownerMicroUsd: floor80(v(7)) + floor80(v(3)),
              platformMicroUsd: v(10) - floor80(v(7)) - floor80(v(3)),
            },
            {
              name: second.name,
              calls: 2,
              callsByOrigin: { paid: 1, free: 0, marketplace: 1, owner: 0 },
              millicredits: 1_000,
              ownerMillicredits: 800,
              platformMillicredits: 200,
              valueMicroUsd: v(1),
              ownerMicroUsd: 156_800,
              platformMicroUsd: 39_200,
            },
          ].sort((a, b) => (a.name < b.name ? -1 : 1)),
        );
        // Exactly 800 millicredits a credit: a 1-credit call earns its owner 0.8 credit, not 0.
        expect(statement.totals).toMatchObject({ calls: 4, millicredits: 11_000, ownerMillicredits: 8_800 });
        // By day (all served today) and analytic: the same amounts as the analytics' rows.
        const today = new Date().toISOString().slice(0, 10);
        expect(statement.byDay).toEqual(statement.analytics.map((a) => ({ date: today, ...a })));
        expect(statement.payout).toBeNull();
      });

      it('are frozen by closing the period, which then refuses reservations', async () => {
        const { caller, owner, analytic } = await world();
        const period = freshPeriod();
        const input = reservation(caller.id, analytic, { period, credits: 10, limit: null });
        await serve(input);
        const inFlight = reservation(caller.id, analytic, { period, credits: 10, limit: null });
        await counting(store.usage).reserve(inFlight);
        await expect(store.statements.closePeriod(period)).rejects.toSatisfy((e) =>
          isStoreError(e, 'CONFLICT'),
        );
        expect(await store.statements.closedAt(period)).toBeNull();
        await store.usage.release(inFlight.requestId);

        const closed = await store.statements.closePeriod(period);
        expect(closed).toMatchObject({ period, alreadyClosed: false });
        expect(await store.statements.closedAt(period)).toEqual(closed.closedAt);
        const again = await store.statements.closePeriod(period);
        expect(again).toEqual({ period, closedAt: closed.closedAt, alreadyClosed: true });

        const frozen = await store.statements.ownerStatement(owner.id, period);
        expect(frozen.closedAt).toEqual(closed.closedAt);
        expect(frozen.totals).toMatchObject({ calls: 1, millicredits: 10_000, ownerMillicredits: 8_000 });
        expect(frozen.byDay).toEqual([
          { date: new Date().toISOString().slice(0, 10), name: analytic.name, ...frozen.totals },
        ]);
        // 10 SMB credits: 1.96 USD paid, 1.568 USD earned: 156 cents paid out, 0.8 cent carried on.
        expect(frozen.payout).toMatchObject({
          carriedInMicroUsd: 0,
          earnedMicroUsd: 1_568_000,
          adjustedMicroUsd: 0,
          payoutCents: 156,
          carriedOutMicroUsd: 8_000,
          // No payment provider given: the operator pays it.
          status: 'operator',
          transferId: null,
        });
        const refused = await counting(store.usage).reserve(
          reservation(caller.id, analytic, { period, limit: null }),
        );
        expect(refused).toEqual({ ok: false, reason: 'period_closed', used: 10 });
        // A late correction of the ledger does not reach the frozen statement.
        await sql.query(
          `UPDATE usage_events SET millicredits = 100000, owner_millicredits = 80000, platform_millicredits = 20000
            WHERE request_id = $1`,
          [input.requestId],
        );
        expect(await store.statements.ownerStatement(owner.id, period)).toEqual(frozen);
        // The next payout carries the 0.8 cent in: 0.8 + 15.68 cents → 16 cents, 0.48 cent on.
        const next = freshPeriod();
        await serve(reservation(caller.id, analytic, { period: next, credits: 1, limit: null }));
        await store.statements.closePeriod(next);
        expect((await store.statements.ownerStatement(owner.id, next)).payout).toMatchObject({
          carriedInMicroUsd: 8_000,
          earnedMicroUsd: 156_800,
          payoutCents: 16,
          carriedOutMicroUsd: 4_800,
        });
        // Other periods stay open.
        expect(
          (await counting(store.usage).reserve(reservation(caller.id, analytic, { period: freshPeriod() })))
            .ok,
        ).toBe(true);
      });
    });

    describe('idempotency keys', () => {
      it('go new → in progress → done, and refuse a different request under the same key', async () => {
        const account = await newAccount();
        const key = `idem-${unique()}`;
        expect(await store.idempotency.claim(account.id, key, 'fp1')).toEqual({ state: 'new' });
        expect(await store.idempotency.claim(account.id, key, 'fp1')).toEqual({ state: 'in_progress' });
        expect(await store.idempotency.claim(account.id, key, 'fp2')).toEqual({ state: 'mismatch' });
        expect(await store.idempotency.complete(account.id, key, { statusCode: 200, body: '{"a":1}' })).toBe(
          true,
        );
        expect(await store.idempotency.complete(account.id, key, { statusCode: 500, body: 'x' })).toBe(false);
        expect(await store.idempotency.claim(account.id, key, 'fp1')).toEqual({
          state: 'done',
          statusCode: 200,
          body: '{"a":1}',
        });
        expect(await store.idempotency.claim(account.id, key, 'fp2')).toEqual({ state: 'mismatch' });
        // Keys are per account.
        const other = await newAccount();
        expect(await store.idempotency.claim(other.id, key, 'fp2')).toEqual({ state: 'new' });
      });

      it('grant exactly one of many concurrent claims', async () => {
        const account = await newAccount();
        const key = `race-${unique()}`;
        const claims = await Promise.all(
          Array.from({ length: 20 }, () => store.idempotency.claim(account.id, key, 'fp')),
        );
        expect(claims.filter((c) => c.state === 'new')).toHaveLength(1);
        expect(claims.filter((c) => c.state === 'in_progress')).toHaveLength(19);
      });

      it('can be abandoned, taken over after a lease, and expire after 24 hours', async () => {
        const account = await newAccount();
        const key = `exp-${unique()}`;
        await store.idempotency.claim(account.id, key, 'fp');
        await store.idempotency.abandon(account.id, key);
        expect(await store.idempotency.claim(account.id, key, 'fp')).toEqual({ state: 'new' });
        const age = (ms: number) =>
          sql.query(
            `UPDATE idempotency_keys SET created_at = created_at - $3::double precision * interval '1 millisecond'
              WHERE account_id = $1 AND key = $2`,
            [account.id, key, ms],
          );
        await age(120_000);
        expect(await store.idempotency.claim(account.id, key, 'fp', { takeOverAfterMs: 600_000 })).toEqual({
          state: 'in_progress',
        });
        expect(await store.idempotency.claim(account.id, key, 'fp', { takeOverAfterMs: 60_000 })).toEqual({
          state: 'new',
        });
        await store.idempotency.complete(account.id, key, { statusCode: 201, body: 'made' });
        await age(60_000);
        // A completed key is never taken over, only expired.
        expect((await store.idempotency.claim(account.id, key, 'other', { takeOverAfterMs: 1 })).state).toBe(
          'mismatch',
        );
        await age(25 * 3_600_000);
        const purged = await store.idempotency.purgeExpired();
        expect(purged).toBeGreaterThanOrEqual(1);
        expect(await store.idempotency.claim(account.id, key, 'other')).toEqual({ state: 'new' });
        expect(await store.idempotency.purgeExpired()).toBe(0);
      });
    });

    describe('listings', () => {
      const fields = (category: string, overrides: Record<string, unknown> = {}) => ({
        title: 'Revenue by region',
        description: 'Sales totals per region and year',
        category,
        tags: ['Sales', 'geo'],
        price: 2,
        exampleParams: { year: 2024 },
        ...overrides,
      });

      it('are published, shown with their analytic, unpublished and re-published', async () => {
        const owner = await newAccount('owner');
        const analytic = await newAnalytic(owner.id);
        const category = `cat-${unique()}`;
        const listing = await store.listings.publish(owner.id, analytic.id, fields(category));
        expect(listing).toMatchObject({
          analyticId: analytic.id,
          name: analytic.name,
          ownerId: owner.id,
          tags: ['Sales', 'geo'],
          price: 2,
          exampleParams: { year: 2024 },
          unpublishedAt: null,
        });
        const shown = await store.listings.get(analytic.name);
        expect(shown).toMatchObject({ title: 'Revenue by region', calls30d: 0, version: 1 });
        expect(shown?.definition).toEqual(analytic.definition);

        const updated = await store.listings.publish(owner.id, analytic.id, fields(category, { price: 3 }));
        expect(updated.price).toBe(3);
        expect(updated.publishedAt).toEqual(listing.publishedAt);

        const hidden = await store.listings.unpublish(owner.id, analytic.id);
        expect(hidden.unpublishedAt).toBeInstanceOf(Date);
        expect(await store.listings.get(analytic.name)).toBeNull();
        expect((await store.listings.unpublish(owner.id, analytic.id)).unpublishedAt).toEqual(
          hidden.unpublishedAt,
        );
        expect((await store.listings.search({ category })).items).toEqual([]);

        const back = await store.listings.publish(owner.id, analytic.id, fields(category));
        expect(back.unpublishedAt).toBeNull();
        expect(back.publishedAt.getTime()).toBeGreaterThan(listing.publishedAt.getTime());
        expect(await store.listings.get(analytic.name)).not.toBeNull();
      });

      it("cannot be published for someone else's analytic, and hide private or deleted ones", async () => {
        const owner = await newAccount('owner');
        const intruder = await newAccount('intruder');
        const analytic = await newAnalytic(owner.id);
        await expect(store.listings.publish(intruder.id, analytic.id, fields('x'))).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        await expect(store.listings.unpublish(intruder.id, analytic.id)).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
        const secret = await newAnalytic(owner.id, 'private');
        await store.listings.publish(owner.id, secret.id, fields('x'));
        expect(await store.listings.get(secret.name)).toBeNull();
        await store.listings.publish(owner.id, analytic.id, fields('x'));
        await store.analytics.delete(owner.id, analytic.name);
        expect(await store.listings.get(analytic.name)).toBeNull();
        await expect(store.listings.publish(owner.id, analytic.id, fields('x'))).rejects.toSatisfy((e) =>
          isStoreError(e, 'NOT_FOUND'),
        );
      });

      it('are searched by text and category, sorted by popularity or newest, and paged', async () => {
        const owner = await newAccount('owner');
        const category = `cat-${unique()}`;
        const [a, b, c] = [
          await newAnalytic(owner.id),
          await newAnalytic(owner.id),
          await newAnalytic(owner.id),
        ];
        // Publish times must differ for `newest` to order by them (PGlite's clock ticks in ms;
        // equal times fall back to the name, which flaked this test under load).
        const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
        await store.listings.publish(
          owner.id,
          a!.id,
          fields(category, { title: 'Churn cohorts', tags: ['SaaS'] }),
        );
        await tick();
        await store.listings.publish(owner.id, b!.id, fields(category, { title: 'Sales funnel 100%_off' }));
        await tick();
        await store.listings.publish(
          owner.id,
          c!.id,
          fields(category, { title: 'Weather', description: 'rain' }),
        );
        const caller = await newAccount('caller');
        const serve = async (analytic: Analytic, n: number) => {
          for (let i = 0; i < n; i++) {
            const input = reservation(caller.id, analytic, { limit: null });
            await counting(store.usage).reserve(input);
            await store.usage.commit(input.requestId, { latencyMs: 1, status: 'ok' });
          }
        };
        await serve(b!, 3);
        await serve(a!, 1);
        // Pending calls do not make a listing popular.
        for (let i = 0; i < 5; i++)
          await counting(store.usage).reserve(reservation(caller.id, c!, { limit: null }));

        const popular = await store.listings.search({ category, sort: 'popular' });
        expect(popular.items.map((l) => [l.name, l.calls30d])).toEqual([
          [b!.name, 3],
          [a!.name, 1],
          [c!.name, 0],
        ]);
        expect(popular.total).toBe(3);
        const newest = await store.listings.search({ category: category.toUpperCase(), sort: 'newest' });
        expect(newest.items.map((l) => l.name)).toEqual([c!.name, b!.name, a!.name]);

        const names = async (text: string) =>
          (await store.listings.search({ category, text })).items.map((l) => l.name);
        expect(await names('saas')).toEqual([a!.name]);
        expect(await names('CHURN')).toEqual([a!.name]);
        expect(await names('RAIN')).toEqual([c!.name]);
        expect(await names('%_')).toEqual([b!.name]);
        expect(await names('%')).toEqual([b!.name]);
        expect(await names('geo')).toEqual([b!.name, c!.name]);
        expect(await names('nothing-like-this')).toEqual([]);

        const page = await store.listings.search({ category, sort: 'newest', limit: 2, offset: 1 });
        expect(page.items.map((l) => l.name)).toEqual([b!.name, a!.name]);
        expect(page.total).toBe(3);
      });
    });

    describe('ledger properties', () => {
      /** The plans an account may be on, as the gateway prices them (money/plan-catalog.ts). */
      const PLANS = {
        free: { limit: 30, value: 0, budgeted: false },
        smb: { limit: 250, value: 196_000, budgeted: false },
        enterprise: { limit: 2_000, value: 99_500, budgeted: false },
        payg: { limit: null, value: 500_000, budgeted: true },
      } as const;
      type PlanId = keyof typeof PLANS;
      const BUDGET = { defaultMicroUsd: 20_000_000, maxMicroUsd: 1_000_000_000 }; // 20 USD: 40 credits
      type Op =
        | {
            readonly t: 'reserve';
            readonly account: 0 | 1 | 2;
            readonly analytic: 0 | 1 | 2;
            readonly credits: number;
            readonly kind: 'counted' | 'marketplace' | 'owner';
          }
        | { readonly t: 'commit' | 'release' | 'stale'; readonly pick: number }
        | { readonly t: 'reap' };
      const opArb: fc.Arbitrary<Op> = fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            t: fc.constant('reserve' as const),
            account: fc.constantFrom(0 as const, 1 as const, 2 as const),
            analytic: fc.constantFrom(0 as const, 1 as const, 2 as const),
            credits: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 100 })),
            kind: fc.constantFrom(
              'counted' as const,
              'counted' as const,
              'marketplace' as const,
              'owner' as const,
            ),
          }),
        },
        {
          weight: 3,
          arbitrary: fc.record({
            t: fc.constantFrom('commit' as const, 'release' as const, 'stale' as const),
            pick: fc.nat(),
          }),
        },
        { weight: 1, arbitrary: fc.constant({ t: 'reap' as const }) },
      );
      const planArb = fc.constantFrom<PlanId>('free', 'smb', 'enterprise', 'payg');

      it('for random plans, prices, origins and call sequences: splits sum, counters, statements and payouts agree, owners get at most 80% of what callers paid, Free moves no money', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.tuple(planArb, planArb, planArb),
            fc.array(opArb, { minLength: 1, maxLength: backend.name === 'postgres' ? 25 : 40 }),
            async (plans, ops) => {
              const period = freshPeriod();
              const accounts = await Promise.all(plans.map((plan) => newAccount(plan)));
              const owners = [await newAccount('o1'), await newAccount('o2')];
              const analytics = [
                await newAnalytic(owners[0]!.id),
                await newAnalytic(owners[0]!.id),
                await newAnalytic(owners[1]!.id),
              ];
              interface Modelled {
                readonly input: Reservation;
                state: 'pending' | 'ok' | 'gone';
                stale: boolean;
              }
              const model: Modelled[] = [];
              const counted = (m: Modelled) => m.input.origin === 'paid' || m.input.origin === 'free';
              const live = (account: number) =>
                model.filter(
                  (m) => m.state !== 'gone' && counted(m) && m.input.accountId === accounts[account]!.id,
                );
              const sum = (ms: readonly Modelled[], f: (m: Modelled) => number) =>
                ms.reduce((t, m) => t + f(m), 0);
              for (const op of ops) {
                if (op.t === 'reserve') {
                  const planId = plans[op.account];
                  const plan = PLANS[planId];
                  const origin: UsageOrigin =
                    op.kind === 'counted' ? (plan.value === 0 ? 'free' : 'paid') : op.kind;
                  const input = reservation(accounts[op.account]!.id, analytics[op.analytic]!, {
                    period,
                    plan: planId,
                    limit: plan.limit,
                    budget: plan.budgeted ? BUDGET : null,
                    creditValueMicroUsd: plan.value,
                    credits: op.credits,
                    origin,
                  });
                  const mine = live(op.account);
                  const admit =
                    op.kind !== 'counted' ||
                    (plan.limit !== null
                      ? sum(mine, (m) => m.input.credits) + op.credits <= plan.limit
                      : sum(mine, (m) => m.input.credits * plan.value) + op.credits * plan.value <=
                        BUDGET.defaultMicroUsd);
                  const result = await counting(store.usage).reserve(input);
                  expect(result.ok).toBe(admit);
                  if (admit) model.push({ input, state: 'pending', stale: false });
                } else if (op.t === 'reap') {
                  const doomed = model.filter((m) => m.state === 'pending' && m.stale);
                  expect(await store.usage.reapStale(600_000)).toBe(doomed.length);
                  for (const m of doomed) m.state = 'gone';
                } else {
                  const m = model[op.pick % Math.max(1, model.length)];
                  if (m === undefined) continue;
                  const id = m.input.requestId;
                  if (op.t === 'stale') {
                    // Only a pending call can go stale (a served one's day is history, and rolled up).
                    if (m.state !== 'pending') continue;
                    await backdate(id, 3_600_000);
                    m.stale = true;
                  } else if (op.t === 'commit') {
                    const expected = { pending: 'committed', ok: 'already_committed', gone: 'missing' }[
                      m.state
                    ];
                    expect(await store.usage.commit(id, { latencyMs: 1, status: 'ok' })).toBe(expected);
                    if (m.state === 'pending') m.state = 'ok';
                  } else {
                    const expected = { pending: 'released', ok: 'committed', gone: 'missing' }[m.state];
                    expect(await store.usage.release(id)).toBe(expected);
                    if (m.state === 'pending') m.state = 'gone';
                  }
                }
              }
              interface Event {
                request_id: string;
                account_id: string;
                owner_id: string;
                status: string;
                origin: UsageOrigin;
                plan: string;
                millicredits: number;
                owner_millicredits: number;
                platform_millicredits: number;
                value_musd: number;
                owner_musd: number;
                platform_musd: number;
              }
              const ledger = await sql.query<Event>(
                `SELECT request_id, account_id, owner_id, status, origin, plan, millicredits, owner_millicredits,
                        platform_millicredits, value_musd, owner_musd, platform_musd
                   FROM usage_events WHERE period = $1 ORDER BY request_id`,
                [period],
              );
              // Exactly the modelled events, with the modelled status.
              expect(ledger.map((e) => [e.request_id, e.status])).toEqual(
                model
                  .filter((m) => m.state !== 'gone')
                  .map((m) => [m.input.requestId, m.state])
                  .sort((x, y) => (x[0]! < y[0]! ? -1 : 1)),
              );
              for (const event of ledger) {
                // Per event: owner + platform = value, in credits and in money.
                expect(event.owner_millicredits + event.platform_millicredits).toBe(event.millicredits);
                expect(event.owner_musd + event.platform_musd).toBe(event.value_musd);
                expect(event.owner_millicredits * 10).toBe(event.millicredits * 8);
                expect(event.owner_musd).toBe(floor80(event.value_musd));
                if (event.origin !== 'paid') expect(event.value_musd).toBe(0);
                if (event.origin === 'marketplace' || event.origin === 'owner')
                  expect(event.millicredits).toBe(0);
                const planOf = PLANS[event.plan as PlanId];
                if (event.origin === 'paid')
                  expect(event.value_musd).toBe((event.millicredits / 1000) * planOf.value);
              }
              for (const [i, account] of accounts.entries()) {
                expect(await store.usage.counters(account.id, period)).toEqual({
                  calls: live(i).length,
                  millicredits: sum(live(i), (m) => m.input.credits * 1000),
                  valueMicroUsd: sum(live(i), (m) =>
                    m.input.origin === 'paid' ? m.input.credits * m.input.creditValueMicroUsd : 0,
                  ),
                });
                // A Free account never moves money.
                if (plans[i] === 'free') {
                  expect(
                    ledger.filter((e) => e.account_id === account.id).every((e) => e.value_musd === 0),
                  ).toBe(true);
                }
              }
              const served = ledger.filter((e) => e.status === 'ok');
              const sumOf = (ownerId: string) => {
                const rows = served.filter((e) => e.owner_id === ownerId);
                return {
                  calls: rows.length,
                  millicredits: rows.reduce((t, e) => t + e.millicredits, 0),
                  ownerMillicredits: rows.reduce((t, e) => t + e.owner_millicredits, 0),
                  valueMicroUsd: rows.reduce((t, e) => t + e.value_musd, 0),
                  ownerMicroUsd: rows.reduce((t, e) => t + e.owner_musd, 0),
                  platformMicroUsd: rows.reduce((t, e) => t + e.platform_musd, 0),
                };
              };
              for (const owner of owners) {
                expect((await store.statements.ownerStatement(owner.id, period)).totals).toMatchObject(
                  sumOf(owner.id),
                );
              }
              // The day rollups (migration 017) equal the raw events' sums, key by key, to the unit.
              const drift = async () =>
                (await sql.query<LedgerDrift>(ledgerDriftSql())).filter(
                  (d) => d.key.includes(` ${period} `) || analytics.some((a) => d.key.startsWith(`${a.id} `)),
                );
              expect(await drift()).toEqual([]);
              for (const account of accounts) {
                const usage = await store.usage.usageFor(account.id, period);
                const mine = served.filter((e) => e.account_id === account.id);
                const counted = mine.filter((e) => e.origin === 'paid' || e.origin === 'free');
                expect(usage.totals).toMatchObject({
                  calls: counted.length,
                  millicredits: counted.reduce((t, e) => t + e.millicredits, 0),
                  valueMicroUsd: counted.reduce((t, e) => t + e.value_musd, 0),
                });
                expect(Object.values(usage.totals.byOrigin).reduce((t, n) => t + n, 0)).toBe(mine.length);
              }
              // Close the period once nothing is in flight: the frozen statement is the ledger's,
              // and the payouts never exceed 80% of what callers paid.
              for (const m of model) if (m.state === 'pending') await store.usage.release(m.input.requestId);
              await store.statements.closePeriod(period);
              expect(await drift()).toEqual([]);
              let paidOut = 0;
              let earned = 0;
              for (const owner of owners) {
                const frozen = await store.statements.ownerStatement(owner.id, period);
                expect(frozen.closedAt).toBeInstanceOf(Date);
                expect(frozen.totals).toMatchObject(sumOf(owner.id));
                const payout = frozen.payout ?? {
                  carriedInMicroUsd: 0,
                  earnedMicroUsd: 0,
                  payoutCents: 0,
                  carriedOutMicroUsd: 0,
                };
                expect(payout.carriedInMicroUsd + payout.earnedMicroUsd).toBe(
                  payout.payoutCents * 10_000 + payout.carriedOutMicroUsd,
                );
                expect(payout.earnedMicroUsd).toBe(sumOf(owner.id).ownerMicroUsd);
                paidOut += payout.payoutCents * 10_000;
                earned += payout.earnedMicroUsd;
              }
              const callersPaid = served.reduce((t, e) => t + e.value_musd, 0);
              expect(paidOut).toBeLessThanOrEqual(earned);
              expect(paidOut * 100).toBeLessThanOrEqual(callersPaid * 80);
            },
          ),
          { numRuns: backend.name === 'postgres' ? 12 : 25 },
        );
      }, 120_000);
    });
  });
}
