import { afterEach, describe, expect, it } from 'vitest';
import { ConnectorError } from './connector-error.js';
import type { ConnectorSession } from './connector-plugin.js';
import type { PoolOptions } from './connector-pool.js';
import { createDestinationGuard } from './destination-guard.js';
import { OPERATOR_TRUSTED } from './destination-policy.js';
import { noopLogger } from './noop-logger.js';
import { createSessionPool, DEFAULT_POOL_OPTIONS, type SessionPool } from './session-pool.js';
import { createMemoryPlugin } from './testing/memory-plugin.js';

const pools: SessionPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.drain(0)));
});

async function setup(options: Partial<PoolOptions> = {}) {
  const plugin = createMemoryPlugin();
  const driver = await plugin.createDriver(
    { database: 'memory' },
    { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
  );
  const pool = createSessionPool(driver, { ...DEFAULT_POOL_OPTIONS, ...options }, noopLogger);
  pools.push(pool);
  return { pool, control: plugin.control };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    return (error as ConnectorError).code;
  }
  return 'resolved';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('createSessionPool', () => {
  it('documents its defaults', () => {
    expect(DEFAULT_POOL_OPTIONS).toEqual({
      min: 0,
      max: 10,
      acquireTimeoutMs: 5_000,
      maxWaiting: 1_000,
      idleTimeoutMs: 30_000,
      validateOnBorrow: true,
      createRetryBaseMs: 100,
      createRetryMaxMs: 5_000,
      connectTimeoutMs: 10_000,
    });
  });

  it('reuses a session released cleanly and destroys one released with an error', async () => {
    const { pool, control } = await setup();
    const a = await pool.acquire();
    expect(pool.wasIdle(a)).toBe(false);
    pool.release(a);
    const b = await pool.acquire();
    expect(b).toBe(a);
    expect(pool.wasIdle(b)).toBe(true);
    pool.release(b, new Error('broken'));
    await sleep(0);
    expect(control.sessions[0]?.closed).toBe(true);
    const c = await pool.acquire();
    expect(c).not.toBe(a);
    expect(pool.stats()).toEqual({ total: 1, idle: 0, busy: 1, waiting: 0, created: 2, destroyed: 1 });
    pool.release(c);
    expect(pool.stats()).toMatchObject({ idle: 1, busy: 0 });
  });

  it('counts waiting callers and serves them as sessions come back', async () => {
    const { pool } = await setup({ max: 1 });
    const held = await pool.acquire();
    const queued = [pool.acquire(), pool.acquire()];
    await sleep(0);
    expect(pool.stats().waiting).toBe(2);
    pool.release(held);
    const next = await queued[0]!;
    pool.release(next);
    pool.release(await queued[1]!);
    expect(pool.stats()).toMatchObject({ waiting: 0, total: 1, created: 1 });
  });

  it('rejects a waiting caller with QUERY_ABORTED when its signal aborts, and stays usable', async () => {
    const { pool } = await setup({ max: 1 });
    const held = await pool.acquire();
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort();
    expect(await codeOf(waiting)).toBe('QUERY_ABORTED');
    expect(pool.stats().waiting).toBe(0);
    pool.release(held);
    const again = await pool.acquire();
    expect(again).toBe(held);
    pool.release(again);
  });

  it('opens min sessions at start and closes sessions idle past idleTimeoutMs', async () => {
    const { pool, control } = await setup({ min: 2, idleTimeoutMs: 100 });
    await sleep(20);
    expect(control.sessions).toHaveLength(2);
    await sleep(400);
    expect(control.sessions.slice(0, 2).every((s) => s.closed)).toBe(true);
    expect(pool.stats().destroyed).toBeGreaterThanOrEqual(2);
  });

  it('drain() closes idle and (after the grace period) borrowed sessions, once, and refuses later acquires', async () => {
    const { pool, control } = await setup();
    const kept = await pool.acquire();
    const returned = await pool.acquire();
    pool.release(returned);
    const started = Date.now();
    const first = pool.drain(100);
    expect(pool.drain(100)).toBe(first);
    await first;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(control.sessions.every((s) => s.closed)).toBe(true);
    expect(control.destroyed).toBe(true);
    expect(pool.stats()).toMatchObject({ total: 0, busy: 0, idle: 0, destroyed: 2 });
    expect(await codeOf(pool.acquire())).toBe('CLOSED');
    pool.release(kept); // a late release after a forced close is harmless
  });

  it('drain() rejects waiting callers with CLOSED', async () => {
    const { pool } = await setup({ max: 1 });
    const held = await pool.acquire();
    const waiting = pool.acquire();
    const drained = pool.drain(50);
    expect(await codeOf(waiting)).toBe('CLOSED');
    pool.release(held);
    await drained;
  });

  it('backs off between failed creates and reports CONNECT_FAILED to every waiter', async () => {
    const { pool, control } = await setup({ createRetryBaseMs: 50, createRetryMaxMs: 200 });
    control.failCreates(Number.POSITIVE_INFINITY);
    const codes = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()].map(codeOf));
    expect(codes).toEqual(['CONNECT_FAILED', 'CONNECT_FAILED', 'CONNECT_FAILED']);
    const afterFirst = control.createAttempts;
    await sleep(500);
    // 50 + 100 + 200 + 200 ms of back-off per pending slot: a handful of attempts, not thousands.
    expect(control.createAttempts - afterFirst).toBeLessThanOrEqual(15);
  });

  it('a validate that throws destroys the session instead of wedging the pool', async () => {
    const plugin = createMemoryPlugin();
    const real = await plugin.createDriver(
      { database: 'memory' },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    let mode: 'ok' | 'throw' = 'ok';
    const driver = {
      async createSession(): Promise<ConnectorSession> {
        const session = await real.createSession();
        return {
          execute: (q, o) => session.execute(q, o),
          close: () => session.close(),
          validate: async () => {
            if (mode === 'throw') throw new Error('validate blew up');
            return true;
          },
        };
      },
    };
    const pool = createSessionPool(driver, { ...DEFAULT_POOL_OPTIONS }, noopLogger);
    pools.push(pool);
    const a = await pool.acquire();
    pool.release(a);
    mode = 'throw';
    const b = await pool.acquire();
    expect(b).not.toBe(a);
    pool.release(b);
  });
});

describe('createSessionPool: the idle fast lane', () => {
  /** Memory sessions whose validate() answers synchronously, as the real connectors' do. */
  async function syncSetup(options: Partial<PoolOptions> = {}) {
    const plugin = createMemoryPlugin();
    const real = await plugin.createDriver(
      { database: 'memory' },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    const healthy = new Map<ConnectorSession, boolean>();
    let validates = 0;
    const driver = {
      async createSession(): Promise<ConnectorSession> {
        const inner = await real.createSession();
        const session: ConnectorSession = {
          execute: (q, o) => inner.execute(q, o),
          close: () => inner.close(),
          validate: () => {
            validates++;
            return healthy.get(session) ?? true;
          },
        };
        return session;
      },
    };
    const pool = createSessionPool(driver, { ...DEFAULT_POOL_OPTIONS, ...options }, noopLogger);
    pools.push(pool);
    return { pool, control: plugin.control, healthy, validates: () => validates };
  }

  it('checks an idle session synchronously on borrow and replaces one that reports unhealthy', async () => {
    const { pool, control, healthy, validates } = await syncSetup();
    const a = await pool.acquire();
    pool.release(a);
    const again = await pool.acquire();
    expect(again).toBe(a);
    expect(validates()).toBe(1);
    pool.release(again);
    healthy.set(a, false);
    const b = await pool.acquire();
    expect(b).not.toBe(a);
    await sleep(0);
    expect(control.sessions[0]?.closed).toBe(true);
    expect(pool.stats()).toMatchObject({ total: 1, busy: 1, idle: 0, created: 2, destroyed: 1 });
    pool.release(b);
  });

  it('calls a lazy signal only when the caller has to wait, and honours it then', async () => {
    const { pool } = await syncSetup({ max: 1 });
    let asked = 0;
    const controller = new AbortController();
    const lazy = () => {
      asked++;
      return controller.signal;
    };
    // Opening the first session means waiting: the signal is asked for.
    const first = await pool.acquire(lazy);
    expect(asked).toBe(1);
    pool.release(first);
    asked = 0;
    const idle = await pool.acquire(lazy);
    expect(idle).toBe(first);
    expect(asked).toBe(0);
    const waiting = pool.acquire(lazy);
    expect(asked).toBe(1);
    controller.abort();
    expect(await codeOf(waiting)).toBe('QUERY_ABORTED');
    // The abandoned request still sits in generic-pool's queue: the session passes through it
    // and comes back idle, not lost.
    pool.release(idle);
    await sleep(0);
    expect(pool.stats()).toMatchObject({ total: 1, idle: 1, busy: 0, waiting: 0 });
    const next = await pool.acquire();
    expect(next).toBe(first);
    pool.release(next);
  });

  it('closes a session that served queries once it sits idle past idleTimeoutMs', async () => {
    const { pool, control } = await syncSetup({ idleTimeoutMs: 100 });
    const a = await pool.acquire();
    const b = await pool.acquire();
    pool.release(a);
    pool.release(b);
    expect(pool.stats()).toMatchObject({ total: 2, idle: 2 });
    await sleep(450);
    expect(control.sessions.every((s) => s.closed)).toBe(true);
    expect(pool.stats()).toMatchObject({ total: 0, idle: 0, destroyed: 2 });
    // The pool still works afterwards.
    const c = await pool.acquire();
    expect(control.sessions).toHaveLength(3);
    pool.release(c);
  });

  it('hands a released session to a caller already queued instead of parking it', async () => {
    const { pool } = await syncSetup({ max: 1 });
    const held = await pool.acquire();
    const queued = pool.acquire();
    await sleep(0);
    pool.release(held);
    expect(await queued).toBe(held);
    expect(pool.stats()).toMatchObject({ busy: 1, idle: 0, waiting: 0 });
    pool.release(held);
    expect(pool.stats()).toMatchObject({ busy: 0, idle: 1 });
  });

  it('drain() closes parked sessions too', async () => {
    const { pool, control } = await syncSetup();
    pool.release(await pool.acquire());
    await pool.drain(0);
    expect(control.sessions[0]?.closed).toBe(true);
    expect(pool.stats()).toMatchObject({ total: 0, idle: 0, destroyed: 1 });
  });
});

describe('createSessionPool: callers waiting while every session is lent', () => {
  it('serves them first come, first served as sessions come back, and never opens more than max', async () => {
    const { pool, control } = await setup({ max: 2 });
    const held = [await pool.acquire(), await pool.acquire()];
    const order: number[] = [];
    const queued = [0, 1, 2, 3].map((i) =>
      pool.acquire().then((session) => {
        order.push(i);
        return session;
      }),
    );
    await sleep(0);
    expect(pool.stats()).toMatchObject({ waiting: 4, busy: 2 });
    pool.release(held[1]!);
    pool.release(held[0]!);
    const first = await Promise.all([queued[0]!, queued[1]!]);
    expect(first).toEqual([held[1], held[0]]);
    for (const session of first) pool.release(session);
    for (const session of await Promise.all([queued[2]!, queued[3]!])) pool.release(session);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(control.sessions).toHaveLength(2);
    expect(pool.stats()).toMatchObject({ waiting: 0, busy: 0, total: 2 });
  });

  it('fails a caller with POOL_EXHAUSTED once acquireTimeoutMs passed, and serves the next one', async () => {
    const { pool } = await setup({ max: 1, acquireTimeoutMs: 80 });
    const held = await pool.acquire();
    const started = Date.now();
    const late = pool.acquire();
    expect(await codeOf(late)).toBe('POOL_EXHAUSTED');
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(pool.stats().waiting).toBe(0);
    const next = pool.acquire();
    pool.release(held);
    expect(await next).toBe(held);
    pool.release(held);
  });

  it('opens a new session for a waiting caller when a lent one is released broken', async () => {
    const { pool, control } = await setup({ max: 1 });
    const held = await pool.acquire();
    const waiting = pool.acquire();
    await sleep(0);
    pool.release(held, new Error('broken'));
    const fresh = await waiting;
    expect(fresh).not.toBe(held);
    expect(control.sessions).toHaveLength(2);
    expect(control.sessions[0]?.closed).toBe(true);
    expect(pool.stats()).toMatchObject({ total: 1, busy: 1, waiting: 0 });
    pool.release(fresh);
  });

  it('refuses a caller past maxWaiting with POOL_EXHAUSTED', async () => {
    const { pool } = await setup({ max: 1, maxWaiting: 2 });
    const held = await pool.acquire();
    const queued = [pool.acquire(), pool.acquire()];
    expect(await codeOf(pool.acquire())).toBe('POOL_EXHAUSTED');
    pool.release(held);
    pool.release(await queued[0]!);
    pool.release(await queued[1]!);
  });

  it('an aborted caller leaves the queue: the session goes to the one behind it', async () => {
    const { pool } = await setup({ max: 1 });
    const held = await pool.acquire();
    const controller = new AbortController();
    const gone = pool.acquire(controller.signal);
    const next = pool.acquire();
    controller.abort();
    expect(await codeOf(gone)).toBe('QUERY_ABORTED');
    pool.release(held);
    expect(await next).toBe(held);
    pool.release(held);
    expect(pool.stats()).toMatchObject({ waiting: 0, busy: 0, idle: 1 });
  });
});
