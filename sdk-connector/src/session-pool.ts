// The session pool every connector gets, on generic-pool. It adds what generic-pool leaves to
// its users: a session released with an error is destroyed, never reused; failed creates back
// off exponentially and reject waiting callers with CONNECT_FAILED instead of spinning (a create
// that fails without I/O would otherwise loop and leave acquire() pending forever); acquire()
// honours an AbortSignal; drain() is idempotent and closes busy sessions after a grace period.
//
// A fast lane sits in front of generic-pool, because its dispatch costs a Deferred, an
// acquire-timeout timer, a loan and a validate promise chain per borrow, which on a loopback
// warehouse was most of the runtime's per-query cost. A session released cleanly while nobody
// waits in generic-pool's queue goes onto our own LIFO idle stack instead (generic-pool still
// counts it as borrowed, so `max` stays exact); acquire() pops from that stack after a
// synchronous validate(), without timers. Callers who must wait while the pool is full queue in
// a handoff queue of ours, and a release hands its session to the first of them directly;
// callers queued in generic-pool (while sessions were still being opened) are served through
// it first. Sessions idle on the stack past `idleTimeoutMs` are destroyed by a cheap
// unref'd interval; generic-pool keeps doing creation, limits, queueing, acquire timeouts and the
// eviction of sessions idle in its own list.
//
// generic-pool cannot withdraw a queued request. When we settle a caller early (abort, create
// failure, close), its request stays queued as an "orphan" until it times out or is served; a
// session served to an orphan goes straight back to the pool (or is destroyed once closed).
import { createPool, type Pool } from 'generic-pool';
import { ConnectorError, isConnectorError, redactSecrets } from './connector-error.js';
import type { ConnectorDriver, ConnectorLogger, ConnectorSession } from './connector-plugin.js';
import type { PoolOptions, PoolStats } from './connector-pool.js';

/** Defaults for every {@link PoolOptions} field, as documented there. */
export const DEFAULT_POOL_OPTIONS: Readonly<PoolOptions> = Object.freeze({
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

/** Sessions for one connector: borrow, return, count, close. */
export interface SessionPool {
  /**
   * Borrows a session, creating one if there is room. Rejects with POOL_EXHAUSTED (acquire
   * timeout, wait queue full), CONNECT_FAILED (creates failing), QUERY_ABORTED (`signal`
   * aborted) or CLOSED. Always settles.
   *
   * `signal` may also be a function returning the signal: it is called only when the caller has
   * to wait (an idle session is handed out without it), so a signal can be created on demand.
   */
  acquire(signal?: AbortSignal | (() => AbortSignal)): Promise<ConnectorSession>;
  /** Returns a borrowed session; with an `error` the session is destroyed, never reused. */
  release(session: ConnectorSession, error?: unknown): void;
  /** True when this borrowed session served an earlier borrow (it sat idle in the pool). */
  wasIdle(session: ConnectorSession): boolean;
  /** Live counters. */
  stats(): PoolStats;
  /**
   * Refuses new borrows (CLOSED), rejects waiting callers, waits up to `graceMs` (default 5,000)
   * for borrowed sessions to come back, closes every session and calls `driver.destroy()`.
   * Idempotent: later calls return the same promise.
   */
  drain(graceMs?: number): Promise<void>;
}

/**
 * The pool as createConnector uses it: `acquireNow` hands out an idle session synchronously, so
 * the common query pays no promise turn for its borrow. Not part of the package's named exports.
 */
export interface RuntimeSessionPool extends SessionPool {
  /** Like `acquire`, but returns the session itself when an idle one passes its synchronous check. */
  acquireNow(signal?: AbortSignal | (() => AbortSignal)): ConnectorSession | Promise<ConnectorSession>;
}

/** What the pool knows about one open session. */
interface SessionState {
  /** Times handed out; above 1 means it sat idle in the pool before this borrow. */
  borrows: number;
  /** A caller holds it now. */
  lent: boolean;
  /** Opened in the current event-loop turn. */
  fresh: boolean;
}

function settle(state: SessionState): void {
  state.fresh = false;
}

interface Waiter {
  settled: boolean;
  resolve(session: ConnectorSession): void;
  reject(error: ConnectorError): void;
}

/**
 * A caller in the handoff queue (see `handoffs`). It is its own abort listener (EventTarget calls
 * `handleEvent`), so waiting costs no closure.
 */
class Handoff implements Waiter {
  settled = false;
  constructor(
    readonly resolve: (session: ConnectorSession) => void,
    readonly reject: (error: ConnectorError) => void,
    /** performance.now() time past which it fails with POOL_EXHAUSTED. */
    readonly deadline: number,
    readonly signal: AbortSignal | undefined,
    private readonly aborted: (waiter: Handoff) => void,
  ) {}

  handleEvent(): void {
    this.aborted(this);
  }
}

/** Stands in for a session once the pool is closed, so queued orphans settle without I/O. */
const DEAD_SESSION: ConnectorSession = {
  execute: () => Promise.reject(new ConnectorError('CLOSED', 'session pool is closed')),
  close: () => Promise.resolve(),
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The signal behind `acquire`'s argument; a function is only called here, on the slow path. */
function signalOf(signal: AbortSignal | (() => AbortSignal) | undefined): AbortSignal | undefined {
  return typeof signal === 'function' ? signal() : signal;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function errorText(error: unknown): string {
  return redactSecrets(error instanceof Error ? error.message : String(error));
}

function toConnectFailed(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  return new ConnectorError('CONNECT_FAILED', 'could not open a session to the warehouse', {
    cause: error,
    ...(typeof code === 'string' || typeof code === 'number' ? { driverCode: String(code) } : {}),
  });
}

/**
 * `driver.createSession()`, failed with CONNECT_FAILED once `timeoutMs` passed (a warehouse that
 * accepts the connection and then says nothing would otherwise hold the open forever, whatever
 * the driver's own connect timeout covers). A session that arrives late is closed.
 */
function openWithin(
  driver: ConnectorDriver,
  timeoutMs: number,
  logger: ConnectorLogger,
): Promise<ConnectorSession> {
  const opening = driver.createSession();
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) return opening;
  return new Promise<ConnectorSession>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new ConnectorError('CONNECT_FAILED', `opening a session took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    opening.then(
      (session) => {
        clearTimeout(timer);
        if (!late) return resolve(session);
        session
          .close()
          .catch((error: unknown) => logger.warn({ err: errorText(error) }, 'closing a late session failed'));
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}

/**
 * Creates the session pool for one driver. `options` should be complete (merge over
 * {@link DEFAULT_POOL_OPTIONS}); missing fields take those defaults.
 */
export function createSessionPool(
  driver: ConnectorDriver,
  options: Partial<PoolOptions>,
  logger: ConnectorLogger,
): RuntimeSessionPool {
  const opts: PoolOptions = { ...DEFAULT_POOL_OPTIONS, ...options };
  const closeController = new AbortController();
  const waiters = new Set<Waiter>();
  /** Every open session (for drain); per-session state lives in `states`, not in Sets on the hot path. */
  const known = new Set<ConnectorSession>();
  const states = new WeakMap<ConnectorSession, SessionState>();
  /** Sessions callers hold now (not parked). */
  let lent = 0;
  let closed = false;
  let drained: Promise<void> | undefined;
  let consecutiveFailures = 0;
  let creating = 0;
  let open = 0;
  let created = 0;
  let destroyed = 0;

  /** The fast lane: sessions released cleanly, newest last (LIFO keeps the warmest one busy). */
  const parked: ConnectorSession[] = [];
  /** The eviction tick at which each parked session was parked (a counter, cheaper than a clock). */
  const parkedAt: number[] = [];
  let tick = 0;

  /** The acquire timeout, when there is one. */
  const acquireTimeoutMs =
    opts.acquireTimeoutMs > 0 && Number.isFinite(opts.acquireTimeoutMs) ? opts.acquireTimeoutMs : undefined;
  const validateTimeoutMs = Math.min(opts.acquireTimeoutMs > 0 ? opts.acquireTimeoutMs : 5_000, 5_000);
  const idleEviction = Number.isFinite(opts.idleTimeoutMs) && opts.idleTimeoutMs > 0;
  const evictionIntervalMs = Math.max(50, Math.min(Math.floor(opts.idleTimeoutMs / 2), 10_000));

  /** Runs session.validate() with a time limit; a throw, a rejection or a hang counts as unhealthy. */
  function validateWithTimeout(result: Promise<boolean>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      result,
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), validateTimeoutMs);
      }),
    ]).then(
      (ok) => {
        clearTimeout(timer);
        return ok !== false;
      },
      () => {
        clearTimeout(timer);
        return false;
      },
    );
  }

  function justOpened(session: ConnectorSession): boolean {
    const state = states.get(session);
    return state === undefined || (state.borrows === 0 && state.fresh);
  }

  /**
   * Runs `session.validate()`: a boolean when the session answers synchronously (the cheap path
   * the fast lane relies on), a promise only for sessions whose validate() is async.
   */
  function validateNow(session: ConnectorSession): boolean | Promise<boolean> {
    if (session.validate === undefined) return true;
    let result: boolean | Promise<boolean>;
    try {
      result = session.validate();
    } catch {
      return false;
    }
    return isThenable(result) ? validateWithTimeout(Promise.resolve(result)) : result !== false;
  }

  const pool: Pool<ConnectorSession> = createPool<ConnectorSession>(
    {
      async create() {
        if (closed) return DEAD_SESSION;
        if (consecutiveFailures > 0) {
          const delay = Math.min(
            opts.createRetryBaseMs * 2 ** (consecutiveFailures - 1),
            opts.createRetryMaxMs,
          );
          await sleep(delay, closeController.signal);
          if (closed) return DEAD_SESSION;
        }
        creating++;
        let session: ConnectorSession;
        try {
          session = await openWithin(driver, opts.connectTimeoutMs, logger);
        } catch (error) {
          consecutiveFailures++;
          throw toConnectFailed(error);
        } finally {
          creating--;
        }
        consecutiveFailures = 0;
        if (closed) {
          await session.close().catch(() => undefined);
          return DEAD_SESSION;
        }
        open++;
        created++;
        known.add(session);
        const state: SessionState = { borrows: 0, lent: false, fresh: true };
        states.set(session, state);
        // generic-pool validates a new session before handing it to the waiter it was opened
        // for, in this same turn; later, an unborrowed one has sat idle and gets checked.
        setImmediate(settle, state);
        return session;
      },
      async destroy(session) {
        if (session === DEAD_SESSION) return;
        open--;
        destroyed++;
        known.delete(session);
        try {
          await session.close();
        } catch (error) {
          logger.warn({ err: errorText(error) }, 'closing a session failed');
        }
      },
      validate(session) {
        // A session opened a moment ago for this very borrow needs no check, and with a validate()
        // that always fails it would loop create → validate → destroy forever. One that sat idle
        // since it was opened (its waiter was served by another) is checked like any other.
        if (session === DEAD_SESSION || session.validate === undefined || justOpened(session))
          return Promise.resolve(true);
        // generic-pool leaves a rejected validate unhandled and a hung one in test forever.
        return Promise.resolve(validateNow(session));
      },
    },
    {
      min: opts.min,
      max: opts.max,
      ...(acquireTimeoutMs !== undefined ? { acquireTimeoutMillis: acquireTimeoutMs } : {}),
      maxWaitingClients: opts.maxWaiting,
      testOnBorrow: opts.validateOnBorrow,
      ...(idleEviction
        ? {
            idleTimeoutMillis: opts.idleTimeoutMs,
            evictionRunIntervalMillis: Math.max(50, Math.min(Math.floor(opts.idleTimeoutMs / 2), 10_000)),
            numTestsPerEvictionRun: opts.max,
          }
        : {}),
    },
  );

  pool.on('factoryCreateError', (error: unknown) => {
    const failure = toConnectFailed(error);
    logger.warn(
      { err: errorText(failure.cause ?? failure), driverCode: failure.driverCode, consecutiveFailures },
      'opening a warehouse session failed',
    );
    // The failed create was made for the oldest waiter: tell it. When nothing is open and no
    // other create is under way, no one can be served soon: fail every waiter fast.
    const everyone = open === 0 && creating === 0;
    for (const waiter of waiters) {
      settleReject(waiter, failure);
      if (!everyone) break;
    }
  });
  pool.on('factoryDestroyError', (error: unknown) => {
    logger.warn({ err: errorText(error) }, 'destroying a session failed');
  });
  pool.on('error', (error: unknown) => {
    logger.error({ err: errorText(error) }, 'session pool error');
  });

  function settleReject(waiter: Waiter, error: ConnectorError): void {
    if (waiter.settled) return;
    waiter.settled = true;
    waiters.delete(waiter);
    waiter.reject(error);
  }

  const timedOut = () =>
    new ConnectorError('POOL_EXHAUSTED', `no session became free within ${opts.acquireTimeoutMs} ms`);
  const tooManyWaiting = () =>
    new ConnectorError('POOL_EXHAUSTED', `too many callers waiting for a session (max ${opts.maxWaiting})`);

  function mapAcquireError(error: unknown): ConnectorError {
    if (isConnectorError(error)) return error;
    const name = (error as { name?: unknown } | null)?.name;
    const message = error instanceof Error ? error.message : '';
    if (name === 'TimeoutError') return timedOut();
    if (message.includes('max waitingClients')) return tooManyWaiting();
    if (closed || message.includes('draining')) return new ConnectorError('CLOSED', 'session pool is closed');
    return new ConnectorError('CONNECT_FAILED', 'could not obtain a session', { cause: error });
  }

  function giveBackOrphan(session: ConnectorSession): void {
    const done = closed || session === DEAD_SESSION ? pool.destroy(session) : pool.release(session);
    done.catch(() => undefined);
  }

  function giveBack(session: ConnectorSession): void {
    pool
      .release(session)
      .catch((e: unknown) => logger.warn({ err: errorText(e) }, 'returning a session failed'));
  }

  function destroyQuietly(session: ConnectorSession): void {
    pool
      .destroy(session)
      .catch((e: unknown) => logger.warn({ err: errorText(e) }, 'returning a session failed'));
  }

  function handOut(session: ConnectorSession): ConnectorSession {
    const state = states.get(session);
    if (state !== undefined) {
      state.borrows++;
      state.lent = true;
      lent++;
    }
    return session;
  }

  function park(session: ConnectorSession): void {
    parked.push(session);
    parkedAt.push(tick);
  }

  // Parked sessions are borrowed in generic-pool's eyes, so its evictor never sees them: close
  // the ones idle too long here, with the same granularity as generic-pool's own eviction runs.
  // Unref'd, so an idle pool never keeps the process alive.
  let evictionTimer: NodeJS.Timeout | undefined;
  if (idleEviction) {
    const idleTicks = Math.ceil(opts.idleTimeoutMs / evictionIntervalMs);
    evictionTimer = setInterval(() => {
      tick++;
      // Newest last: the stale ones are a prefix.
      let stale = 0;
      while (stale < parked.length && tick - parkedAt[stale]! >= idleTicks) stale++;
      if (stale === 0) return;
      parkedAt.splice(0, stale);
      for (const session of parked.splice(0, stale)) destroyQuietly(session);
    }, evictionIntervalMs);
    evictionTimer.unref();
  }

  /**
   * Callers waiting while the pool is full (`max` sessions open, none idle): a session
   * released cleanly goes straight to the first of them, without generic-pool's Deferred,
   * acquire-timeout timer and dispatch (those made a waiting borrow cost 5–6 µs more than an idle
   * one, 64 callers on 10 sessions; 1.6–1.7 µs now). Callers queued in generic-pool before the
   * pool filled are served first. First come, first served; settled ones are skipped when they
   * reach the head. One timer enforces the acquire timeout: every waiter has the same one, so
   * the head's deadline is the earliest.
   */
  const handoffs: Handoff[] = [];
  let handoffHead = 0;
  let handoffWaiting = 0;
  let handoffTimer: NodeJS.Timeout | undefined;

  /** Drops the queue's taken head (it never empties under steady saturation). */
  function compactHandoffs(): void {
    if (handoffHead === handoffs.length) {
      handoffs.length = 0;
      handoffHead = 0;
    } else if (handoffHead >= 1024 && handoffHead * 2 >= handoffs.length) {
      handoffs.splice(0, handoffHead);
      handoffHead = 0;
    }
  }

  /** The first waiter of the handoff queue still waiting, taken off it; undefined when none. */
  function nextHandoff(): Handoff | undefined {
    let found: Handoff | undefined;
    while (found === undefined && handoffHead < handoffs.length) {
      const waiter = handoffs[handoffHead++] as Handoff;
      if (!waiter.settled) found = waiter;
    }
    compactHandoffs();
    return found;
  }

  /** A waiter stops waiting in the queue (served, failed or moved to generic-pool). */
  function leaveHandoff(waiter: Handoff): void {
    waiter.settled = true;
    handoffWaiting--;
    waiter.signal?.removeEventListener('abort', waiter);
  }

  /** Settles a handoff waiter with a session or an error. */
  function settleHandoff(waiter: Handoff, outcome: ConnectorSession | ConnectorError): void {
    if (waiter.settled) return;
    leaveHandoff(waiter);
    if (outcome instanceof ConnectorError) waiter.reject(outcome);
    else waiter.resolve(handOut(outcome));
  }

  function armHandoffTimer(): void {
    if (handoffTimer !== undefined || acquireTimeoutMs === undefined) return;
    for (let i = handoffHead; i < handoffs.length; i++) {
      const waiter = handoffs[i] as Handoff;
      if (waiter.settled) continue;
      handoffTimer = setTimeout(expireHandoffs, Math.max(1, Math.ceil(waiter.deadline - performance.now())));
      handoffTimer.unref();
      return;
    }
  }

  /** Fails the waiters whose acquire timeout passed, and re-arms for the next one. */
  function expireHandoffs(): void {
    handoffTimer = undefined;
    const now = performance.now();
    while (handoffHead < handoffs.length) {
      const waiter = handoffs[handoffHead] as Handoff;
      // Timers may fire up to a millisecond early relative to performance.now().
      if (!waiter.settled && waiter.deadline > now + 1) break;
      handoffHead++;
      settleHandoff(waiter, timedOut());
    }
    compactHandoffs();
    armHandoffTimer();
  }

  /** Waits in the handoff queue for a session someone releases. */
  function waitForHandoff(signal: AbortSignal | undefined): Promise<ConnectorSession> {
    if (handoffWaiting + pool.pending >= opts.maxWaiting) {
      return Promise.reject(tooManyWaiting());
    }
    return new Promise<ConnectorSession>((resolve, reject) => {
      const waiter = new Handoff(
        resolve,
        reject,
        performance.now() + (acquireTimeoutMs ?? 0),
        signal,
        abortHandoff,
      );
      handoffs.push(waiter);
      handoffWaiting++;
      signal?.addEventListener('abort', waiter, { once: true });
      armHandoffTimer();
    });
  }

  function abortHandoff(waiter: Handoff): void {
    settleHandoff(waiter, new ConnectorError('QUERY_ABORTED', 'aborted while waiting for a session'));
  }

  /** A session's place freed (one was destroyed): the first handoff waiter borrows through generic-pool, which opens one. */
  function promoteHandoff(): void {
    const waiter = nextHandoff();
    if (waiter === undefined) return;
    leaveHandoff(waiter);
    viaGenericPool(waiter.signal).then(waiter.resolve, waiter.reject);
  }

  /** Borrows through generic-pool: creation, limits, the wait queue and acquire timeouts. */
  function acquireSlow(lazySignal: AbortSignal | (() => AbortSignal) | undefined): Promise<ConnectorSession> {
    const signal = signalOf(lazySignal);
    if (signal?.aborted) {
      return Promise.reject(new ConnectorError('QUERY_ABORTED', 'aborted before a session was free'));
    }
    // `max` sessions are open and none is idle in generic-pool (none is parked either, or the
    // fast lane would have taken it): only a release can serve this caller. With fewer open (one
    // opening, or opens failing) generic-pool opens one and reports its failures.
    if (open >= opts.max && pool.available === 0) return waitForHandoff(signal);
    return viaGenericPool(signal);
  }

  function viaGenericPool(signal: AbortSignal | undefined): Promise<ConnectorSession> {
    return new Promise<ConnectorSession>((resolve, reject) => {
      const onAbort = () =>
        settleReject(waiter, new ConnectorError('QUERY_ABORTED', 'aborted while waiting for a session'));
      const waiter: Waiter = {
        settled: false,
        resolve,
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      pool.acquire().then(
        (session) => {
          if (waiter.settled || session === DEAD_SESSION) {
            giveBackOrphan(session);
            if (!waiter.settled) settleReject(waiter, new ConnectorError('CLOSED', 'session pool is closed'));
            return;
          }
          waiter.settled = true;
          waiters.delete(waiter);
          signal?.removeEventListener('abort', onAbort);
          resolve(handOut(session));
        },
        (error: unknown) => settleReject(waiter, mapAcquireError(error)),
      );
    });
  }

  /** A parked session whose async validate() answered: hand it out, or drop it and try again. */
  async function acquireAfterCheck(
    session: ConnectorSession,
    check: Promise<boolean>,
    signal: AbortSignal | (() => AbortSignal) | undefined,
  ): Promise<ConnectorSession> {
    const ok = await check;
    if (closed) {
      destroyQuietly(session);
      throw new ConnectorError('CLOSED', 'session pool is closed');
    }
    if (!ok) {
      destroyQuietly(session);
      return acquire(signal);
    }
    if (signalOf(signal)?.aborted) {
      park(session);
      throw new ConnectorError('QUERY_ABORTED', 'aborted before a session was free');
    }
    return handOut(session);
  }

  /**
   * acquire() without the promise when the fast lane has a healthy session: the session itself,
   * else a promise from the slow path (or of an async validate()).
   */
  function acquireNow(
    signal?: AbortSignal | (() => AbortSignal),
  ): ConnectorSession | Promise<ConnectorSession> {
    if (closed) return Promise.reject(new ConnectorError('CLOSED', 'session pool is closed'));
    if (typeof signal === 'object' && signal.aborted) {
      return Promise.reject(new ConnectorError('QUERY_ABORTED', 'aborted before a session was free'));
    }
    // The fast lane: no timers, no generic-pool dispatch, no promise.
    for (let top = parked.pop(); top !== undefined; top = parked.pop()) {
      parkedAt.pop();
      const check = opts.validateOnBorrow ? validateNow(top) : true;
      if (check === true) return handOut(top);
      if (check === false) destroyQuietly(top);
      else return acquireAfterCheck(top, check, signal);
    }
    return acquireSlow(signal);
  }

  function acquire(signal?: AbortSignal | (() => AbortSignal)): Promise<ConnectorSession> {
    const got = acquireNow(signal);
    return got instanceof Promise ? got : Promise.resolve(got);
  }

  return {
    acquire,
    acquireNow,

    release(session, error) {
      // Unknown or already force-closed (drain) sessions: nothing to give back.
      const state = states.get(session);
      if (state === undefined || !state.lent) return;
      state.lent = false;
      lent--;
      if (error !== undefined || closed) {
        destroyQuietly(session);
        // Its place is free: a caller waiting for a release now needs a new session.
        if (!closed && handoffWaiting > 0) promoteHandoff();
      } else if (waiters.size === 0) {
        // Nobody waits in generic-pool's queue (orphans may sit there): to the first caller
        // waiting for a release, else parked for the next acquire(), else to the orphans.
        const waiter = handoffWaiting > 0 ? nextHandoff() : undefined;
        if (waiter !== undefined) settleHandoff(waiter, session);
        else if (pool.pending === 0) park(session);
        else giveBack(session);
      } else {
        // Callers are queued in generic-pool: it serves them first (they came before any caller
        // waiting for a release, who go there only once every session is lent).
        giveBack(session);
      }
    },

    wasIdle(session) {
      return (states.get(session)?.borrows ?? 0) > 1;
    },

    stats() {
      return {
        total: open,
        // generic-pool's clear() leaves destroyed sessions in its available count.
        idle: Math.max(0, Math.min(pool.available + parked.length, open - lent)),
        busy: lent,
        waiting: waiters.size + handoffWaiting,
        created,
        destroyed,
      };
    },

    drain(graceMs = 5_000) {
      if (drained) return drained;
      closed = true;
      closeController.abort();
      clearInterval(evictionTimer);
      parkedAt.length = 0;
      for (const session of parked.splice(0)) destroyQuietly(session);
      for (const waiter of [...waiters])
        settleReject(waiter, new ConnectorError('CLOSED', 'session pool is closed'));
      clearTimeout(handoffTimer);
      for (let waiter = nextHandoff(); waiter !== undefined; waiter = nextHandoff())
        settleHandoff(waiter, new ConnectorError('CLOSED', 'session pool is closed'));
      drained = (async () => {
        const graceController = new AbortController();
        await Promise.race([
          pool.drain().catch(() => undefined),
          graceMs > 0 ? sleep(graceMs, graceController.signal) : Promise.resolve(),
        ]);
        graceController.abort();
        // Whoever still holds a session after the grace period loses it.
        for (const session of [...known]) {
          const state = states.get(session);
          if (state === undefined || !state.lent) continue;
          state.lent = false;
          lent--;
          pool.destroy(session).catch(() => undefined);
        }
        await pool.clear().catch(() => undefined);
        try {
          await driver.destroy?.();
        } catch (error) {
          logger.warn({ err: errorText(error) }, 'destroying the driver failed');
        }
      })();
      return drained;
    },
  };
}
