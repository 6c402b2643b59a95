// The read replica's client (QUARRY_READ_DATABASE_URL) over two instrumented clients: reads go to
// the replica, to the primary while it does not answer (said once, counted, retried after a
// while), and a statement's own error is never hidden by a second try on the primary.
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../errors/store-error.js';
import { createReadReplica } from './read-replica.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** A client that records its statements and answers with its name, or fails with `failure`. */
function fakeClient(name: string) {
  const statements: string[] = [];
  let failure: unknown;
  let hanging = false;
  let closed = false;
  const executor = (inTransaction: boolean): SqlExecutor => ({
    kind: 'postgres',
    async query<R>(sql: string): Promise<R[]> {
      statements.push(inTransaction ? `tx: ${sql}` : sql);
      if (hanging) return new Promise<R[]>(() => {});
      if (failure !== undefined) throw failure;
      return [{ served_by: name }] as R[];
    },
    async exec(script) {
      statements.push(script);
      if (failure !== undefined) throw failure;
    },
    async transaction(fn) {
      if (failure !== undefined) throw failure;
      return fn(executor(true));
    },
  });
  const client: SqlClient = {
    ...executor(false),
    close: async () => {
      closed = true;
    },
    stats: () => ({ total: 2, idle: 1, waiting: 0, errors: 0 }),
  };
  return {
    client,
    statements,
    fail(error: unknown) {
      failure = error;
    },
    heal() {
      failure = undefined;
      hanging = false;
    },
    /** Statements are sent and never answered (a blackholed server). */
    hang() {
      hanging = true;
    },
    closed: () => closed,
  };
}

const unreachable = () => new StoreUnavailableError('the store cannot be reached', { inDoubt: false });

function setUp() {
  const replica = fakeClient('replica');
  const primary = fakeClient('primary');
  const events: string[] = [];
  let clock = 1_000_000;
  const reads = createReadReplica({
    replica: replica.client,
    primary: primary.client,
    onDown: (error) => events.push(`down: ${(error as Error).message}`),
    onUp: () => events.push('up'),
    retryAfterMs: 5_000,
    now: () => clock,
  });
  return {
    replica,
    primary,
    events,
    reads,
    advance(ms: number) {
      clock += ms;
    },
  };
}

const servedBy = async (sql: SqlExecutor, text = 'SELECT served_by') =>
  ((await sql.query<{ served_by: string }>(text))[0] as { served_by: string }).served_by;

describe('read replica', () => {
  it('reads through the replica, transactions too, and never touches the primary while it answers', async () => {
    const { reads, replica, primary } = setUp();
    expect(await servedBy(reads, 'SELECT statement')).toBe('replica');
    expect(await reads.transaction((tx) => servedBy(tx, 'SELECT in transaction'))).toBe('replica');
    expect(replica.statements).toEqual(['SELECT statement', 'tx: SELECT in transaction']);
    expect(primary.statements).toEqual([]);
    expect(reads.replicaStats()).toEqual({
      down: false,
      fallbacks: 0,
      pool: { total: 2, idle: 1, waiting: 0, errors: 0 },
    });
  });

  it('reads the primary while the replica does not answer: said once, counted, retried after a while', async () => {
    const { reads, replica, primary, events, advance } = setUp();
    replica.fail(unreachable());
    expect(await servedBy(reads, 'SELECT 1st')).toBe('primary');
    expect(await reads.transaction((tx) => servedBy(tx, 'SELECT 2nd'))).toBe('primary');
    expect(await servedBy(reads, 'SELECT 3rd')).toBe('primary');
    // Only the first read waited on the replica; the others went straight to the primary.
    expect(replica.statements).toEqual(['SELECT 1st']);
    expect(primary.statements).toEqual(['SELECT 1st', 'tx: SELECT 2nd', 'SELECT 3rd']);
    expect(events).toEqual(['down: the store cannot be reached']);
    expect(reads.replicaStats()).toMatchObject({ down: true, fallbacks: 3 });

    // Past the retry delay the replica is tried again: still down, not said again.
    advance(5_000);
    expect(await servedBy(reads, 'SELECT 4th')).toBe('primary');
    expect(replica.statements).toEqual(['SELECT 1st', 'SELECT 4th']);
    expect(events).toHaveLength(1);

    // Back: the next try after the delay reads the replica again, and says so once.
    replica.heal();
    expect(await servedBy(reads, 'SELECT 5th')).toBe('primary');
    advance(5_000);
    expect(await servedBy(reads, 'SELECT 6th')).toBe('replica');
    expect(await servedBy(reads, 'SELECT 7th')).toBe('replica');
    expect(events).toEqual(['down: the store cannot be reached', 'up']);
    expect(reads.replicaStats()).toMatchObject({ down: false, fallbacks: 5 });
    expect(primary.statements).not.toContain('SELECT 6th');
  });

  it("throws a statement's own error instead of running it again on the primary", async () => {
    const { reads, replica, primary, events } = setUp();
    const denied = Object.assign(new Error('permission denied for table usage_events'), { code: '42501' });
    replica.fail(denied);
    await expect(reads.query('SELECT denied')).rejects.toBe(denied);
    expect(primary.statements).toEqual([]);
    expect(events).toEqual([]);
    expect(reads.replicaStats().fallbacks).toBe(0);
  });

  it('runs a read the standby cancelled for a recovery conflict again on the primary, without marking it down', async () => {
    const { reads, replica, primary, events } = setUp();
    replica.fail(
      Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' }),
    );
    expect(await servedBy(reads, 'SELECT long')).toBe('primary');
    expect(reads.replicaStats()).toMatchObject({ down: false, fallbacks: 1 });
    expect(events).toEqual([]);
    replica.heal();
    expect(await servedBy(reads, 'SELECT next')).toBe('replica');
    expect(primary.statements).toEqual(['SELECT long']);
  });

  it('checks the replica for readiness: a failed probe marks it down, an answer up', async () => {
    const { reads, replica, primary, events, advance } = setUp();
    expect(await reads.check()).toBe(true);
    replica.fail(unreachable());
    expect(await reads.check()).toBe(false);
    expect(await servedBy(reads)).toBe('primary');
    replica.heal();
    // Not due for another try yet: not asked.
    expect(await reads.check()).toBe(false);
    expect(replica.statements).toEqual(['SELECT 1', 'SELECT 1']);
    advance(5_000);
    expect(await reads.check()).toBe(true);
    expect(await servedBy(reads)).toBe('replica');
    expect(events).toEqual(['down: the store cannot be reached', 'up']);
    // The probes ran on the replica only.
    expect(primary.statements).toEqual(['SELECT served_by']);
  });

  it('answers the readiness probe within its bound when the replica is blackholed, and reads skip it', async () => {
    const { reads, replica, events } = setUp();
    replica.hang();
    const started = performance.now();
    expect(await reads.check(50)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(events).toEqual(['down: the read replica did not answer SELECT 1 within 50 ms']);
    // Marked down: the next read goes straight to the primary instead of waiting on the replica.
    expect(await servedBy(reads, 'SELECT after')).toBe('primary');
    expect(replica.statements).toEqual(['SELECT 1']);
  });

  it('closes its own pool, not the primary', async () => {
    const { reads, replica, primary } = setUp();
    await reads.close();
    expect(replica.closed()).toBe(true);
    expect(primary.closed()).toBe(false);
  });
});
